// What both CLI fuzzers do first: an argument list through CLI11 with poolgrad's forward/backward
// option table (src/cli/pool_options.cpp), exactly as `poolgrad` parses it.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "src/cli/commands.hpp"

namespace pg::fuzz {

// `args` after the program name into `opts` through `app` (which opts' command pointers then point
// into); the parsed command, or nullptr on a CLI11 parse error.
inline const CLI::App* parse_command_line(const std::vector<std::string>& args, CLI::App& app, PoolCommandOptions& opts) {
  std::vector<std::string> all = {"poolgrad"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  app.require_subcommand(1);
  add_pool_commands(app, opts);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
    return nullptr;
  }
  return opts.forward->parsed() ? opts.forward : opts.backward;
}

}  // namespace pg::fuzz
