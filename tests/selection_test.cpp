// The selection table (src/harness/selection.hpp): what a problem class keeps apart and what it merges,
// how variants rank inside a class, and the file round trip --variant auto reads.
#include <gtest/gtest.h>

#include "src/model/invalid_input.hpp"
#include "src/harness/selection.hpp"
#include "tests/problems.hpp"

namespace pg {
namespace {

using test::pool2d;

TEST(ProblemClass, NamesEveryAxisThatPicksABody) {
  EXPECT_EQ(problem_class(pool2d(Op::max, 32, 64, 112, 3, 2, 1)), "max 2d cf f32 k3s2p1 idx=plane/i64 L");
  Problem cl = pool2d(Op::avg, 1, 4, 56, 2, 2, 0);
  cl.layout = Layout::channels_last;
  cl.dtype = DType::bf16;
  cl.divisor = Divisor::exclude_pad;
  EXPECT_EQ(problem_class(cl), "avg 2d cl bf16 k2s2p0 exclude_pad S");
}

TEST(ProblemClass, GlobalWindowsShareOneClassWhateverTheirSize) {
  const Problem seven = pool2d(Op::avg, 128, 2048, 7, 7, 7, 0), eight = pool2d(Op::avg, 128, 2048, 8, 8, 8, 0);
  EXPECT_EQ(problem_class_any_size(seven), "avg 2d cf f32 global include_pad");
  EXPECT_EQ(problem_class_any_size(eight), problem_class_any_size(seven));
}

TEST(ProblemClass, CeilModeCountsOnlyWhereItAddsAWindow) {
  Problem even = pool2d(Op::max, 1, 1, 8, 2, 2, 0), odd = pool2d(Op::max, 1, 1, 9, 2, 2, 0);
  const std::string even_floor = problem_class(even), odd_floor = problem_class(odd);
  even.ceil_mode = odd.ceil_mode = true;
  finalize(even);
  finalize(odd);
  EXPECT_EQ(problem_class(even), even_floor);
  EXPECT_EQ(problem_class(odd), "max 2d cf f32 k2s2p0 ceil idx=plane/i64 S");
  EXPECT_NE(problem_class(odd), odd_floor);
}

TEST(ProblemClass, AnisotropicAsymmetricAndDilatedWindowsSpellEachAxis) {
  Problem p;
  p.dims = 3;
  p.in[0] = 8;
  p.in[1] = p.in[2] = 32;
  p.kernel[0] = 1;
  p.kernel[1] = p.kernel[2] = 3;
  p.stride[0] = 1;
  p.stride[1] = p.stride[2] = 2;
  p.pad_begin[1] = p.pad_begin[2] = 1;
  p.dilation[1] = p.dilation[2] = 2;
  p.pad_limit = PadLimit::none;
  finalize(p);
  EXPECT_EQ(problem_class(p), "max 3d cf f32 k1x3x3s1x2x2p0x1x1-0d1x2x2 idx=plane/i64 S");
}

TEST(ProblemClass, SizeBucketsByInputBytes) {
  EXPECT_STREQ(size_bucket(pool2d(Op::max, 1, 1, 1023, 2, 2, 0)), "S");      // 4 MiB less a little
  EXPECT_STREQ(size_bucket(pool2d(Op::max, 1, 4, 1024, 2, 2, 0)), "M");      // 16 MiB
  EXPECT_STREQ(size_bucket(pool2d(Op::max, 16, 4, 1024, 2, 2, 0)), "L");     // 256 MiB
  EXPECT_EQ(problem_class_any_size(pool2d(Op::max, 16, 4, 1024, 2, 2, 0)) + " L",
            problem_class(pool2d(Op::max, 16, 4, 1024, 2, 2, 0)));
}

TEST(BuildSelection, RanksByWorstSlowdownAndPutsFullCoverageFirst) {
  const Problem a = pool2d(Op::max, 64, 64, 112, 3, 2, 1), b = pool2d(Op::max, 32, 128, 112, 3, 2, 1);
  ASSERT_EQ(problem_class(a), problem_class(b));
  const std::vector<TimedRun> runs = {
      {"fast.on.a", "a", a, 1.0}, {"fast.on.a", "a", a, 1.5},  // timed twice: the better time counts
      {"fast.on.a", "b", b, 2.2}, {"even", "a", a, 1.1},       {"even", "b", b, 2.0},
      {"only.b", "b", b, 1.0},
  };
  const std::vector<SelectionEntry> entries = build_selection(runs, "test");
  ASSERT_EQ(entries.size(), 1u);
  const SelectionEntry& e = entries[0];
  EXPECT_EQ(e.rows, 2);
  ASSERT_EQ(e.ranking.size(), 3u);
  // Row a's best is 1.0 (fast.on.a), row b's 1.0 (only.b): "even" is 1.1x and 2.0x (worst 2.0);
  // "fast.on.a" 1.0x and 2.2x (worst 2.2). "only.b" is fastest where it ran, but ran one row of two.
  EXPECT_EQ(e.ranking[0].variant, "even");
  EXPECT_DOUBLE_EQ(e.ranking[0].mean_slowdown, 1.55);
  EXPECT_DOUBLE_EQ(e.ranking[0].worst_slowdown, 2.0);
  EXPECT_EQ(e.ranking[1].variant, "fast.on.a");
  EXPECT_DOUBLE_EQ(e.ranking[1].mean_slowdown, 1.6);
  EXPECT_EQ(e.ranking[2].variant, "only.b");
  EXPECT_EQ(e.ranking[2].rows, 1);
  // A lower mean does not outrank a lower worst case: issue 16 asks auto to be close on every row.
  // "steady": 1.03x, 1.03x, 1.0x (mean 1.02, worst 1.03); "spiky": 1.0x, 1.0x, 1.04x (mean 1.013, worst 1.04).
  const Problem c = pool2d(Op::max, 16, 256, 112, 3, 2, 1);
  ASSERT_EQ(problem_class(c), problem_class(a));
  const std::vector<SelectionEntry> minimax = build_selection({{"steady", "a", a, 1.03}, {"steady", "b", b, 1.03},
                                                               {"steady", "c", c, 1.0}, {"spiky", "a", a, 1.0},
                                                               {"spiky", "b", b, 1.0}, {"spiky", "c", c, 1.04}}, "t");
  EXPECT_EQ(minimax[0].ranking[0].variant, "steady");
  EXPECT_LT(minimax[0].ranking[1].mean_slowdown, minimax[0].ranking[0].mean_slowdown);
  EXPECT_NEAR(e.margin_pct(), 10.0, 1e-9);
}

TEST(BuildSelection, MarginIsTheRunnerUpsExtraWorstSlowdown) {
  const Problem a = pool2d(Op::avg, 64, 64, 112, 2, 2, 0);
  const std::vector<SelectionEntry> entries =
      build_selection({{"winner", "a", a, 1.0}, {"second", "a", a, 1.25}}, "test");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].ranking[0].variant, "winner");
  EXPECT_NEAR(entries[0].margin_pct(), 25.0, 1e-9);
  EXPECT_LT(build_selection({{"alone", "a", a, 1.0}}, "test")[0].margin_pct(), 0);
}

