#include "bench/conv_report_runs.hpp"

#include <algorithm>

#include "bench/conv_rows.hpp"
#include "bench/report_runs.hpp"  // parse_report_json, report_document, read_benchmark_run
#include "src/model/invalid_input.hpp"

namespace pg::bench {

bool is_conv_report(const std::string& text) {
  const nlohmann::json doc = parse_report_json(text);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) return false;
  for (const auto& b : doc["benchmarks"])
    if (b.value("name", "").rfind("conv.", 0) == 0) return true;
  return false;
}

ConvReportRuns conv_report_runs(const std::string& text, const std::string& source) {
  const nlohmann::json doc = report_document(text, source, "conv_bench --benchmark_out");
  ConvReportRuns out;
  if (doc.contains("context") && doc["context"].is_object()) out.device = doc["context"].value("device", "");
  const std::vector<ConvRow> rows = conv_rows();
  for (const auto& b : doc["benchmarks"]) {
    BenchmarkRun run;
    if (!read_benchmark_run(b, &run) || run.variant.rfind("conv.", 0) != 0) continue;
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const ConvRow& r) { return r.name == run.row; });
    if (row == rows.end()) {
      out.unknown.push_back(run.variant + "/" + run.row);
      continue;
    }
    out.runs.push_back({run.variant, run.row, row->problem, run.ms});
  }
  return out;
}

}  // namespace pg::bench
