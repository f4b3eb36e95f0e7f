#include "bench/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "bench/report_runs.hpp"
#include "src/model/invalid_input.hpp"

namespace pg::bench {
namespace {

// Exact U distribution up to this many repetitions a side (its table is (n+1)^2 (n^2+1) doubles).
constexpr size_t kExactLimit = 20;

struct Side {
  std::string device, context;
  std::map<std::pair<std::string, std::string>, std::vector<double>> times;  // (variant, key) -> ms per repetition
  std::map<std::pair<std::string, std::string>, std::string> row;            // the row's name
};

double to_ms(double t, const std::string& unit) {
  if (unit == "ns") return t * 1e-6;
  if (unit == "us") return t * 1e-3;
  if (unit == "s") return t * 1e3;
  return t;
}

Side read_side(const std::string& text, const std::string& name) {
  const nlohmann::json doc = parse_report_json(text);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw InvalidInput("report " + name + " is not a Google Benchmark JSON report (poolgrad bench --out)");
  Side s;
  if (doc.contains("context") && doc["context"].is_object()) {
    const auto& c = doc["context"];
    s.device = c.value("device", "");
    s.context = s.device + ", " + c.value("date", "?") + ", commit " + c.value("commit", "?");
  }
  for (const auto& b : doc["benchmarks"]) {
    if (!b.is_object() || b.value("run_type", "iteration") == "aggregate" || b.value("error_occurred", false)) continue;
    std::string full = b.value("name", "");
    if (const auto cut = full.rfind("/manual_time"); cut != std::string::npos) full.erase(cut);
    const auto slash = full.find('/');
    if (slash == std::string::npos) continue;
    const std::string variant = full.substr(0, slash), row = full.substr(slash + 1);
    const std::string label = b.value("label", "");
    // Rows are joined by problem line; runs without one (copies, old reports) by row name.
    const std::pair<std::string, std::string> key{variant, label.rfind("op=", 0) == 0 ? label : row};
    const double ms = to_ms(b.value("real_time", 0.0), b.value("time_unit", "ms"));
    if (!(ms > 0)) throw InvalidInput("report " + name + ": " + full + " has no positive time");
    s.times[key].push_back(ms);
    s.row[key] = row;
  }
  if (s.times.empty()) throw InvalidInput("report " + name + " holds no timed run");
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

}  // namespace

int Comparison::regressions() const {
  int n = 0;
  for (const ComparedPair& p : pairs) n += p.verdict == Verdict::regression || p.verdict == Verdict::untested_regression;
  return n;
}

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t m = a.size(), n = b.size();
  if (m == 0 || n == 0) return 1;
  double u = 0;
  bool ties = false;
  for (double x : a)
    for (double y : b) {
      if (x > y) u += 1;
      else if (x == y) u += 0.5, ties = true;
    }
  const double mn = static_cast<double>(m * n);
  if (!ties && m <= kExactLimit && n <= kExactLimit) {
    // count[i][j][k]: orderings of i a's and j b's with U = k (the a's above b's).
    const size_t umax = m * n;
    std::vector<double> prev((n + 1) * (umax + 1), 0.0), cur = prev;
    auto at = [&](std::vector<double>& t, size_t j, size_t k) -> double& { return t[j * (umax + 1) + k]; };
    for (size_t j = 0; j <= n; ++j) at(prev, j, 0) = 1;  // i = 0
    for (size_t i = 1; i <= m; ++i) {
      std::fill(cur.begin(), cur.end(), 0.0);
      at(cur, 0, 0) = 1;
      for (size_t j = 1; j <= n; ++j)
        for (size_t k = 0; k <= i * j; ++k)
          at(cur, j, k) = (k >= j ? at(prev, j, k - j) : 0.0) + at(cur, j - 1, k);
      std::swap(prev, cur);
    }
    double total = 0, below = 0, above = 0;
    const size_t uk = static_cast<size_t>(u);
    for (size_t k = 0; k <= umax; ++k) {
      const double c = at(prev, n, k);
      total += c;
      if (k <= uk) below += c;
      if (k >= uk) above += c;
    }
    return std::min(1.0, 2.0 * std::min(below, above) / total);
  }
  // Normal approximation with the tie correction of the variance and a continuity correction.
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  double tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double N = static_cast<double>(m + n);
  const double var = mn / 12.0 * ((N + 1) - tie_term / (N * (N - 1)));
  if (var <= 0) return 1;
  const double z = (std::abs(u - mn / 2) - 0.5) / std::sqrt(var);
  return std::min(1.0, 2.0 * (1.0 - normal_cdf(std::max(z, 0.0))));
}

Comparison compare_reports(const std::string& old_text, const std::string& old_name, const std::string& new_text,
                           const std::string& new_name, const CompareOptions& o) {
  if (!(o.threshold_pct >= 0)) throw InvalidInput("--threshold must be >= 0 percent");
  if (!(o.alpha > 0 && o.alpha < 1)) throw InvalidInput("--alpha must be between 0 and 1");
  const Side old_side = read_side(old_text, old_name), new_side = read_side(new_text, new_name);
  Comparison c;
  c.old_device = old_side.device;
  c.new_device = new_side.device;
  c.old_context = old_side.context;
  c.new_context = new_side.context;
  for (const auto& [key, old_ms] : old_side.times) {
    const auto it = new_side.times.find(key);
    if (it == new_side.times.end()) {
      ++c.only_old;
      continue;
    }
    ComparedPair p;
    p.variant = key.first;
    p.problem = key.second;
    p.row = new_side.row.at(key);
    p.old_ms = old_ms;
    p.new_ms = it->second;
    p.old_median = median(p.old_ms);
    p.new_median = median(p.new_ms);
    p.change_pct = 100.0 * (p.new_median / p.old_median - 1.0);
    const bool testable = p.old_ms.size() >= 2 && p.new_ms.size() >= 2;
    if (testable) p.p_value = mann_whitney_p(p.new_ms, p.old_ms);
    const bool beyond = std::abs(p.change_pct) > o.threshold_pct;
    if (beyond && !testable) p.verdict = p.change_pct > 0 ? Verdict::untested_regression : Verdict::untested_improvement;
    else if (beyond && p.p_value < o.alpha) p.verdict = p.change_pct > 0 ? Verdict::regression : Verdict::improvement;
    else p.verdict = Verdict::same;
    (p.variant == "copy" ? c.controls : c.pairs).push_back(std::move(p));
  }
  for (const auto& [key, ms] : new_side.times) c.only_new += old_side.times.count(key) == 0;
  auto rank = [](Verdict v) {
    switch (v) {
      case Verdict::regression: return 0;
      case Verdict::untested_regression: return 1;
      case Verdict::improvement: return 3;
      case Verdict::untested_improvement: return 4;
      case Verdict::same: return 2;
    }
    return 5;
  };
  std::stable_sort(c.pairs.begin(), c.pairs.end(), [&](const ComparedPair& a, const ComparedPair& b) {
    if (rank(a.verdict) != rank(b.verdict)) return rank(a.verdict) < rank(b.verdict);
    return a.change_pct > b.change_pct;
  });
  return c;
}

}  // namespace pg::bench
