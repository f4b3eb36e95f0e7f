#include "src/selection.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "src/invalid_input.hpp"

namespace pg {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
// Size buckets of the input's bytes: below 4 MiB a launch is short enough that its fixed costs
// weigh; up to 64 MiB the tensors stay near an H100's 50 MiB L2; above, every byte is HBM traffic.
constexpr int64_t kSmallBytes = 4 * kMiB;
constexpr int64_t kMediumBytes = 64 * kMiB;

bool is_global(const Problem& p) {
  for (int a = kAxes - p.dims; a < kAxes; ++a)
    if (p.kernel[a] != p.in[a] || p.pad_begin[a] || p.pad_end[a] || p.out[a] != 1) return false;
  return true;
}

// ceil_mode matters only where it adds a window.
bool ceil_adds_window(const Problem& p) {
  if (!p.ceil_mode) return false;
  for (int a = kAxes - p.dims; a < kAxes; ++a)
    if (pooled_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a], p.pad_begin[a], p.pad_end[a], false) != p.out[a])
      return true;
  return false;
}

std::string window_class(const Problem& p) {
  std::string w;
  if (is_global(p)) {
    w = "global";
  } else {
    w = "k" + axes_text(p, p.kernel) + "s" + axes_text(p, p.stride) + "p" + axes_text(p, p.pad_begin);
    bool asymmetric = false;
    for (int a = 0; a < kAxes; ++a) asymmetric = asymmetric || p.pad_begin[a] != p.pad_end[a];
    if (asymmetric) w += "-" + axes_text(p, p.pad_end);
    bool dilated = false;
    for (int a = 0; a < kAxes; ++a) dilated = dilated || p.dilation[a] != 1;
    if (dilated) w += "d" + axes_text(p, p.dilation);
    if (ceil_adds_window(p)) w += " ceil";
  }
  if (p.op == Op::avg) w += std::string(" ") + (p.has_divisor_override ? "override" : divisor_name(p.divisor));
  else w += std::string(" idx=") + index_format_name(p.index_format) + "/" + index_type_name(p.index_type);
  return w;
}

}  // namespace

std::string axes_text(const Problem& p, const int64_t* v) {
  const int first = kAxes - p.dims;
  bool same = true;
  for (int a = first; a < kAxes; ++a) same = same && v[a] == v[first];
  if (same) return std::to_string(v[first]);
  std::string s;
  for (int a = first; a < kAxes; ++a) {
    if (a != first) s += 'x';
    s += std::to_string(v[a]);
  }
  return s;
}

const char* size_bucket(const Problem& p) {
  const int64_t bytes = p.in_elems() * dtype_size(p.dtype);
  return bytes < kSmallBytes ? "S" : bytes < kMediumBytes ? "M" : "L";
}

std::string problem_class_any_size(const Problem& p) {
  return std::string(op_name(p.op)) + " " + std::to_string(p.dims) + "d " +
         (p.layout == Layout::channels_first ? "cf " : "cl ") + dtype_name(p.dtype) + " " + window_class(p);
}

std::string problem_class(const Problem& p) { return problem_class_any_size(p) + " " + size_bucket(p); }

double SelectionEntry::margin_pct() const {
  if (ranking.size() < 2) return -1;
  return 100.0 * (ranking[1].worst_slowdown / ranking[0].worst_slowdown - 1.0);
}

std::vector<SelectionEntry> build_selection(const std::vector<TimedRun>& runs, const std::string& source) {
  // class -> row -> variant -> ms
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> table;
  for (const TimedRun& r : runs) {
    double& ms = table[problem_class(r.problem)][r.row][r.variant];
    ms = ms > 0 ? std::min(ms, r.ms) : r.ms;  // a variant timed twice on a row keeps its better time
  }
  std::vector<SelectionEntry> entries;
  for (const auto& [key, rows] : table) {
    SelectionEntry e;
    e.key = key;
    e.rows = static_cast<int>(rows.size());
    e.source = source;
    std::map<std::string, RankedVariant> by_variant;
    for (const auto& [row, times] : rows) {
      double best = 1e300;
      for (const auto& [variant, ms] : times) best = std::min(best, ms);
      for (const auto& [variant, ms] : times) {
        RankedVariant& rv = by_variant[variant];
        rv.variant = variant;
        const double slowdown = ms / best;
        rv.mean_slowdown = (rv.mean_slowdown * rv.rows + slowdown) / (rv.rows + 1);
        rv.worst_slowdown = rv.rows ? std::max(rv.worst_slowdown, slowdown) : slowdown;
        ++rv.rows;
      }
    }
    for (auto& [name, rv] : by_variant) e.ranking.push_back(rv);
    std::stable_sort(e.ranking.begin(), e.ranking.end(), [](const RankedVariant& a, const RankedVariant& b) {
      if (a.rows != b.rows) return a.rows > b.rows;
      if (a.worst_slowdown != b.worst_slowdown) return a.worst_slowdown < b.worst_slowdown;
      return a.mean_slowdown < b.mean_slowdown;
    });
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string selection_to_json(const std::vector<SelectionEntry>& entries, const std::vector<std::string>& sources) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (const SelectionEntry& e : entries) {
    nlohmann::ordered_json ranking = nlohmann::ordered_json::array();
    for (const RankedVariant& r : e.ranking)
      ranking.push_back({{"variant", r.variant}, {"rows", r.rows}, {"mean_slowdown", r.mean_slowdown},
                         {"worst_slowdown", r.worst_slowdown}});
    classes[e.key] = {{"rows", e.rows}, {"margin_pct", e.margin_pct()}, {"ranking", ranking}};
  }
  nlohmann::ordered_json doc = {{"format", "poolgrad-selection/1"}, {"sources", sources}, {"classes", classes}};
  return doc.dump(1) + "\n";
}

std::vector<SelectionEntry> selection_from_json(const std::string& text, const std::string& source) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "poolgrad-selection/1" ||
      !doc.contains("classes") || !doc["classes"].is_object())
    throw InvalidInput("selection " + source + " is not a poolgrad-selection/1 file (make one with poolgrad select)");
  std::vector<SelectionEntry> entries;
  try {
    for (const auto& [key, c] : doc["classes"].items()) {
      SelectionEntry e;
      e.key = key;
      e.rows = c.at("rows").get<int>();
      e.source = source;
      for (const auto& r : c.at("ranking"))
        e.ranking.push_back({r.at("variant").get<std::string>(), r.at("rows").get<int>(),
                             r.at("mean_slowdown").get<double>(), r.at("worst_slowdown").get<double>()});
      entries.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& ex) {
    throw InvalidInput("selection " + source + ": " + ex.what());
  }
  return entries;
}

}  // namespace pg
