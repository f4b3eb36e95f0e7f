// The poolgrad command: version, devices, variants, check (the main job), replay.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>

#include "src/backend.hpp"
#include "src/check_set.hpp"
#include "src/conv_check_set.hpp"
#include "src/conv_registry.hpp"
#include "src/conv_verify.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "src/cli/commands.hpp"

namespace pg {
namespace {

const char* inputs_name(Inputs i) {
  switch (i) {
    case Inputs::dy_only: return "dy";
    case Inputs::dy_and_indices: return "dy+indices";
    case Inputs::dy_and_x: return "dy+x";
  }
  return "?";
}

int cmd_devices() {
  for (auto& b : all_backends()) {
    const DeviceInfo d = b->info();
    std::printf("%-6s %s  arch=%s  memory=%.1f GiB  wave=%d  units=%d\n", b->name().c_str(),
                d.name.c_str(), d.arch.c_str(), static_cast<double>(d.memory_bytes) / (1 << 30),
                d.wave_size, d.multiprocessors);
  }
  std::string why;
  if (gpu_count(&why) == 0) std::printf("(no GPU: %s)\n", why.c_str());
  return 0;
}

int cmd_variants() {
  if (variants().empty()) std::printf("(no variants registered)\n");
  for (const Variant& v : variants()) {
    std::printf("%-28s op=%s reads=%-10s %s backends=%s%s\n", v.name.c_str(), op_name(v.op),
                inputs_name(v.inputs), v.deterministic ? "deterministic" : "atomic       ",
                v.gpu_only ? "" : "cpu,", v.launch_gpu ? "gpu" : "(no gpu in this build)");
    std::printf("    domain: %s\n", v.domain.describe().c_str());
  }
  for (const ConvVariant& v : conv_variants()) {
    std::printf("%-28s op=conv reads=%-10s %s backends=%s%s\n", v.name.c_str(), "dy+w",
                v.deterministic ? "deterministic" : "atomic       ", v.gpu_only ? "" : "cpu,",
                v.launch_gpu ? "gpu" : "(no gpu in this build)");
    std::printf("    domain: %s\n", v.domain.describe().c_str());
  }
  return 0;
}

// One variant's row of the check table on one backend; returns its failures (a variant that
// could run here but ran no case counts as one).
template <class V, class Cases, class Run>
int check_rows(const V& v, Backend& b, const Cases& cases, bool verbose, int* passes, int* skips, const Run& run) {
  int pass = 0, fail = 0, unsupported = 0;
  std::string messages;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Support s = v.supports(cases[i].problem, b.kind());
    if (!s.ok) {
      ++unsupported;
      if (verbose) messages += "  unsupported: " + cases[i].label + ": " + s.why + "\n";
      continue;
    }
    const Outcome o = run(i);
    if (o.status == Status::pass) ++pass;
    else {
      ++fail;
      messages += "[" + cases[i].label + "] " + o.message + "\n";
    }
  }
  std::printf("%-30s %-6s %6d %6d %11d\n", v.name.c_str(), b.name().c_str(), pass, fail, unsupported);
  // A variant that ran nowhere was not checked: that is a failure, not a quiet pass.
  const bool runs_here = !(b.kind() == BackendKind::cpu && v.gpu_only);
  if (runs_here && pass == 0 && fail == 0) {
    ++fail;
    messages += "FAIL " + v.name + " on " + b.name() + ": no case of the check set is in its domain\n";
  }
  if (!messages.empty()) std::printf("%s", messages.c_str());
  *passes += pass;
  *skips += unsupported;
  return fail;
}

int cmd_check(const std::string& only_variant, bool verbose) {
  int failures = 0, passes = 0, skips = 0;
  auto backends = all_backends();
  std::string why;
  if (gpu_count(&why) == 0) std::printf("note: GPU backend not checked: %s\n", why.c_str());
  std::printf("%-30s %-6s %6s %6s %11s\n", "variant", "backend", "pass", "fail", "unsupported");
  const std::vector<CheckCase> cases = check_set();
  std::map<size_t, std::shared_ptr<const Expected>> expected;
  for (const Variant& v : variants()) {
    if (!only_variant.empty() && v.name != only_variant) continue;
    std::vector<CheckCase> mine;
    std::vector<size_t> index;
    for (size_t i = 0; i < cases.size(); ++i)
      if (cases[i].problem.op == v.op) {
        mine.push_back(cases[i]);
        index.push_back(i);
      }
    for (auto& b : backends)
      failures += check_rows(v, *b, mine, verbose, &passes, &skips, [&](size_t i) {
        const CheckCase& cc = mine[i];
        auto& e = expected[index[i]];
        if (!e) e = std::make_shared<const Expected>(compute_expected(cc.problem, cc.data));
        return run_and_verify(*b, v, cc.problem, cc.data, e);
      });
  }
  const std::vector<ConvCheckCase> conv_cases = conv_check_set();
  std::map<size_t, std::shared_ptr<const ConvExpected>> conv_expected;
  for (const ConvVariant& v : conv_variants()) {
    if (!only_variant.empty() && v.name != only_variant) continue;
    for (auto& b : backends)
      failures += check_rows(v, *b, conv_cases, verbose, &passes, &skips, [&](size_t i) {
        const ConvCheckCase& cc = conv_cases[i];
        auto& e = conv_expected[i];
        if (!e) e = std::make_shared<const ConvExpected>(compute_conv_expected(cc.problem, cc.data));
        return conv_run_and_verify(*b, v, cc.problem, cc.data, e);
      });
  }
  std::printf("%d passed, %d failed, %d unsupported (%zu pooling cases x %zu variants + %zu conv cases x %zu variants, x %zu backends)\n",
              passes, failures, skips, cases.size(), variants().size(), conv_cases.size(), conv_variants().size(),
              backends.size());
  if (variants().empty() && conv_variants().empty()) {
    std::printf("no variants registered: nothing was checked\n");
    return 1;
  }
  return failures ? 1 : 0;
}

// The backend named `backend_name`, or null with the reason printed.
std::unique_ptr<Backend> replay_backend(const std::string& backend_name) {
  for (auto& b : all_backends())
    if (b->name() == backend_name) return std::move(b);
  std::string why;
  gpu_count(&why);
  std::fprintf(stderr, "poolgrad replay: --backend '%s' not available (%s)\n", backend_name.c_str(), why.c_str());
  return nullptr;
}

int report_replay(const Outcome& o, const std::string& variant, const Backend& b, const std::string& problem) {
  if (o.status == Status::pass) std::printf("PASS %s on %s\n  problem: %s\n", variant.c_str(), b.name().c_str(), problem.c_str());
  else std::printf("%s\n", o.message.c_str());
  return o.status == Status::pass ? 0 : 1;
}

// A conv problem line (op=conv1d|conv2d|conv3d ...) from a conv failure.
int replay_conv(const std::string& problem_text, const DataSpec& spec, const std::string& variant,
                const std::string& backend_name) {
  ConvProblem p;
  std::string error;
  if (!parse_conv_problem(problem_text, &p, &error) || !(error = conv_validate(p)).empty()) {
    std::fprintf(stderr, "poolgrad replay: %s\n", error.c_str());
    return 2;
  }
  if (!conv_data_kind_ok(spec.kind)) {
    std::fprintf(stderr, "poolgrad replay: --data must be ints or real for a conv problem, got '%s'\n",
                 data_kind_name(spec.kind));
    return 2;
  }
  const ConvVariant* v = find_conv_variant(variant);
  if (!v) {
    std::fprintf(stderr, "poolgrad replay: --variant '%s' is not a registered conv variant (see poolgrad variants)\n",
                 variant.c_str());
    return 2;
  }
  const auto b = replay_backend(backend_name);
  if (!b) return 2;
  return report_replay(conv_run_and_verify(*b, *v, p, spec), v->name, *b, conv_to_string(p));
}

int cmd_replay(const std::string& problem_text, const std::string& kind, uint64_t seed,
               const std::string& variant, const std::string& backend_name) {
  DataSpec spec{seed, DataKind::ints};
  if (!parse_data_kind(kind, &spec.kind)) {
    std::fprintf(stderr, "poolgrad replay: --data must be ints, special, real or foreign, got '%s'\n", kind.c_str());
    return 2;
  }
  if (problem_text.rfind("op=conv", 0) == 0) return replay_conv(problem_text, spec, variant, backend_name);
  Problem p;
  std::string error;
  if (!parse_problem(problem_text, &p, &error) || !(error = validate(p)).empty()) {
    std::fprintf(stderr, "poolgrad replay: %s\n", error.c_str());
    return 2;
  }
  const Variant* v = find_variant(variant);
  if (!v) {
    std::fprintf(stderr, "poolgrad replay: --variant '%s' is not registered (see poolgrad variants)\n", variant.c_str());
    return 2;
  }
  const auto b = replay_backend(backend_name);
  if (!b) return 2;
  return report_replay(run_and_verify(*b, *v, p, spec), v->name, *b, to_string(p));
}

}  // namespace
}  // namespace pg

