// The default for problems no report measured: a nearest-neighbour model over the measured ones.
//
// A problem is a vector of features that decide which kernel body is fastest (window overlap,
// taps, layout, dtype, plane size, channels, dims, index width, ...). Each measured problem
// (an example) holds every verified variant's time, as a slowdown against that problem's
// fastest. A variant's predicted slowdown on a new problem is the geometric mean of its slowdowns
// on the examples that timed it, weighted by exp(-distance) (distance: the weighted sum of the
// features' differences), pulled towards a pessimistic prior when no close example timed it. The
// weights are learned from the examples (fit_model_weights: leave-one-problem-out, coordinate
// descent) when the build generates the built-in table, and stored in it.
//
// Depends on the problem description only (the build's generator links it without kernels).
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "src/model/problem.hpp"

namespace pg {

inline constexpr int kModelFeatures = 19;
using Features = std::array<double, kModelFeatures>;

// The feature names, as the selection file stores the weights.
const char* model_feature_name(int f);
Features problem_features(const Problem& p);

struct ModelWeights {
  Features w{};
  double prior_weight = 0.05;  // how much the prior slowdown weighs against the examples' similarity
  double prior_slowdown = 2.0;
};
ModelWeights default_model_weights();

struct VariantTime {
  std::string variant;
  double ms = 0;
  bool deterministic = true;
  bool vendor = false;  // a comparator: not a candidate, not a row's "fastest"
};

// One measured problem: every verified variant timed on it.
struct Example {
  Problem problem;
  std::string name;                 // the row's name (or the problem line)
  std::vector<VariantTime> times;   // any order
  // The device's copy ceiling when it was measured (GB/s, read + write; 0: unknown). The model
  // counts each time in copies of the problem's bytes at this rate, so that examples of devices of
  // one arch but another memory speed (an H100 and an H200) can stand next to each other.
  double copy_gbps = 0;
  double best_ms() const;           // the fastest of poolgrad's own variants (vendors' left out)
  // The fastest the default may pick: of the deterministic own variants, or of all own ones where
  // none is deterministic.
  double best_default_ms() const;
};

struct Prediction {
  std::string variant;
  double slowdown = 0;         // predicted time over the best predicted candidate's
  std::string nearest;         // the closest example that timed it
  double nearest_distance = 0;
};

// Ranks `candidates` (the variants that can run p) by predicted slowdown, best first. Examples of
// another op are ignored.
std::vector<Prediction> model_rank(const Problem& p, const std::vector<std::string>& candidates,
                                   const std::vector<Example>& examples, const ModelWeights& w);

// Leave-one-problem-out: each example's variants are ranked from the other examples, among the
// own variants that ran on it (only its deterministic ones when it has any: the default's rule), and
// the pick's measured time is compared with the fastest of those (best_default_ms).
struct ModelScore {
  int problems = 0;
  int within_3pct = 0;
  int within_10pct = 0;
  double worst = 1;          // the largest pick / fastest
  double geomean = 1;        // geometric mean of pick / fastest
  std::string worst_problem;
  double loss() const;       // what the fit minimizes
};
ModelScore leave_one_out(const std::vector<Example>& examples, const ModelWeights& w);

// Coordinate descent on the weights from `start`, minimizing leave_one_out's loss. Too few
// examples (< 12) to learn from: `start` unchanged.
ModelWeights fit_model_weights(const std::vector<Example>& examples, const ModelWeights& start);

}  // namespace pg
