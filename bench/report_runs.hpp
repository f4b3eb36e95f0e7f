// The timed runs of a Google Benchmark JSON report written by `poolgrad bench` or pool_bench:
// what `poolgrad select` and the build's built-in selection read.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/harness/selection.hpp"

namespace pg::bench {

struct ReportRuns {
  std::string device;                // the report's context: runs of different devices do not mix
  std::vector<TimedRun> runs;
  std::vector<std::string> unknown;  // benchmarks whose problem could not be told
};

// The text of the report at `path`; throws InvalidInput ("report PATH cannot be read").
std::string read_report_file(const std::string& path);

// Parses a report's text. Google Benchmark writes a NaN or an infinity bare (the coefficient of
// variation of a counter whose mean is 0, with repetitions), which JSON has no word for: such
// values are read as null. A text that is not JSON gives a discarded value.
nlohmann::json parse_report_json(const std::string& text);

// The report's document, checked to be a Google Benchmark JSON report; throws InvalidInput naming
// `source` (and `writer`, the program that writes such reports) otherwise.
nlohmann::json report_document(const std::string& text, const std::string& source, const std::string& writer);

// One benchmark of a report as "VARIANT/ROW[/manual_time]": the variant, the row and the time in
// ms; false for aggregates, failed runs and names without a row.
struct BenchmarkRun {
  std::string variant, row;
  double ms = 0;
};
bool read_benchmark_run(const nlohmann::json& b, BenchmarkRun* out);

// Runs that failed verification, and the copy rows, are left out. A run's problem is its
// label (the problem line); reports written before labels carried it name a baseline row,
// which is looked up by name. A run with neither is listed as unknown.
// Throws InvalidInput naming `source` when the text is not such a report.
ReportRuns report_runs(const std::string& text, const std::string& source);

}  // namespace pg::bench
