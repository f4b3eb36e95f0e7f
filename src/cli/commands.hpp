// `poolgrad forward` and `poolgrad backward`: one pooling problem on .npy files.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace pg {

struct PoolCommandOptions {
  CLI::App* forward = nullptr;
  CLI::App* backward = nullptr;
};

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts);

// Runs whichever of forward/backward was parsed; 0 on success, 2 on invalid input.
int run_pool_command(CLI::App& app, const PoolCommandOptions& opts);

}  // namespace pg
