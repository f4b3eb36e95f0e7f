#include <cstdio>

#include "commands.hpp"

namespace pg {

void add_pool_commands(CLI::App& app, PoolCommandOptions& opts) {
  opts.forward = app.add_subcommand("forward", "pooled output (and max indices) of one problem");
  opts.backward = app.add_subcommand("backward", "input gradient of one problem");
}

int run_pool_command(CLI::App&, const PoolCommandOptions&) {
  std::fprintf(stderr, "poolgrad: forward/backward are not built yet\n");
  return 2;
}

}  // namespace pg
