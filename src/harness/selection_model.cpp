#include "src/harness/selection_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace pg {
namespace {

const char* const kFeatureNames[kModelFeatures] = {
    "dims",          "channels_last", "log2_dtype_bytes", "bf16",         "log2_taps",
    "log2_overlap",  "disjoint",      "global",           "dilated",      "log2_plane",
    "log2_channels", "log2_bytes",    "packed_channels",  "gaps",         "padded",
    "ceil_window",   "log2_index_bytes", "anisotropic",   "unit_axis",
};

// A starting point that says what a kernel engineer expects to matter most: the window's overlap,
// whether windows are disjoint or global, the layout and the dims; then sizes.
constexpr Features kDefaultWeights = {1.0, 2.0, 0.5, 0.25, 0.5, 1.0, 2.0, 2.0, 1.0, 0.25,
                                      0.25, 0.25, 0.5, 1.0, 0.5, 0.25, 0.5, 0.5, 0.5};

// Values each weight is tried at by the fit.
constexpr double kWeightGrid[] = {0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0};
constexpr int kFitPasses = 3;
constexpr size_t kMinExamplesToFit = 12;

double log2_of(double v) { return std::log2(std::max(v, 1.0)); }

double distance(const Features& a, const Features& b, const Features& w) {
  double d = 0;
  for (int f = 0; f < kModelFeatures; ++f) d += w[f] * std::abs(a[f] - b[f]);
  return d;
}

struct Prepared {
  Features features;
  double best = 0, best_default = 0;
  std::map<std::string, double> log_slowdown;  // by variant, against the own best: what a pick costs
  // by variant, log of the time over the problem's bytes: what the model averages. Unlike a
  // slowdown it does not depend on which other variants ran on the example (a specialized variant
  // that ran on one example and not on the next leaves the others' costs as they were).
  std::map<std::string, double> log_cost;
  double best_log_cost = 0;
};

// The time to move dy and dx once (the op's least traffic whatever the variant) at the example's
// copy ceiling, or at 1 TB/s where it is unknown.
double ideal_ms(const Example& e) {
  const double bytes = static_cast<double>(e.problem.in_elems() + e.problem.out_elems()) * dtype_size(e.problem.dtype);
  return bytes / ((e.copy_gbps > 0 ? e.copy_gbps : 1000.0) * 1e6);
}

Prepared prepare(const Example& e) {
  Prepared p;
  p.features = problem_features(e.problem);
  p.best = e.best_ms();
  p.best_default = e.best_default_ms();
  p.best_log_cost = std::log(p.best / std::max(ideal_ms(e), 1e-12));
  for (const VariantTime& t : e.times) {
    if (t.vendor) continue;
    const double s = std::log(t.ms / p.best);
    const auto it = p.log_slowdown.find(t.variant);
    if (it == p.log_slowdown.end() || s < it->second) {
      p.log_slowdown[t.variant] = s;
      p.log_cost[t.variant] = std::log(t.ms / std::max(ideal_ms(e), 1e-12));
    }
  }
  return p;
}

// The ranking of model_rank over prepared examples, leaving out example `skip` (-1: none).
std::vector<Prediction> rank_prepared(const Problem& problem, const Features& f, const std::vector<std::string>& candidates,
                                      const std::vector<Example>& examples, const std::vector<Prepared>& prepared,
                                      const ModelWeights& w, int skip) {
  std::vector<Prediction> out;
  std::vector<double> sim(examples.size(), 0.0), dist(examples.size(), 0.0);
  for (size_t i = 0; i < examples.size(); ++i) {
    if (static_cast<int>(i) == skip || examples[i].problem.op != problem.op) continue;
    dist[i] = distance(f, prepared[i].features, w.w);
    sim[i] = std::exp(-dist[i]);
  }
  // The prior: prior_slowdown times the median best cost of the op's examples.
  std::vector<double> bests;
  for (size_t i = 0; i < examples.size(); ++i)
    if (sim[i] > 0) bests.push_back(prepared[i].best_log_cost);
  double prior = std::log(w.prior_slowdown);
  if (!bests.empty()) {
    std::nth_element(bests.begin(), bests.begin() + bests.size() / 2, bests.end());
    prior += bests[bests.size() / 2];
  }
  for (const std::string& v : candidates) {
    double num = w.prior_weight * prior, den = w.prior_weight;
    Prediction p;
    p.variant = v;
    p.nearest_distance = 1e300;
    for (size_t i = 0; i < examples.size(); ++i) {
      if (sim[i] <= 0) continue;
      const auto it = prepared[i].log_cost.find(v);
      if (it == prepared[i].log_cost.end()) continue;
      num += sim[i] * it->second;
      den += sim[i];
      if (dist[i] < p.nearest_distance) p.nearest_distance = dist[i], p.nearest = examples[i].name;
    }
    p.slowdown = num / den;  // the predicted log cost; made a slowdown against the best below
    out.push_back(std::move(p));
  }
  double least = 1e300;
  for (const Prediction& p : out) least = std::min(least, p.slowdown);
  for (Prediction& p : out) p.slowdown = std::exp(p.slowdown - least);
  std::stable_sort(out.begin(), out.end(), [](const Prediction& a, const Prediction& b) { return a.slowdown < b.slowdown; });
  return out;
}

ModelScore score_prepared(const std::vector<Example>& examples, const std::vector<Prepared>& prepared,
                          const ModelWeights& w) {
  ModelScore s;
  double log_sum = 0;
  for (size_t i = 0; i < examples.size(); ++i) {
    const Example& e = examples[i];
    bool any_deterministic = false;
    for (const VariantTime& t : e.times) any_deterministic = any_deterministic || (t.deterministic && !t.vendor);
    std::vector<std::string> candidates;
    for (const VariantTime& t : e.times)
      if (!t.vendor && (t.deterministic || !any_deterministic) &&
          std::find(candidates.begin(), candidates.end(), t.variant) == candidates.end())
        candidates.push_back(t.variant);
    if (candidates.empty()) continue;
    const std::vector<Prediction> r = rank_prepared(e.problem, prepared[i].features, candidates, examples, prepared, w,
                                                    static_cast<int>(i));
    const double slowdown =
        std::exp(prepared[i].log_slowdown.at(r.front().variant)) * prepared[i].best / prepared[i].best_default;
    ++s.problems;
    s.within_3pct += slowdown <= 1.03;
    s.within_10pct += slowdown <= 1.10;
    log_sum += std::log(slowdown);
    if (slowdown > s.worst) s.worst = slowdown, s.worst_problem = e.name;
  }
  if (s.problems) s.geomean = std::exp(log_sum / s.problems);
  return s;
}

}  // namespace

