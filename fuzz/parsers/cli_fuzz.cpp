// libFuzzer entry for CLI option parsing: the input, split at newlines, is the argument list of
// `poolgrad forward` or `backward` (CLI11 with poolgrad's option table, then the strict number
// and list parsing and plan_pool against a fixed input header). Every outcome must be a plan or
// one InvalidInput / CLI11 parse error; nothing may crash, overflow or throw anything else.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/invalid_input.hpp"
#include "src/harness/pool_plan.hpp"
#include "fuzz/parsers/command_line.hpp"
#include "src/cli/commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> args = pg::fuzz::split_lines(data, size);
  CLI::App app{"fuzz"};
  pg::PoolCommandOptions opts;
  const CLI::App* cmd = pg::fuzz::parse_command_line(args, app, opts);
  if (!cmd) return 0;
  try {
    pg::parse_pool_numbers(*cmd, opts);
    const std::string& op = opts.args.op;
    const int dims = op.size() == 10 && op[8] >= '1' && op[8] <= '3' ? op[8] - '0' : 2;
    pg::NpyHeader input;
    input.type = pg::NpyType::f32;
    input.shape = {2, 3, 5, 6, 7};
    input.shape.resize(static_cast<size_t>(dims + 2));
    const pg::PoolPlan plan = pg::plan_pool(opts.args, input);
    if (!pg::validate(plan.problem).empty()) __builtin_trap();  // plan_pool returns only valid problems
  } catch (const pg::InvalidInput& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) __builtin_trap();
  }
  return 0;
}