TEST(SelectionFile, RoundTripsAndRefusesOtherJson) {
  const Problem a = pool2d(Op::avg, 64, 64, 112, 2, 2, 0);
  const SelectionTable built = build_selection_table(
      {{"winner", "a", a, 1.0, true}, {"second", "a", a, 2.0, false}}, "GPU X (sm_90)", {"r.json"}, false);
  const SelectionTable read = selection_from_json(selection_to_json(built), "sel.json");
  EXPECT_EQ(read.device, "GPU X (sm_90)");
  EXPECT_EQ(read.source, "sel.json");
  ASSERT_EQ(read.classes.size(), 1u);
  EXPECT_EQ(read.classes[0].key, built.classes[0].key);
  ASSERT_EQ(read.classes[0].ranking.size(), 2u);
  EXPECT_EQ(read.classes[0].ranking[1].variant, "second");
  EXPECT_DOUBLE_EQ(read.classes[0].ranking[1].mean_slowdown, 2.0);
  // The exact problem with every variant's time and determinism, and the model's weights.
  ASSERT_EQ(read.problems.size(), 1u);
  EXPECT_EQ(to_string(read.problems[0].problem), to_string(a));
  ASSERT_EQ(read.problems[0].times.size(), 2u);
  EXPECT_EQ(read.problems[0].times[0].variant, "winner");
  EXPECT_FALSE(read.problems[0].times[1].deterministic);
  EXPECT_EQ(read.weights.w, built.weights.w);
  EXPECT_THROW(selection_from_json(R"({"benchmarks": []})", "report.json"), InvalidInput);
  EXPECT_THROW(selection_from_json("not json", "x"), InvalidInput);
  EXPECT_THROW(selection_from_json(R"({"format": "poolgrad-selection/1", "classes": {"k": {"rows": 1}}})", "x"),
               InvalidInput);
  EXPECT_THROW(selection_from_json(R"({"format": "poolgrad-selection/2", "classes": {},
      "problems": [{"row": "r", "problem": "op=max2d n=oops", "times": [{"variant": "v", "ms": 1}]}]})", "x"),
               InvalidInput);
  EXPECT_THROW(selection_from_json(R"({"format": "poolgrad-selection/2", "classes": {},
      "problems": [{"row": "r", "problem": ")" + to_string(a) + R"(", "times": [{"variant": "v", "ms": -1}]}]})", "x"),
               InvalidInput);
}

