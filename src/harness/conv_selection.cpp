#include "src/harness/conv_selection.hpp"

#include <cstdio>
#include <map>

namespace pg {
namespace {

// One parameter over the spatial axes: "3" when they agree, else "1x3x3".
std::string conv_axes_text(const ConvProblem& p, const int64_t* v) {
  bool same = true;
  for (int a = kAxes - p.dims; a < kAxes; ++a) same = same && v[a] == v[kAxes - 1];
  if (same) return std::to_string(v[kAxes - 1]);
  std::string s;
  for (int a = kAxes - p.dims; a < kAxes; ++a) s += (s.empty() ? "" : "x") + std::to_string(v[a]);
  return s;
}

const char* channel_band(const ConvProblem& p) {
  const int64_t cg = p.c_per_group();
  if (cg == 1 && p.groups > 1) return "depthwise";
  if (cg <= 8) return "C/g<=8";
  return cg < 32 ? "C/g<32" : "C/g>=32";
}

}  // namespace

std::string conv_problem_class(const ConvProblem& p) {
  return "conv " + std::to_string(p.dims) + "d " + (p.layout == Layout::channels_last ? "cl " : "cf ") +
         dtype_name(p.dtype) + " k" + conv_axes_text(p, p.kernel) + "s" + conv_axes_text(p, p.stride) + "d" +
         conv_axes_text(p, p.dilation) + " " + channel_band(p);
}

std::vector<SelectionEntry> build_conv_selection(const std::vector<ConvTimedRun>& runs, const std::string& source) {
  ClassTimes table;
  for (const ConvTimedRun& r : runs) add_class_time(table, conv_problem_class(r.problem), r.row, r.variant, r.ms);
  return rank_classes(table, source);
}

ConvAuditResult audit_conv_order(const std::vector<ConvTimedRun>& runs,
                                 const std::function<std::vector<std::string>(const ConvProblem&)>& order,
                                 double tolerance_pct) {
  std::map<std::string, std::map<std::string, double>> times;  // row -> variant -> best ms
  std::map<std::string, ConvProblem> problems;
  for (const ConvTimedRun& r : runs) {
    double& ms = times[r.row][r.variant];
    ms = ms > 0 ? std::min(ms, r.ms) : r.ms;
    problems[r.row] = r.problem;
  }
  ConvAuditResult out;
  for (const auto& [row, by_variant] : times) {
    double best = 1e300;
    std::string fastest;
    for (const auto& [variant, ms] : by_variant)
      if (ms < best) best = ms, fastest = variant;
    bool timed = false;
    for (const std::string& name : order(problems[row])) {
      const auto it = by_variant.find(name);
      if (it == by_variant.end()) continue;
      timed = true;
      ++out.rows;
      const double behind = 100.0 * (it->second / best - 1.0);
      if (behind <= tolerance_pct) {
        ++out.within;
      } else {
        char line[512];
        std::snprintf(line, sizeof line, "row %s: auto tries %s first, %.1f%% behind %s", row.c_str(), name.c_str(),
                      behind, fastest.c_str());
        out.misses.push_back(line);
      }
      break;
    }
    if (!timed) ++out.untimed;
  }
  return out;
}

}  // namespace pg
