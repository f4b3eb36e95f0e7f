// `poolgrad forward` and `poolgrad backward`: one pooling problem on .npy files.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "src/pool_run.hpp"

namespace pg {

struct PoolCommandOptions {
  CLI::App* forward = nullptr;
  CLI::App* backward = nullptr;
  PoolArgs args;
  std::string count_include_pad;  // "true" or "false"; empty: the profile's default
  int64_t divisor_override = 0;
  std::string input, grad_output, indices, output, indices_output;
};

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts);

// Runs whichever of forward/backward was parsed; 0 on success, 2 on invalid input (with one
// line on stderr).
int run_pool_command(CLI::App& app, PoolCommandOptions& opts);

}  // namespace pg
