// What both CLI fuzzers share: the input's lines, an argument list through CLI11 with poolgrad's
// forward/backward option table (src/cli/pool_options.cpp) exactly as `poolgrad` parses it, and
// the one-line rule for messages.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/cli/commands.hpp"

namespace pg::fuzz {

// A fuzz input split at newlines (an empty input is one empty line).
inline std::vector<std::string> split_lines(const uint8_t* data, size_t size) {
  std::vector<std::string> lines(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') lines.emplace_back();
    else lines.back() += static_cast<char>(data[i]);
  }
  return lines;
}

// An InvalidInput's message must be one non-empty line; anything else stops the fuzzer.
inline void one_line_or_trap(const std::string& message) {
  if (message.empty() || message.find('\n') != std::string::npos) __builtin_trap();
}

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
