// `poolgrad compare` (bench/compare.hpp): the U test's p-values, and the verdicts on reports of
// the same binary (no regression), with a planted 20% slowdown (flagged, that pair only), with
// one repetition (judged by the threshold, said so) and on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "bench/compare.hpp"
#include "src/model/invalid_input.hpp"

namespace pg::bench {
namespace {

TEST(MannWhitney, ExactPValuesOfSmallSamples) {
  // Completely separated samples of 3 and 3: U = 0, P(U <= 0) = 1/20, two-sided 0.1.
  EXPECT_NEAR(mann_whitney_p({1, 2, 3}, {4, 5, 6}), 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_p({4, 5, 6}, {1, 2, 3}), 0.1, 1e-12);
  // 9 against 9, separated: 2 / C(18, 9).
  EXPECT_NEAR(mann_whitney_p({1, 2, 3, 4, 5, 6, 7, 8, 9}, {11, 12, 13, 14, 15, 16, 17, 18, 19}), 2.0 / 48620, 1e-12);
  // Interleaved: no evidence.
  EXPECT_GT(mann_whitney_p({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}), 0.5);
  EXPECT_DOUBLE_EQ(mann_whitney_p({1}, {}), 1.0);
}

TEST(MannWhitney, NormalApproximationWithTies) {
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) a.push_back(i % 5), b.push_back(i % 5 + 3);
  EXPECT_LT(mann_whitney_p(a, b), 1e-4);
  EXPECT_GT(mann_whitney_p(a, a), 0.9);
}

// A bench report: `variants` on two problems, `reps` repetitions each around `ms` with 1% noise.
std::string report(const std::vector<std::pair<std::string, double>>& variants, int reps, unsigned seed,
                   const std::string& variant_to_slow = "", double factor = 1.0, const std::string& suite = "s") {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(1.0, 0.01);
  nlohmann::json benchmarks = nlohmann::json::array();
  for (int row = 0; row < 2; ++row)
    for (const auto& [v, ms] : variants)
      for (int r = 0; r < reps; ++r) {
        const double t = ms * (row + 1) * noise(rng) * (v == variant_to_slow ? factor : 1.0);
        benchmarks.push_back({{"name", v + "/" + suite + " row " + std::to_string(row) + "/manual_time"},
                              {"run_type", "iteration"}, {"repetition_index", r}, {"real_time", t},
                              {"time_unit", "ms"}, {"label", "op=max2d n=" + std::to_string(row + 1) + " c=1"}});
      }
  benchmarks.push_back({{"name", "copy/hipMemcpy_d2d/manual_time"}, {"run_type", "iteration"}, {"real_time", 1.0},
                        {"time_unit", "ms"}});
  benchmarks.push_back({{"name", "a/s row 0/manual_time_mean"}, {"run_type", "aggregate"}, {"real_time", 99.0},
                        {"time_unit", "ms"}});
  return nlohmann::json{{"context", {{"device", "GPU X (sm_90)"}, {"date", "d"}, {"commit", "c"}}},
                        {"benchmarks", benchmarks}}.dump();
}

const std::vector<std::pair<std::string, double>> kVariants = {{"a", 0.10}, {"b", 0.25}, {"c", 1.5}};

TEST(Compare, TwoRunsOfTheSameBinaryPass) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    const Comparison c = compare_reports(report(kVariants, 9, seed), "old", report(kVariants, 9, seed + 100), "new", {});
    EXPECT_EQ(c.pairs.size(), 6u);
    EXPECT_EQ(c.regressions(), 0);
    EXPECT_EQ(c.controls.size(), 1u);
    EXPECT_EQ(c.pairs[0].old_ms.size(), 9u);  // the aggregate is not a repetition
  }
}

TEST(Compare, APlantedTwentyPercentSlowdownIsFlaggedFirstAndAlone) {
  const Comparison c = compare_reports(report(kVariants, 9, 1), "old", report(kVariants, 9, 2, "b", 1.2), "new", {});
  EXPECT_EQ(c.regressions(), 2);  // b on both rows
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(c.pairs[i].variant, "b");
    EXPECT_EQ(c.pairs[i].verdict, Verdict::regression);
    EXPECT_NEAR(c.pairs[i].change_pct, 20.0, 3.0);
    EXPECT_LT(c.pairs[i].p_value, 0.001);
  }
  for (size_t i = 2; i < c.pairs.size(); ++i) EXPECT_EQ(c.pairs[i].verdict, Verdict::same);
  // A speed-up is an improvement, not a regression; a threshold above the change silences it.
  EXPECT_EQ(compare_reports(report(kVariants, 9, 1), "old", report(kVariants, 9, 2, "b", 0.8), "new", {}).regressions(), 0);
  CompareOptions loose;
  loose.threshold_pct = 30;
  EXPECT_EQ(compare_reports(report(kVariants, 9, 1), "o", report(kVariants, 9, 2, "b", 1.2), "n", loose).regressions(), 0);
}

TEST(Compare, OneRepetitionIsJudgedByTheThresholdAndSaysSo) {
  const Comparison same = compare_reports(report(kVariants, 1, 1), "old", report(kVariants, 1, 2), "new", {});
  EXPECT_EQ(same.regressions(), 0);
  for (const ComparedPair& p : same.pairs) EXPECT_LT(p.p_value, 0);
  const Comparison slow = compare_reports(report(kVariants, 1, 1), "old", report(kVariants, 1, 2, "c", 1.2), "new", {});
  EXPECT_EQ(slow.regressions(), 2);
  EXPECT_EQ(slow.pairs[0].verdict, Verdict::untested_regression);
}

TEST(Compare, RowsJoinByProblemLineAcrossSuites) {
  // The same problems named by other rows (another suite): joined by the problem line.
  const Comparison c =
      compare_reports(report(kVariants, 9, 1, "", 1, "suite1"), "old", report(kVariants, 9, 2, "", 1, "suite2"), "new", {});
  EXPECT_EQ(c.pairs.size(), 6u);
  EXPECT_EQ(c.only_old + c.only_new, 0);
  const Comparison fewer = compare_reports(report(kVariants, 9, 1), "old", report({{"a", 0.1}}, 9, 2), "new", {});
  EXPECT_EQ(fewer.pairs.size(), 2u);
  EXPECT_EQ(fewer.only_old, 4);
}

TEST(Compare, BadInputNamesTheFile) {
  try {
    compare_reports("not json", "old.json", report(kVariants, 1, 1), "new", {});
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("old.json"), std::string::npos);
  }
  EXPECT_THROW(compare_reports(R"({"benchmarks": []})", "o", report(kVariants, 1, 1), "n", {}), InvalidInput);
  CompareOptions bad;
  bad.alpha = 1.5;
  EXPECT_THROW(compare_reports(report(kVariants, 1, 1), "o", report(kVariants, 1, 1), "n", bad), InvalidInput);
}

}  // namespace
}  // namespace pg::bench