// The model ranks a variant by its slowdowns on the measured problems nearest to the new one.
TEST(SelectionModel, FollowsTheNearestMeasuredProblems) {
  // "disjoint" wins k2s2 rows, "overlap" wins k3s1 rows; a new k2s2 shape at another size and a
  // new k3s1 shape must follow their own kind.
  std::vector<Example> ex;
  for (int64_t hw : {56, 112, 224}) {
    ex.push_back({pool2d(Op::max, 32, 64, hw, 2, 2, 0), "k2s2 " + std::to_string(hw), {{"disjoint", 1.0}, {"overlap", 2.0}}});
    ex.push_back({pool2d(Op::max, 32, 64, hw, 3, 1, 1), "k3s1 " + std::to_string(hw), {{"disjoint", 3.0}, {"overlap", 1.0}}});
  }
  const ModelWeights w = default_model_weights();
  EXPECT_EQ(model_rank(pool2d(Op::max, 8, 256, 80, 2, 2, 0), {"disjoint", "overlap"}, ex, w).front().variant, "disjoint");
  EXPECT_EQ(model_rank(pool2d(Op::max, 8, 256, 80, 3, 1, 1), {"disjoint", "overlap"}, ex, w).front().variant, "overlap");
  // Another op's examples say nothing: both variants sit at the prior, level.
  const std::vector<Prediction> avg = model_rank(pool2d(Op::avg, 8, 256, 80, 2, 2, 0), {"disjoint", "overlap"}, ex, w);
  EXPECT_DOUBLE_EQ(avg[0].slowdown, 1.0);
  EXPECT_DOUBLE_EQ(avg[1].slowdown, 1.0);
  EXPECT_TRUE(avg[0].nearest.empty());
  // Leave-one-out on these: every pick right.
  const ModelScore s = leave_one_out(ex, w);
  EXPECT_EQ(s.problems, 6);
  EXPECT_EQ(s.within_3pct, 6);
  EXPECT_DOUBLE_EQ(s.worst, 1.0);
}

TEST(SelectionModel, LeaveOneOutPicksOnlyDeterministicVariantsWhereAnyRan) {
  // "atomic" is fastest everywhere but not deterministic: the default's rule never picks it where
  // a deterministic variant ran, and the score is the pick against the fastest deterministic one
  // (an atomic pick would score 1/1.5). A vendor's variant is never a pick either.
  std::vector<Example> ex;
  for (int64_t hw : {56, 112})
    ex.push_back({pool2d(Op::avg, 32, 64, hw, 2, 2, 0), std::to_string(hw),
                  {{"atomic", 1.0, false}, {"gather", 1.5, true}, {"vendor", 0.5, true, true}, {"slow", 3.0, true}}});
  EXPECT_DOUBLE_EQ(ex[0].best_ms(), 1.0);
  EXPECT_DOUBLE_EQ(ex[0].best_default_ms(), 1.5);
  const ModelScore s = leave_one_out(ex, default_model_weights());
  EXPECT_EQ(s.within_3pct, 2);
  EXPECT_DOUBLE_EQ(s.geomean, 1.0);
  EXPECT_DOUBLE_EQ(s.worst, 1.0);
}

TEST(SelectionModel, FitNeverScoresWorseThanItsStart) {
  std::vector<Example> ex;
  for (int64_t hw : {28, 40, 56, 80, 112, 160, 224}) {
    ex.push_back({pool2d(Op::max, 32, 64, hw, 2, 2, 0), "a" + std::to_string(hw), {{"disjoint", 1.0}, {"overlap", 1.6}}});
    ex.push_back({pool2d(Op::max, 32, 64, hw, 3, 1, 1), "b" + std::to_string(hw), {{"disjoint", 1.7}, {"overlap", 1.0}}});
  }
  const ModelWeights start = default_model_weights();
  const ModelWeights fitted = fit_model_weights(ex, start);
  EXPECT_LE(leave_one_out(ex, fitted).loss(), leave_one_out(ex, start).loss());
}

}  // namespace
}  // namespace pg
