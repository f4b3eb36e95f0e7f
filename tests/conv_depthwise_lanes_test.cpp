// conv.depthwise's channel lanes: pure depthwise channels-last problems move V channels per
// access (kernels/conv/conv_depthwise.hpp), V the largest of 8, 4, 2 that divides C. The fuzz
// draws at most 6 groups, so C = 8 (a half type's V) never comes from it: this draws C/V items
// of each V the dtype allows, runs the CPU launch and compares with the oracle, and requires
// every (dtype, V) to have run.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <map>
#include <string>
#include <vector>

#include "fuzz/conv_problem_gen.hpp"
#include "kernels/conv/conv_depthwise.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

TEST(ConvDepthwiseOnCpu, EveryChannelLaneWidthMatchesTheOracle) {
  std::map<std::string, int> ran;
  const bool ok = rc::check("conv.depthwise's channel lanes match the oracle", [&] {
    ConvDomain d = ConvDepthwise::domain();
    d.layouts = {Layout::channels_last};
    ConvProblem p = *fuzz::conv_problem(d);
    // C a multiple of 1, 2, 4 or 8; full size: uniform from the first case.
    p.groups = p.c = p.k = (int64_t{1} << *rc::gen::resize(100, rc::gen::inRange(0, 4))) * *rc::gen::inRange<int64_t>(1, 4);
    conv_finalize(p);
    const DataSpec spec = *fuzz::conv_data_spec();
    const ConvExpected e = compute_conv_expected(p, spec);
    const std::vector<unsigned char> dy = encode_values(p.dtype, e.data.dy, "dy"), w = encode_values(p.dtype, e.data.w, "w");
    std::vector<unsigned char> dx = poisoned(p.dtype, static_cast<size_t>(p.x_elems()) * dtype_size(p.dtype));
    const int lanes = with_dtype(p.dtype, [&](auto tag) { return depthwise_lanes<decltype(tag)>(p, dy.data(), dx.data()); });
    ConvDepthwise::launch(CpuExec{}, p, ConvBuffers{dy.data(), w.data(), dx.data(), nullptr});
    const Mismatches bad = compare_with_oracle(p.dtype, dx.data(), OracleAnswer{&e.dx, &e.abs_sum, &e.terms}, 4,
                                              [&](int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); });
    if (bad.wrong > 0)
      RC_FAIL(conv_to_string(p) + " data=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + ": " +
              std::to_string(bad.wrong) + " wrong\n" + bad.detail);
    const std::string path = std::string(dtype_name(p.dtype)) + ", " + std::to_string(lanes) + " channels per item";
    RC_TAG(path);
    if (p.x_elems() > 0) ++ran[path];
  });
  EXPECT_TRUE(ok);
  // f16, bf16: 1, 2, 4, 8; f32: 1, 2, 4; f64: 1, 2.
  EXPECT_EQ(ran.size(), 13u) << "(dtype, lanes) pairs run: " << ran.size() << " of 13";
}

}  // namespace
}  // namespace pg
