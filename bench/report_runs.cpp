#include "bench/report_runs.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <cstring>
#include <nlohmann/json.hpp>

#include "bench/rows.hpp"
#include "src/model/invalid_input.hpp"

namespace pg::bench {
namespace {

double to_ms(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-6;
  if (unit == "us") return t * 1e-3;
  if (unit == "s") return t * 1e3;
  return t;
}

}  // namespace

std::string read_report_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput("report " + path + " cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json parse_report_json(const std::string& text) {
  std::string clean;
  clean.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      clean += ch;
      if (ch == '\\' && i + 1 < text.size()) clean += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    bool replaced = false;
    for (const char* word : {"-Infinity", "Infinity", "-inf", "inf", "-nan", "nan", "-NaN", "NaN"})
      if (text.compare(i, std::strlen(word), word) == 0) {
        clean += "null";
        i += std::strlen(word) - 1;
        replaced = true;
        break;
      }
    if (!replaced) clean += ch;
  }
  return nlohmann::json::parse(clean, nullptr, false);
}

nlohmann::json report_document(const std::string& text, const std::string& source, const std::string& writer) {
  nlohmann::json doc = parse_report_json(text);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw InvalidInput("report " + source + " is not a Google Benchmark JSON report (" + writer + ")");
  return doc;
}

bool read_benchmark_run(const nlohmann::json& b, BenchmarkRun* out) {
  if (b.value("run_type", "iteration") == "aggregate" || b.value("error_occurred", false)) return false;
  std::string name = b.value("name", "");
  if (const auto cut = name.rfind("/manual_time"); cut != std::string::npos) name.erase(cut);
  const auto slash = name.find('/');
  if (slash == std::string::npos) return false;
  out->variant = name.substr(0, slash);
  out->row = name.substr(slash + 1);
  out->ms = to_ms(b.value("real_time", 0.0), b.value("time_unit", "ms"));
  return true;
}

ReportRuns report_runs(const std::string& text, const std::string& source) {
  const nlohmann::json doc = report_document(text, source, "poolgrad bench --out");
  ReportRuns out;
  double copy_gbps = 0;
  if (doc.contains("context") && doc["context"].is_object()) {
    out.device = doc["context"].value("device", "");
    copy_gbps = std::atof(doc["context"].value("copy_ceiling_GBps", "0").c_str());
  }
  const std::vector<Row> baseline = baseline_rows();
  for (const auto& b : doc["benchmarks"]) {
    BenchmarkRun run;
    if (!read_benchmark_run(b, &run) || run.variant == "copy") continue;
    TimedRun r;
    r.variant = run.variant;
    r.row = run.row;
    r.ms = run.ms;
    r.copy_gbps = copy_gbps;
    r.deterministic = b.value("deterministic", 1.0) != 0.0;  // reports before the counter: unknown, taken as yes
    // Reports before the vendor counter: cuDNN's family was the only vendor library's.
    r.vendor = b.contains("vendor") ? b.value("vendor", 0.0) != 0.0 : r.variant.rfind("cudnn.", 0) == 0;
    std::string error;
    if (!parse_problem(b.value("label", ""), &r.problem, &error)) {
      bool found = false;
      for (const Row& row : baseline)
        if (row.name == r.row) {
          r.problem = row.problem;
          found = true;
        }
      if (!found) {
        out.unknown.push_back(run.variant + "/" + run.row);
        continue;
      }
    }
    out.runs.push_back(std::move(r));
  }
  return out;
}

}  // namespace pg::bench
