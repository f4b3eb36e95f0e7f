#include "src/harness/selection.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "src/model/invalid_input.hpp"

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

void add_class_time(ClassTimes& table, const std::string& key, const std::string& row, const std::string& variant,
                    double ms) {
  double& slot = table[key][row][variant];
  slot = slot > 0 ? std::min(slot, ms) : ms;  // a variant timed twice on a row keeps its better time
}

std::vector<SelectionEntry> build_selection(const std::vector<TimedRun>& runs, const std::string& source) {
  ClassTimes table;
  for (const TimedRun& r : runs) add_class_time(table, problem_class(r.problem), r.row, r.variant, r.ms);
  return rank_classes(table, source);
}

std::vector<SelectionEntry> rank_classes(const ClassTimes& table, const std::string& source) {
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

std::vector<Example> examples_from_runs(const std::vector<TimedRun>& runs) {
  std::map<std::string, size_t> at;  // row -> index in out
  std::vector<Example> out;
  for (const TimedRun& r : runs) {
    auto [it, fresh] = at.try_emplace(r.row, out.size());
    if (fresh) out.push_back({r.problem, r.row, {}, r.copy_gbps});
    Example& e = out[it->second];
    bool seen = false;
    for (VariantTime& t : e.times)
      if (t.variant == r.variant) t.ms = std::min(t.ms, r.ms), seen = true;
    if (!seen) e.times.push_back({r.variant, r.ms, r.deterministic, r.vendor});
  }
  for (Example& e : out)
    std::stable_sort(e.times.begin(), e.times.end(), [](const VariantTime& a, const VariantTime& b) { return a.ms < b.ms; });
  return out;
}

SelectionTable build_selection_table(const std::vector<TimedRun>& runs, const std::string& device,
                                     const std::vector<std::string>& sources, bool fit) {
  SelectionTable t;
  t.device = device;
  t.sources = sources;
  std::string source_list;
  for (const std::string& s : sources) source_list += (source_list.empty() ? "" : ", ") + s;
  t.classes = build_selection(runs, source_list);
  t.source = source_list;
  t.problems = examples_from_runs(runs);
  if (fit) t.weights = fit_model_weights(t.problems, default_model_weights());
  return t;
}

std::string selection_to_json(const SelectionTable& table) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::object();
  for (const SelectionEntry& e : table.classes) {
    nlohmann::ordered_json ranking = nlohmann::ordered_json::array();
    for (const RankedVariant& r : e.ranking)
      ranking.push_back({{"variant", r.variant}, {"rows", r.rows}, {"mean_slowdown", r.mean_slowdown},
                         {"worst_slowdown", r.worst_slowdown}});
    classes[e.key] = {{"rows", e.rows}, {"margin_pct", e.margin_pct()}, {"ranking", ranking}};
  }
  nlohmann::ordered_json problems = nlohmann::ordered_json::array();
  for (const Example& e : table.problems) {
    nlohmann::ordered_json times = nlohmann::ordered_json::array();
    for (const VariantTime& t : e.times)
      times.push_back({{"variant", t.variant}, {"ms", t.ms}, {"deterministic", t.deterministic}, {"vendor", t.vendor}});
    problems.push_back({{"row", e.name}, {"problem", to_string(e.problem)}, {"copy_GBps", e.copy_gbps}, {"times", times}});
  }
  nlohmann::ordered_json weights = nlohmann::ordered_json::object();
  for (int f = 0; f < kModelFeatures; ++f) weights[model_feature_name(f)] = table.weights.w[f];
  weights["prior_weight"] = table.weights.prior_weight;
  weights["prior_slowdown"] = table.weights.prior_slowdown;
  nlohmann::ordered_json doc = {{"format", "poolgrad-selection/2"}, {"device", table.device},
                                {"sources", table.sources}, {"classes", classes}, {"problems", problems},
                                {"model", weights}};
  return doc.dump(1) + "\n";
}

SelectionTable selection_from_json(const std::string& text, const std::string& source) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  const std::string format = doc.is_object() ? doc.value("format", "") : "";
  if (doc.is_discarded() || (format != "poolgrad-selection/1" && format != "poolgrad-selection/2") ||
      !doc.contains("classes") || !doc["classes"].is_object())
    throw InvalidInput("selection " + source + " is not a poolgrad-selection file (make one with poolgrad select)");
  SelectionTable table;
  table.source = source;
  try {
    table.device = doc.value("device", "");
    if (doc.contains("sources")) table.sources = doc.at("sources").get<std::vector<std::string>>();
    for (const auto& [key, c] : doc["classes"].items()) {
      SelectionEntry e;
      e.key = key;
      e.rows = c.at("rows").get<int>();
      e.source = source;
      for (const auto& r : c.at("ranking"))
        e.ranking.push_back({r.at("variant").get<std::string>(), r.at("rows").get<int>(),
                             r.at("mean_slowdown").get<double>(), r.at("worst_slowdown").get<double>()});
      table.classes.push_back(std::move(e));
    }
    if (doc.contains("problems"))
      for (const auto& j : doc.at("problems")) {
        Example e;
        std::string error;
        const std::string line = j.at("problem").get<std::string>();
        if (!parse_problem(line, &e.problem, &error))
          throw InvalidInput("selection " + source + ": problem '" + line + "': " + error);
        e.name = j.value("row", line);
        e.copy_gbps = j.value("copy_GBps", 0.0);
        for (const auto& t : j.at("times")) {
          const double ms = t.at("ms").get<double>();
          if (!(ms > 0)) throw InvalidInput("selection " + source + ": a time that is not positive on " + e.name);
          e.times.push_back({t.at("variant").get<std::string>(), ms, t.value("deterministic", true), t.value("vendor", false)});
        }
        if (e.times.empty()) throw InvalidInput("selection " + source + ": no times on " + e.name);
        table.problems.push_back(std::move(e));
      }
    if (doc.contains("model")) {
      const auto& m = doc.at("model");
      for (int f = 0; f < kModelFeatures; ++f) table.weights.w[f] = m.at(model_feature_name(f)).get<double>();
      table.weights.prior_weight = m.at("prior_weight").get<double>();
      table.weights.prior_slowdown = m.at("prior_slowdown").get<double>();
    }
  } catch (const nlohmann::json::exception& ex) {
    throw InvalidInput("selection " + source + ": " + ex.what());
  }
  return table;
}

}  // namespace pg
