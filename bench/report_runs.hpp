// The timed runs of a Google Benchmark JSON report written by `poolgrad bench` or pool_bench:
// what `poolgrad select` and the build's built-in selection read.
#pragma once

#include <string>
#include <vector>

#include "src/selection.hpp"

namespace pg::bench {

// Runs that failed verification, and the copy rows, are left out. A run's problem is its
// label (the problem line); reports written before labels carried it name a baseline row,
// which is looked up by name. A run with neither is listed in *unknown.
// Throws InvalidInput naming `source` when the text is not such a report.
std::vector<TimedRun> report_runs(const std::string& text, const std::string& source, std::vector<std::string>* unknown);

}  // namespace pg::bench
