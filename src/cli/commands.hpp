// `poolgrad forward` and `poolgrad backward`: one pooling problem on .npy files.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "src/pool_plan.hpp"

namespace pg {

struct PoolCommandOptions {
  CLI::App* forward = nullptr;
  CLI::App* backward = nullptr;
  PoolArgs args;
  // Numbers and lists as given, parsed strictly (src/cli/parse_options.hpp) into args.
  std::string kernel_size, stride, padding, pads, dilation, divisor_override;
  std::string count_include_pad;  // "true" or "false"; unset: the profile's default
  std::string input, grad_output, indices, output, indices_output;
};

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts);

// Fills opts.args from the number and list options `cmd` (forward or backward) was given,
// strictly; throws InvalidInput naming the option.
void parse_pool_numbers(const CLI::App& cmd, PoolCommandOptions& opts);

// Runs whichever of forward/backward was parsed; the exit code (src/cli/exit_codes.hpp), with
// one line on stderr for any failure.
int run_pool_command(PoolCommandOptions& opts);

}  // namespace pg