const char* model_feature_name(int f) { return kFeatureNames[f]; }

Features problem_features(const Problem& p) {
  const int first = kAxes - p.dims;
  double overlap = 1, taps = 1;
  bool gaps = false, padded = false, dilated = false, anisotropic = false, unit_axis = false, global = true;
  bool ceil_window = false;
  for (int a = first; a < kAxes; ++a) {
    const int64_t k = p.effective_kernel(a);
    // Windows covering one element along the axis: no more than there are windows.
    overlap *= static_cast<double>(std::min((k + p.stride[a] - 1) / p.stride[a], p.out[a]));
    taps *= static_cast<double>(p.kernel[a]);
    gaps = gaps || p.stride[a] > k;
    padded = padded || p.pad_begin[a] || p.pad_end[a];
    dilated = dilated || p.dilation[a] != 1;
    anisotropic = anisotropic || p.kernel[a] != p.kernel[first];
    unit_axis = unit_axis || (p.kernel[a] == 1 && p.stride[a] == 1);
    global = global && p.out[a] == 1 && !p.pad_begin[a] && !p.pad_end[a];
    ceil_window = ceil_window || (p.ceil_mode && pooled_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a],
                                                               p.pad_begin[a], p.pad_end[a], false) != p.out[a]);
  }
  const int es = dtype_size(p.dtype);
  const bool channels_last = p.layout == Layout::channels_last;
  return {static_cast<double>(p.dims),
          channels_last ? 1.0 : 0.0,
          log2_of(es),
          p.dtype == DType::bf16 ? 1.0 : 0.0,
          log2_of(taps),
          log2_of(overlap),
          p.windows_disjoint() ? 1.0 : 0.0,
          global ? 1.0 : 0.0,
          dilated ? 1.0 : 0.0,
          log2_of(static_cast<double>(p.in_plane())),
          log2_of(static_cast<double>(p.c)),
          log2_of(static_cast<double>(p.in_elems()) * es),
          // 16-byte packs across channels fit whole positions
          channels_last && (p.c * es) % 16 == 0 ? 1.0 : 0.0,
          gaps ? 1.0 : 0.0,
          padded ? 1.0 : 0.0,
          ceil_window ? 1.0 : 0.0,
          p.op == Op::max ? log2_of(index_type_size(p.index_type)) + (p.index_format == IndexFormat::plane ? 0 : 4) : 0.0,
          anisotropic ? 1.0 : 0.0,
          unit_axis ? 1.0 : 0.0};
}

