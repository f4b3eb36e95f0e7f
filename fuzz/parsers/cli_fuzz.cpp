// libFuzzer entry for CLI option parsing: the input, split at newlines, is the argument list of
// `poolgrad forward` or `backward` (CLI11 with poolgrad's option table, then the strict number
// and list parsing and plan_pool against a fixed input header). Every outcome must be a plan or
// one InvalidInput / CLI11 parse error; nothing may crash, overflow or throw anything else.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/invalid_input.hpp"
#include "src/pool_plan.hpp"
#include "src/cli/commands.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"poolgrad"};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  args.push_back(cur);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());

  CLI::App app{"fuzz"};
  app.require_subcommand(1);
  pg::PoolCommandOptions opts;
  pg::add_pool_commands(app, opts);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return 0;
  }
  const CLI::App* cmd = opts.forward->parsed() ? opts.forward : opts.backward;
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
