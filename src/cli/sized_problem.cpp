// The problem options of `poolgrad bench` and `poolgrad select --explain`: forward/backward's,
// with the input described by its size and dtype.
#include "bench/bench_problem.hpp"
#include "src/cli/commands.hpp"
#include "src/model/invalid_input.hpp"
#include "src/cli/parse_options.hpp"

namespace pg {
namespace {

DType parse_dtype(const std::string& name) {
  if (name == "float32" || name == "f32") return DType::f32;
  if (name == "float16" || name == "f16") return DType::f16;
  if (name == "bfloat16" || name == "bf16") return DType::bf16;
  if (name == "float64" || name == "f64") return DType::f64;
  throw InvalidInput("--dtype = " + name + " must be float32, float16, bfloat16 or float64");
}

}  // namespace

void add_sized_problem_options(CLI::App* cmd, SizedProblemOptions& o) {
  add_problem_options(cmd, o.pool);
  // Optional here: without --op the command works on a suite or a report.
  cmd->get_option("--op")->required(false);
  cmd->add_option("--input-size", o.input_size, "N,C,spatial... (in this order whatever the layout)");
  cmd->add_option("--dtype", o.dtype, "float32 (default), float16, bfloat16 or float64");
}

bool sized_problem_given(const CLI::App* cmd) { return cmd->count("--op") > 0; }

Problem sized_problem(const CLI::App* cmd, SizedProblemOptions& o) {
  if (is_conv_op(o.pool.args.op))
    throw InvalidInput("--op = " + o.pool.args.op + ": bench and select time pooling variants (conv has conv_bench)");
  parse_pool_numbers(*cmd, o.pool);
  if (!cmd->count("--input-size")) throw InvalidInput("--input-size is required with --op (N,C,spatial...)");
  return bench::bench_problem(o.pool.args, parse_int_list(o.input_size, "--input-size"), parse_dtype(o.dtype));
}

}  // namespace pg