ModelWeights default_model_weights() {
  ModelWeights w;
  w.w = kDefaultWeights;
  return w;
}

double Example::best_ms() const {
  double best = 1e300;
  for (const VariantTime& t : times)
    if (!t.vendor) best = std::min(best, t.ms);
  return best;
}

double Example::best_default_ms() const {
  bool any_deterministic = false;
  for (const VariantTime& t : times) any_deterministic = any_deterministic || (t.deterministic && !t.vendor);
  double best = 1e300;
  for (const VariantTime& t : times)
    if (!t.vendor && (t.deterministic || !any_deterministic)) best = std::min(best, t.ms);
  return best;
}

std::vector<Prediction> model_rank(const Problem& p, const std::vector<std::string>& candidates,
                                   const std::vector<Example>& examples, const ModelWeights& w) {
  std::vector<Prepared> prepared;
  prepared.reserve(examples.size());
  for (const Example& e : examples) prepared.push_back(prepare(e));
  return rank_prepared(p, problem_features(p), candidates, examples, prepared, w, -1);
}

double ModelScore::loss() const {
  // The geometric-mean slowdown, plus a price on each pick more than 10% behind: the bar users
  // hold auto to is "never far behind", not "fast on average".
  if (!problems) return 0;
  return std::log(geomean) + 0.05 * static_cast<double>(problems - within_10pct) / problems + 0.02 * std::log(worst);
}

ModelScore leave_one_out(const std::vector<Example>& examples, const ModelWeights& w) {
  std::vector<Prepared> prepared;
  for (const Example& e : examples) prepared.push_back(prepare(e));
  return score_prepared(examples, prepared, w);
}

// What the fit pays for moving a weight away from where it started: a factor of 2 costs as much
// as a 0.3% worse geometric mean. Without it the fit chases single rows (on the 2026-11-24 H100
// reports it raised bf16's weight 16-fold and picked worse on held-out rows than the start).
constexpr double kWeightPrice = 0.003;
double weight_price(const ModelWeights& w, const ModelWeights& start) {
  double price = 0;
  for (int f = 0; f < kModelFeatures; ++f) price += std::abs(std::log2((w.w[f] + 0.125) / (start.w[f] + 0.125)));
  return kWeightPrice * price;
}

ModelWeights fit_model_weights(const std::vector<Example>& examples, const ModelWeights& start) {
  if (examples.size() < kMinExamplesToFit) return start;
  std::vector<Prepared> prepared;
  for (const Example& e : examples) prepared.push_back(prepare(e));
  ModelWeights best = start;
  double best_loss = score_prepared(examples, prepared, best).loss();
  for (int pass = 0; pass < kFitPasses; ++pass) {
    bool improved = false;
    for (int f = 0; f < kModelFeatures; ++f)
      for (const double value : kWeightGrid) {
        ModelWeights trial = best;
        trial.w[f] = value;
        const double loss = score_prepared(examples, prepared, trial).loss() + weight_price(trial, start);
        if (loss < best_loss - 1e-12) best = trial, best_loss = loss, improved = true;
      }
    for (const double prior : {0.01, 0.02, 0.05, 0.1, 0.2}) {
      ModelWeights trial = best;
      trial.prior_weight = prior;
      const double loss = score_prepared(examples, prepared, trial).loss() + weight_price(trial, start);
      if (loss < best_loss - 1e-12) best = trial, best_loss = loss, improved = true;
    }
    if (!improved) break;
  }
  return best;
}

}  // namespace pg
