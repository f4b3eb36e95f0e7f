// The timed runs of a conv_bench JSON report (bench/conv_bench.cpp): what `poolgrad select` ranks
// conv variants from. A run's problem is its row, looked up by name in bench/conv_rows.cpp.
#pragma once

#include <string>
#include <vector>

#include "src/harness/conv_selection.hpp"

namespace pg::bench {

struct ConvReportRuns {
  std::string device;
  std::vector<ConvTimedRun> runs;
  std::vector<std::string> unknown;  // benchmarks whose row conv_rows() no longer has
};

// Whether the report's benchmarks are conv variants' (names "conv.*/ROW").
bool is_conv_report(const std::string& text);
// Runs that failed verification are left out. Throws InvalidInput naming `source` when the text
// is not a Google Benchmark JSON report.
ConvReportRuns conv_report_runs(const std::string& text, const std::string& source);

}  // namespace pg::bench