int main(int argc, char** argv) {
  CLI::App app{"poolgrad: reference-and-fuzz correctness harness for pooling-backward kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("poolgrad ") + POOLGRAD_VERSION);

  app.add_subcommand("devices", "the CPU backend and each GPU found");
  app.add_subcommand("variants", "every registered kernel variant");
  auto* check = app.add_subcommand("check", "every variant x the built-in problem set x every backend, against the oracle");
  std::string only;
  bool verbose = false;
  check->add_option("--variant", only, "check only this variant");
  check->add_flag("-v,--verbose", verbose, "say why each unsupported case is skipped");

  auto* replay = app.add_subcommand("replay", "rerun one case from the line a failure printed");
  std::string problem_text, kind = "ints", variant, backend = "cpu";
  uint64_t seed = 1;
  replay->add_option("--problem", problem_text, "the problem line")->required();
  replay->add_option("--data", kind, "ints, special, real or foreign (conv: ints or real)");
  replay->add_option("--seed", seed, "data seed");
  replay->add_option("--variant", variant, "variant name")->required();
  replay->add_option("--backend", backend, "cpu or gpuN");

  pg::PoolCommandOptions pool_opts;
  pg::add_pool_commands(app, pool_opts);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("devices")) return pg::cmd_devices();
    if (app.got_subcommand("variants")) return pg::cmd_variants();
    if (app.got_subcommand("check")) return pg::cmd_check(only, verbose);
    if (app.got_subcommand("replay")) return pg::cmd_replay(problem_text, kind, seed, variant, backend);
    return pg::run_pool_command(app, pool_opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "poolgrad: %s\n", e.what());
    return 1;
  }
}
