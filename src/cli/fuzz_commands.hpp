// `poolgrad fuzz` (a timed campaign over variants and devices, fuzz/campaign.hpp) and
// `poolgrad fuzz-merge` (shard reports into one).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace pg {

struct FuzzCommandOptions {
  CLI::App* fuzz = nullptr;
  CLI::App* merge = nullptr;
  double minutes = 1;
  int64_t cases = 0;
  uint64_t seed = 0;
  std::string variants = ".", backend = "all", devices = "all", shard = "0/1", corpus = "poolgrad-cases", report;
  int jobs = 0;
  int batch = 8;
  double share = 0.5;
  bool phases = false;  // --phases: where each backend's case time went
  std::vector<std::string> reports;  // fuzz-merge inputs
  std::string merged;                // fuzz-merge output
};

void add_fuzz_commands(CLI::App& app, FuzzCommandOptions& opts);

// Runs whichever of fuzz/fuzz-merge was parsed: 0 when nothing failed, 1 when a case failed,
// 2 on bad usage (one line on stderr naming the parameter).
int run_fuzz_command(FuzzCommandOptions& opts);

}  // namespace pg
