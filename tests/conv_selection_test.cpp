// Conv variants ranked per class from conv_bench reports (src/harness/conv_selection.hpp,
// bench/conv_report_runs.hpp): what a class keeps apart, how the ranking and conv auto's audit
// read the times, and which report rows are known.
#include <gtest/gtest.h>

#include <string>

#include "bench/conv_report_runs.hpp"
#include "bench/conv_rows.hpp"
#include "src/harness/conv_selection.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

ConvProblem conv2d(int64_t c, int64_t k, int64_t groups, int64_t stride) {
  ConvProblem p;
  p.n = 2;
  p.c = c;
  p.k = k;
  p.groups = groups;
  for (int a = 1; a < kAxes; ++a) {
    p.in[a] = 16;
    p.kernel[a] = 3;
    p.stride[a] = stride;
    p.pad_begin[a] = p.pad_end[a] = 1;
  }
  conv_finalize(p);
  return p;
}

TEST(ConvProblemClass, NamesTheWindowLayoutDtypeAndChannelBand) {
  EXPECT_EQ(conv_problem_class(conv2d(64, 64, 1, 1)), "conv 2d cf f32 k3s1d1 C/g>=32");
  EXPECT_EQ(conv_problem_class(conv2d(16, 16, 1, 2)), "conv 2d cf f32 k3s2d1 C/g<32");
  EXPECT_EQ(conv_problem_class(conv2d(32, 32, 8, 1)), "conv 2d cf f32 k3s1d1 C/g<=8");
  ConvProblem dw = conv2d(32, 32, 32, 1);
  dw.layout = Layout::channels_last;
  dw.dtype = DType::bf16;
  EXPECT_EQ(conv_problem_class(dw), "conv 2d cl bf16 k3s1d1 depthwise");
  ConvProblem aniso = conv2d(64, 64, 1, 1);
  aniso.kernel[1] = 1;
  aniso.pad_begin[1] = aniso.pad_end[1] = 0;
  conv_finalize(aniso);
  EXPECT_EQ(conv_problem_class(aniso), "conv 2d cf f32 k1x3s1d1 C/g>=32");
  // Padding does not choose the body: the same class.
  ConvProblem unpadded = conv2d(64, 64, 1, 1);
  unpadded.pad_begin[2] = unpadded.pad_end[2] = 0;
  conv_finalize(unpadded);
  EXPECT_EQ(conv_problem_class(unpadded), conv_problem_class(conv2d(64, 64, 1, 1)));
}

TEST(ConvSelection, RanksByWorstSlowdownAndAuditsTheFirstVariantThatRan) {
  const ConvProblem wide = conv2d(64, 64, 1, 1), other = conv2d(128, 128, 1, 1);
  const std::vector<ConvTimedRun> runs = {
      {"conv.gemm", "a", wide, 2.0},     {"conv.winograd", "a", wide, 1.0},
      {"conv.gemm", "b", other, 1.0},    {"conv.winograd", "b", other, 1.5},
      {"conv.winograd", "b", other, 0.9},  // timed twice: the better time counts
  };
  const std::vector<SelectionEntry> e = build_conv_selection(runs, "test");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].key, "conv 2d cf f32 k3s1d1 C/g>=32");
  EXPECT_EQ(e[0].rows, 2);
  ASSERT_EQ(e[0].ranking.size(), 2u);
  EXPECT_EQ(e[0].ranking[0].variant, "conv.winograd");
  EXPECT_DOUBLE_EQ(e[0].ranking[0].worst_slowdown, 1.0);
  EXPECT_DOUBLE_EQ(e[0].ranking[1].worst_slowdown, 2.0);

  // An order that tries conv.gemm first misses row a; one that tries an untimed name first falls
  // through to the next; one that names nothing timed counts the row apart.
  const ConvAuditResult gemm_first =
      audit_conv_order(runs, [](const ConvProblem&) { return std::vector<std::string>{"conv.gemm"}; }, 3.0);
  EXPECT_EQ(gemm_first.rows, 2);
  EXPECT_EQ(gemm_first.within, 0);  // row b: conv.gemm 1.0 against conv.winograd 0.9
  ASSERT_EQ(gemm_first.misses.size(), 2u);
  EXPECT_NE(gemm_first.misses[0].find("row a: auto tries conv.gemm first, 100.0% behind conv.winograd"), std::string::npos);
  const ConvAuditResult through = audit_conv_order(
      runs, [](const ConvProblem&) { return std::vector<std::string>{"conv.nothing", "conv.winograd"}; }, 3.0);
  EXPECT_EQ(through.within, 2);
  const ConvAuditResult none =
      audit_conv_order(runs, [](const ConvProblem&) { return std::vector<std::string>{"conv.nothing"}; }, 3.0);
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.untimed, 2);
}

TEST(ConvReportRuns, ReadsConvBenchRowsAndListsUnknownOnes) {
  const std::string row = bench::conv_rows().front().name;
  const std::string text = R"js({"context": {"device": "GPU (sm_90)"}, "benchmarks": [
    {"name": "conv.gemm/)js" + row + R"js(/manual_time", "real_time": 1500, "time_unit": "us"},
    {"name": "conv.gather/)js" + row + R"js(/manual_time", "real_time": 3, "time_unit": "ms", "error_occurred": true},
    {"name": "conv.gemm/no such row/manual_time", "real_time": 1, "time_unit": "ms"}]})js";
  EXPECT_TRUE(bench::is_conv_report(text));
  const bench::ConvReportRuns r = bench::conv_report_runs(text, "r.json");
  EXPECT_EQ(r.device, "GPU (sm_90)");
  ASSERT_EQ(r.runs.size(), 1u);  // the failed run is left out
  EXPECT_EQ(r.runs[0].variant, "conv.gemm");
  EXPECT_DOUBLE_EQ(r.runs[0].ms, 1.5);
  EXPECT_EQ(conv_to_string(r.runs[0].problem), conv_to_string(bench::conv_rows().front().problem));
  EXPECT_EQ(r.unknown, (std::vector<std::string>{"conv.gemm/no such row"}));
  EXPECT_FALSE(bench::is_conv_report(R"({"benchmarks": [{"name": "max.gather/x"}]})"));
  EXPECT_FALSE(bench::is_conv_report("not json"));
  EXPECT_THROW(bench::conv_report_runs("[]", "r.json"), InvalidInput);
}

}  // namespace
}  // namespace pg
