// libFuzzer entry for the conv side of `poolgrad forward|backward --op convNd`: the input's first
// line is the weight's shape (K, C/groups, kernel... as a comma list; the kernel sizes reach the
// problem only through it), the other lines are the argument list. CLI11 with poolgrad's option
// table, the strict number and list parsing (parse_pool_numbers, parse_conv_args) and plan_conv
// against the weight header and --input-size (or a fixed input). Every outcome must be a valid
// plan or one InvalidInput / CLI11 parse error on one line; nothing may crash, overflow or throw
// anything else.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/parsers/command_line.hpp"
#include "src/harness/conv_plan.hpp"
#include "src/model/invalid_input.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/parse_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> lines = pg::fuzz::split_lines(data, size);
  pg::NpyHeader weight;
  weight.type = pg::NpyType::f32;
  try {
    weight.shape = pg::parse_int_list(lines[0], "weight shape");
  } catch (const pg::InvalidInput&) {
    weight.shape = {6, 2, 3, 3};
  }
  for (int64_t& v : weight.shape)
    if (v < 0) v = 0;  // an .npy header never holds a negative size (src/harness/npy.cpp refuses it)
  CLI::App app{"fuzz"};
  pg::PoolCommandOptions opts;
  const CLI::App* cmd = pg::fuzz::parse_command_line({lines.begin() + 1, lines.end()}, app, opts);
  if (!cmd || !pg::is_conv_op(opts.args.op)) return 0;  // pooling: fuzz/parsers/cli_fuzz.cpp
  try {
    pg::parse_pool_numbers(*cmd, opts);
    std::vector<int64_t> input = {2, 4, 7, 8};
    if (pg::option_given(*cmd, "--input-size")) input = pg::parse_int_list(opts.conv.input_size, "--input-size");
    const pg::ConvPlan plan = pg::plan_conv(pg::parse_conv_args(*cmd, opts), input, "--input-size", weight);
    if (!pg::conv_validate(plan.problem).empty()) __builtin_trap();  // plan_conv returns only valid problems
    for (int64_t v : plan.output_shape)
      if (v < 0) __builtin_trap();
  } catch (const pg::InvalidInput& e) {
    pg::fuzz::one_line_or_trap(e.what());
  }
  return 0;
}
