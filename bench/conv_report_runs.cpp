#include "bench/conv_report_runs.hpp"

#include "bench/conv_rows.hpp"
#include "bench/report_runs.hpp"  // parse_report_json
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
  const nlohmann::json doc = parse_report_json(text);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw InvalidInput("report " + source + " is not a Google Benchmark JSON report (conv_bench --benchmark_out)");
  ConvReportRuns out;
  if (doc.contains("context") && doc["context"].is_object()) out.device = doc["context"].value("device", "");
  const std::vector<ConvRow> rows = conv_rows();
  for (const auto& b : doc["benchmarks"]) {
    if (b.value("run_type", "iteration") == "aggregate" || b.value("error_occurred", false)) continue;
    std::string name = b.value("name", "");
    if (const auto cut = name.rfind("/manual_time"); cut != std::string::npos) name.erase(cut);
    const auto slash = name.find('/');
    if (slash == std::string::npos || name.rfind("conv.", 0) != 0) continue;
    ConvTimedRun r;
    r.variant = name.substr(0, slash);
    r.row = name.substr(slash + 1);
    const double t = b.value("real_time", 0.0);
    const std::string unit = b.value("time_unit", "ms");
    r.ms = unit == "us" ? t * 1e-3 : unit == "ns" ? t * 1e-6 : unit == "s" ? t * 1e3 : t;
    bool found = false;
    for (const ConvRow& row : rows)
      if (row.name == r.row) {
        r.problem = row.problem;
        found = true;
      }
    if (!found) {
      out.unknown.push_back(name);
      continue;
    }
    out.runs.push_back(std::move(r));
  }
  return out;
}

}  // namespace pg::bench
