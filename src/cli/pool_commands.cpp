// `poolgrad forward` and `poolgrad backward`: checks first, then the oracle or a variant, then
// the outputs committed together. A conv --op goes to conv_commands.cpp.
#include <cstdio>

#include "bench/tune.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/harness/host_memory.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/output_file.hpp"
#include "src/harness/pool_run.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/exit_codes.hpp"

namespace pg {
namespace {

// Every check first (options, paths, headers, memory), then the payloads, then both outputs
// committed together: an error at any step leaves every existing file as it was.
// backward --variant auto --tune: the find step on this problem and backend (bench/tune.hpp), unless
// the perf-db already has it; then auto takes the perf-db's choice.
void tune_unless_known(const Problem& p, const std::string& backend_name) {
  const std::unique_ptr<Backend> b = backend_by_name(backend_name);
  if (choose_auto_variant(p, b->kind(), b->info()).tuned) return;
  bench::tune_and_record(*b, p, {}, current_perfdb_path());
}

int forward(PoolCommandOptions& o) {
  if (o.args.variant != "oracle")
    throw InvalidInput("--variant = " + o.args.variant + ": forward runs the oracle only (variants are backward kernels)");
  std::vector<NamedPath> outputs = {{"--output", o.output}};
  if (!o.indices_output.empty()) outputs.push_back({"--indices-output", o.indices_output});
  check_paths({{"--input", o.input}}, outputs);
  const PoolPlan plan = plan_pool(o.args, read_npy_header(o.input));
  if (!o.indices_output.empty() && plan.problem.op != Op::max)
    throw InvalidInput("--indices-output applies to max_pool only");
  require_host_memory(pool_host_bytes(plan, false), "forward of " + to_string(plan.problem));
  const ForwardResult r = pool_forward(plan, read_npy(o.input));
  OutputCommit commit;
  commit.stage(outputs[0], format_npy(r.output));
  if (!o.indices_output.empty()) commit.stage(outputs[1], format_npy(r.indices));
  commit.commit();
  return kExitOk;
}

int backward(PoolCommandOptions& o) {
  std::vector<NamedPath> inputs = {{"--input", o.input}, {"--grad-output", o.grad_output}};
  if (!o.indices.empty()) inputs.push_back({"--indices", o.indices});
  check_paths(inputs, {{"--output", o.output}});
  const PoolPlan plan = plan_pool(o.args, read_npy_header(o.input));
  check_grad_output(plan, read_npy_header(o.grad_output));
  if (!o.indices.empty()) check_indices(plan, read_npy_header(o.indices));
  require_host_memory(pool_host_bytes(plan, o.args.variant != "oracle"), "backward of " + to_string(plan.problem));
  if (o.tune) tune_unless_known(plan.problem, o.backend);
  const NpyArray x = read_npy(o.input), dy = read_npy(o.grad_output);
  NpyArray indices;
  if (!o.indices.empty()) indices = read_npy(o.indices);
  const NpyArray dx = pool_backward(plan, o.args.variant, x, dy, o.indices.empty() ? nullptr : &indices, o.backend);
  write_file_atomically({"--output", o.output}, format_npy(dx));
  return kExitOk;
}

int run(const CLI::App& cmd, PoolCommandOptions& o) {
  parse_pool_numbers(cmd, o);
  if (is_conv_op(o.args.op)) {
    if (o.tune || !o.perfdb.empty()) throw InvalidInput(std::string(o.tune ? "--tune" : "--perfdb") + " applies to pooling (conv's auto takes the first variant that supports the problem)");
    return run_conv_command(cmd, o);
  }
  refuse_conv_options(cmd, o.args.op);
  if (o.tune && o.args.variant != "auto") throw InvalidInput("--tune goes with --variant auto");
  set_perfdb_file(o.perfdb);
  if (o.tune) check_perfdb_writable(current_perfdb_path());
  set_selection_file(o.selection);
  if (o.input.empty()) throw InvalidInput("--input is required");
  return &cmd == o.forward ? forward(o) : backward(o);
}

}  // namespace

int run_pool_command(PoolCommandOptions& opts) {
  if (opts.forward->parsed()) return run_command("forward", [&] { return run(*opts.forward, opts); });
  return run_command("backward", [&] { return run(*opts.backward, opts); });
}

}  // namespace pg
