// Profiles, validation and the library behind `poolgrad forward|backward`: every refusal is
// one line naming the parameter and its value, raised before any payload is read.
#include <gtest/gtest.h>

#include <cstring>

#include "src/model/invalid_input.hpp"
#include "src/harness/pool_run.hpp"
#include "src/model/profile.hpp"
#include "src/harness/registry.hpp"
#include "kernels/common/numeric.hpp"
#include "tests/npy_arrays.hpp"

namespace pg {
namespace {

std::vector<double> values(const NpyArray& a) {
  std::vector<double> v(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(npy_float_dtype(a.header.type), a.data.data(), static_cast<int64_t>(i));
  return v;
}

PoolArgs args(const std::string& op, std::vector<int64_t> kernel) {
  PoolArgs a;
  a.op = op;
  a.kernel_size = std::move(kernel);
  return a;
}

// The refusal's message, "" when plan_pool accepts.
std::string refusal(const PoolArgs& a, const NpyHeader& x) {
  try {
    plan_pool(a, x);
  } catch (const InvalidInput& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    return m;
  }
  return "";
}

const NpyHeader kImage = npy_header(NpyType::f32, {2, 3, 6, 5});

TEST(Profiles, PresetsFollowSemantics) {
  Problem p;
  ASSERT_TRUE(apply_profile("pytorch", p));
  EXPECT_EQ(p.divisor, Divisor::include_pad);
  EXPECT_EQ(p.nan, NanRule::propagate);
  EXPECT_EQ(p.index_format, IndexFormat::plane);
  EXPECT_EQ(p.index_type, IndexType::i64);
  EXPECT_EQ(p.pad_limit, PadLimit::half_kernel);
  EXPECT_TRUE(p.avg3d_input_at_least_kernel);
  ASSERT_TRUE(apply_profile("onnx", p));
  EXPECT_EQ(p.divisor, Divisor::exclude_pad);  // count_include_pad defaults to 0
  EXPECT_EQ(p.nan, NanRule::ignore);
  EXPECT_EQ(p.index_format, IndexFormat::global_row);
  EXPECT_EQ(p.pad_limit, PadLimit::none);
  EXPECT_FALSE(p.avg3d_input_at_least_kernel);
  for (const char* name : {"miopen", "onednn"}) {
    ASSERT_TRUE(apply_profile(name, p));
    EXPECT_EQ(p.index_format, IndexFormat::window) << name;
    EXPECT_EQ(p.index_type, IndexType::u8) << name;
    EXPECT_EQ(p.divisor, Divisor::full_kernel) << name;
  }
  ASSERT_TRUE(apply_profile("ck", p));
  EXPECT_EQ(p.index_format, IndexFormat::global_row);
  EXPECT_EQ(p.index_type, IndexType::i32);
  EXPECT_EQ(p.divisor, Divisor::full_kernel);
  ASSERT_TRUE(apply_profile("cudnn", p));
  EXPECT_EQ(p.divisor, Divisor::full_kernel);
  EXPECT_FALSE(apply_profile("tensorflow", p));
}

TEST(Profiles, AxesCanBeOverridden) {
  PoolArgs a = args("avg_pool2d", {2});
  a.profile = "miopen";
  a.count_include_pad = false;
  EXPECT_EQ(plan_pool(a, kImage).problem.divisor, Divisor::exclude_pad);
  a.profile = "onnx";
  a.count_include_pad = true;
  EXPECT_EQ(plan_pool(a, kImage).problem.divisor, Divisor::include_pad);
  a.padding = {2};  // no pad limit in onnx
  EXPECT_EQ(refusal(a, kImage), "");
  a.profile = "nope";
  EXPECT_NE(refusal(a, kImage).find("--profile = nope is unknown (pytorch, onnx, cudnn, miopen, onednn, ck)"), std::string::npos);
}

TEST(Validation, EachBadParameterIsNamed) {
  struct Bad {
    PoolArgs args;
    std::string says;
  };
  auto with = [](PoolArgs a, auto change) { change(a); return a; };
  const PoolArgs base = args("max_pool2d", {3, 2});
  const std::vector<Bad> cases = {
      {with(base, [](PoolArgs& a) { a.kernel_size = {0, 2}; }), "kernel_size H = 0 must be >= 1"},
      {with(base, [](PoolArgs& a) { a.kernel_size = {3, -1}; a.stride = {1}; }), "kernel_size W = -1 must be >= 1"},
      {with(base, [](PoolArgs& a) { a.stride = {1, 0}; }), "stride W = 0 must be >= 1"},
      {with(base, [](PoolArgs& a) { a.stride = {-2}; }), "stride H = -2 must be >= 1"},
      {with(base, [](PoolArgs& a) { a.dilation = {0}; }), "dilation H = 0 must be >= 1"},
      {with(base, [](PoolArgs& a) { a.padding = {-1}; }), "padding begin H = -1 must be non-negative"},
      {with(base, [](PoolArgs& a) { a.padding = {0, 2}; }), "padding begin W = 2 must be at most half of kernel_size 2"},
      {with(base, [](PoolArgs& a) { a.pads = {0, 2, 0, 2}; }), "padding begin W = 2 must be at most half"},
      {with(base, [](PoolArgs& a) { a.pads = {0, 0, 0, 2}; }), "--pads = 0,0,0,2: profile pytorch pads symmetrically"},
      {with(base, [](PoolArgs& a) { a.auto_pad = "VALID"; }), "--auto-pad = VALID: profile pytorch has no auto_pad"},
      {with(base, [](PoolArgs& a) { a.profile = "cudnn"; a.dilation = {2}; }), "--dilation = 2: max_pool2d has no dilation in profile cudnn"},
      {with(base, [](PoolArgs& a) { a.profile = "miopen"; a.ceil_mode = true; }), "--ceil-mode: profile miopen has no ceil_mode"},
      {with(args("avg_pool2d", {2}), [](PoolArgs& a) { a.profile = "ck"; a.count_include_pad = false; }), "profile ck always counts the padding"},
      {with(args("avg_pool2d", {2}), [](PoolArgs& a) { a.profile = "onnx"; a.divisor_override = 3; }), "profile onnx has no divisor_override"},
      {with(base, [](PoolArgs& a) { a.kernel_size = {7}; }), "output size H = 0 is too small"},
      {with(base, [](PoolArgs& a) { a.kernel_size = {3, 4}; a.dilation = {1, 2}; }), "output size W = 0 is too small"},
      {with(args("avg_pool2d", {2}), [](PoolArgs& a) { a.divisor_override = 0; }), "divisor_override = 0 must not be zero"},
      {with(args("avg_pool2d", {2}), [](PoolArgs& a) { a.dilation = {2}; }), "--dilation = 2: avg_pool2d has no dilation in profile pytorch"},
      {with(base, [](PoolArgs& a) { a.count_include_pad = true; }), "--count-include-pad applies to avg_pool only"},
      {with(base, [](PoolArgs& a) { a.stride = {1, 1, 1}; }), "--stride = 1,1,1 has 3 values; a 2D op takes 1 or 2"},
      {with(base, [](PoolArgs& a) { a.pads = {1, 1}; }), "--pads = 1,1 has 2 values; a 2D op takes 4"},
      {with(base, [](PoolArgs& a) { a.padding = {1}; a.auto_pad = "VALID"; }), "exclude each other"},
      {with(base, [](PoolArgs& a) { a.auto_pad = "SAME"; }), "--auto-pad = SAME must be"},
      {with(base, [](PoolArgs& a) { a.op = "max_pool4d"; }), "--op = max_pool4d must be"},
      {with(base, [](PoolArgs& a) { a.layout = "NCWH"; }), "--layout = NCWH must be NCHW or NHWC"},
      {with(base, [](PoolArgs& a) { a.layout = "NDHWC"; }), "--layout = NDHWC must be NCHW or NHWC"},
      {with(base, [](PoolArgs& a) { a.kernel_size = {}; }), "--kernel-size is required"},
  };
  for (const Bad& b : cases) EXPECT_NE(refusal(b.args, kImage).find(b.says), std::string::npos) << refusal(b.args, kImage) << " / wanted: " << b.says;

  EXPECT_NE(refusal(base, npy_header(NpyType::i32, {1, 1, 4, 4})).find("--input dtype int32 must be float16"), std::string::npos);
  EXPECT_NE(refusal(base, npy_header(NpyType::f32, {4, 4})).find("--input shape (4, 4) has rank 2; max_pool2d takes rank 4"), std::string::npos);
  EXPECT_NE(refusal(base, npy_header(NpyType::f32, {1, 0, 4, 4})).find("channels C = 0"), std::string::npos);
  EXPECT_NE(refusal(base, npy_header(NpyType::f32, {1, 1, 0, 4})).find("input size H = 0 must be >= 1"), std::string::npos);
  EXPECT_NE(refusal(args("avg_pool3d", {2}), npy_header(NpyType::f32, {1, 1, 1, 4, 4})).find("input size D = 1 is smaller than kernel_size 2"), std::string::npos);
  EXPECT_NE(refusal(base, npy_header(NpyType::f32, {int64_t{1} << 40, int64_t{1} << 20, 4, 4})).find("overflows int64"), std::string::npos);
}

TEST(Validation, TensorsMustMatchTheProblem) {
  const PoolPlan plan = plan_pool(args("max_pool2d", {2}), npy_header(NpyType::f32, {1, 2, 4, 4}));
  EXPECT_EQ(plan.output_shape, (std::vector<int64_t>{1, 2, 2, 2}));
  EXPECT_EQ(refusal_of([&] { check_grad_output(plan, npy_header(NpyType::f64, {1, 2, 2, 2})); }),
            "--grad-output dtype float64 does not match --input dtype float32");
  EXPECT_EQ(refusal_of([&] { check_grad_output(plan, npy_header(NpyType::f32, {1, 2, 2, 3})); }),
            "--grad-output shape (1, 2, 2, 3) does not match the output shape (1, 2, 2, 2)");
  EXPECT_EQ(refusal_of([&] { check_indices(plan, npy_header(NpyType::i32, {1, 2, 2, 2})); }),
            "--indices dtype int32 does not match the index type int64 of format plane");
  EXPECT_EQ(refusal_of([&] { check_indices(plan, npy_header(NpyType::i64, {2, 2, 2})); }),
            "--indices shape (2, 2, 2) does not match the output shape (1, 2, 2, 2)");

  // A stored index outside its window is refused and names the output position.
  const NpyArray x = npy_array(NpyType::f32, {1, 2, 4, 4}, std::vector<double>(32, 1.0));
  const NpyArray dy = npy_array(NpyType::f32, {1, 2, 2, 2}, std::vector<double>(8, 1.0));
  NpyArray idx = pool_forward(plan, x).indices;
  const int64_t outside = 15;  // (3, 3): a tap of window (1, 1) only
  std::memcpy(&idx.data[8 * 1], &outside, 8);
  EXPECT_EQ(refusal_of([&] { pool_backward(plan, "oracle", x, dy, &idx); }),
            "--indices: index 15 at output (n=0, c=0, pos=0,0,1) is not a tap of its window inside the input");
}

TEST(PoolRun, BatchZeroGivesAnEmptyResult) {
  const PoolPlan plan = plan_pool(args("avg_pool2d", {2}), npy_header(NpyType::f64, {0, 3, 4, 4}));
  const NpyArray x = npy_array(NpyType::f64, {0, 3, 4, 4}, {});
  const ForwardResult f = pool_forward(plan, x);
  EXPECT_EQ(f.output.header.shape, (std::vector<int64_t>{0, 3, 2, 2}));
  EXPECT_TRUE(f.output.data.empty());
  const NpyArray dx = pool_backward(plan, "oracle", x, f.output, nullptr);
  EXPECT_EQ(dx.header.shape, x.header.shape);
}

TEST(PoolRun, UnbatchedChannelsLastAndAutoPad) {
  // (C, H, W) like PyTorch's unbatched input: the output drops the batch axis too.
  const PoolPlan unbatched = plan_pool(args("max_pool2d", {2}), npy_header(NpyType::f32, {3, 4, 4}));
  EXPECT_TRUE(unbatched.unbatched);
  EXPECT_EQ(unbatched.output_shape, (std::vector<int64_t>{3, 2, 2}));
  PoolArgs nhwc = args("avg_pool2d", {2});
  nhwc.layout = "NHWC";
  const PoolPlan last = plan_pool(nhwc, npy_header(NpyType::f32, {1, 4, 6, 3}));
  EXPECT_EQ(last.problem.c, 3);
  EXPECT_EQ(last.output_shape, (std::vector<int64_t>{1, 2, 3, 3}));
  // Each rank's own layout names: NDHWC is a 3D channels-last problem, NCW a 1D channels-first
  // one; another rank's name is refused with the names this rank takes.
  PoolArgs ndhwc = args("max_pool3d", {2});
  ndhwc.layout = "NDHWC";
  EXPECT_EQ(plan_pool(ndhwc, npy_header(NpyType::f32, {1, 2, 4, 6, 3})).problem.layout, Layout::channels_last);
  PoolArgs ncw = args("avg_pool1d", {2});
  ncw.layout = "NCW";
  EXPECT_EQ(plan_pool(ncw, npy_header(NpyType::f32, {1, 3, 6})).problem.layout, Layout::channels_first);
  ndhwc.layout = "NWC";
  EXPECT_NE(refusal(ndhwc, npy_header(NpyType::f32, {1, 2, 4, 6, 3})).find("--layout = NWC must be NCHW or NHWC (or NCDHW or NDHWC)"), std::string::npos);
  // ONNX SAME_UPPER on L=5, k=3, s=2: out 3, total pad 2 split 1/1; L=6: total 1, at the end.
  PoolArgs same = args("max_pool2d", {3});
  same.stride = {2};
  same.profile = "onnx";
  same.auto_pad = "SAME_UPPER";
  const Problem p = plan_pool(same, npy_header(NpyType::f32, {1, 1, 5, 6})).problem;
  EXPECT_EQ(p.out[1], 3);
  EXPECT_EQ(p.out[2], 3);
  EXPECT_EQ(p.pad_begin[2], 0);
  EXPECT_EQ(p.pad_end[2], 1);
  same.auto_pad = "SAME_LOWER";
  EXPECT_EQ(plan_pool(same, npy_header(NpyType::f32, {1, 1, 5, 6})).problem.pad_begin[2], 1);
}

TEST(PoolRun, BackwardWithAndWithoutIndicesAgree) {
  const PoolPlan plan = plan_pool(args("max_pool1d", {3}), npy_header(NpyType::f64, {1, 1, 6}));
  const NpyArray x = npy_array(NpyType::f64, {1, 1, 6}, {1, 5, 2, 2, 7, 0});
  const NpyArray dy = npy_array(NpyType::f64, {1, 1, 2}, {10, 20});
  const ForwardResult f = pool_forward(plan, x);
  EXPECT_EQ(values(f.output), (std::vector<double>{5, 7}));
  const std::vector<double> want = {0, 10, 0, 0, 20, 0};
  EXPECT_EQ(values(pool_backward(plan, "oracle", x, dy, &f.indices)), want);
  EXPECT_EQ(values(pool_backward(plan, "oracle", x, dy, nullptr)), want);
}

// --variant runs a registered kernel through the registry on the CPU backend: every variant
// that supports a problem must give the oracle's answer on it, and a name that is not
// registered is refused.
TEST(PoolRun, VariantsMatchTheOracle) {
  const PoolPlan max_plan = plan_pool(args("max_pool2d", {3}), npy_header(NpyType::f32, {2, 3, 7, 5}));
  const PoolPlan avg_plan = [] {
    PoolArgs a = args("avg_pool2d", {3});
    a.stride = {2};
    a.padding = {1};
    return plan_pool(a, npy_header(NpyType::f32, {2, 3, 7, 5}));
  }();
  std::vector<double> xs(210);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>((i * 7) % 5);
  const NpyArray x = npy_array(NpyType::f32, {2, 3, 7, 5}, xs);
  for (const Variant& v : variants()) {
    const PoolPlan& plan = v.op == Op::max ? max_plan : avg_plan;
    if (!v.supports(plan.problem, BackendKind::cpu).ok) continue;
    const std::vector<int64_t> out = plan.output_shape;
    const NpyArray dy = npy_array(NpyType::f32, out, std::vector<double>(static_cast<size_t>(plan.problem.out_elems()), 2.0));
    const ForwardResult f = pool_forward(plan, x);
    const NpyArray* idx = v.op == Op::max ? &f.indices : nullptr;
    EXPECT_EQ(values(pool_backward(plan, v.name, x, dy, idx)), values(pool_backward(plan, "oracle", x, dy, idx))) << v.name;
  }
  try {
    pool_backward(max_plan, "no.such.variant", x, npy_array(NpyType::f32, max_plan.output_shape, std::vector<double>(30, 1.0)), nullptr);
    FAIL() << "an unregistered variant must be refused";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "--variant = no.such.variant is not registered (see poolgrad variants)");
  }
}

}  // namespace
}  // namespace pg
