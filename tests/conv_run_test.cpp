// The library behind `poolgrad forward|backward --op convNd` (src/harness/conv_run.hpp): shapes in
// either layout, unbatched inputs, the half-precision dtypes, and one line naming the parameter
// for every refusal, raised before any payload is read.
#include <gtest/gtest.h>

#include "kernels/common/numeric.hpp"
#include "src/harness/conv_auto.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/conv_run.hpp"
#include "src/model/invalid_input.hpp"
#include "tests/npy_arrays.hpp"

namespace pg {
namespace {

ConvArgs args(const std::string& op) {
  ConvArgs a;
  a.op = op;
  return a;
}

// The refusal's message, "" when plan_conv accepts.
std::string refusal(const ConvArgs& a, const std::vector<int64_t>& input, const NpyHeader& weight) {
  try {
    plan_conv(a, input, "--input shape", weight);
  } catch (const InvalidInput& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    return m;
  }
  return "";
}

TEST(ConvRun, ShapesFollowTheLayout) {
  ConvArgs a = args("conv2d");
  a.groups = 2;
  a.stride = {2, 1};
  a.padding = {1};
  ConvPlan plan = plan_conv(a, {3, 4, 7, 6}, "--input shape", npy_header(NpyType::f32, {6, 2, 3, 2}));
  EXPECT_EQ(plan.problem.n, 3);
  EXPECT_EQ(plan.problem.c, 4);
  EXPECT_EQ(plan.problem.k, 6);
  EXPECT_EQ(plan.problem.kernel[1], 3);
  EXPECT_EQ(plan.problem.kernel[2], 2);
  EXPECT_EQ(plan.output_shape, (std::vector<int64_t>{3, 6, 4, 7}));  // (7+2-3)/2+1, (6+2-2)/1+1
  a.layout = "NHWC";
  plan = plan_conv(a, {3, 7, 6, 4}, "--input shape", npy_header(NpyType::f32, {6, 3, 2, 2}));
  EXPECT_EQ(plan.problem.c, 4);
  EXPECT_EQ(plan.problem.in[1], 7);
  EXPECT_EQ(plan.output_shape, (std::vector<int64_t>{3, 4, 7, 6}));
  plan = plan_conv(a, {7, 6, 4}, "--input shape", npy_header(NpyType::f32, {6, 3, 2, 2}));
  EXPECT_TRUE(plan.unbatched);
  EXPECT_EQ(plan.output_shape, (std::vector<int64_t>{4, 7, 6}));
}

TEST(ConvRun, SameAndPadsReachTheProblem) {
  ConvArgs a = args("conv3d");
  a.pad_mode = ConvPadMode::same;
  a.dilation = {1, 2, 3};
  const ConvPlan same = plan_conv(a, {1, 1, 4, 5, 6}, "--input shape", npy_header(NpyType::f64, {1, 1, 2, 3, 2}));
  EXPECT_EQ(same.output_shape, (std::vector<int64_t>{1, 1, 4, 5, 6}));
  EXPECT_EQ(same.problem.pad_begin[0], 0);  // total 1
  EXPECT_EQ(same.problem.pad_end[0], 1);
  EXPECT_EQ(same.problem.pad_begin[1], 2);  // total 4
  EXPECT_EQ(same.problem.pad_end[1], 2);
  EXPECT_EQ(same.problem.pad_begin[2], 1);  // total 3
  EXPECT_EQ(same.problem.pad_end[2], 2);
  a = args("conv1d");
  a.pads = {0, 3};
  const ConvPlan pads = plan_conv(a, {1, 1, 4}, "--input shape", npy_header(NpyType::f64, {1, 1, 2}));
  EXPECT_EQ(pads.problem.pad_end[2], 3);
  EXPECT_EQ(pads.output_shape, (std::vector<int64_t>{1, 1, 6}));
}

TEST(ConvRun, EachBadParameterIsNamed) {
  const std::vector<int64_t> image = {2, 4, 6, 5};
  const NpyHeader w = npy_header(NpyType::f32, {6, 2, 3, 3});
  auto with = [](auto change) {
    ConvArgs a = args("conv2d");
    a.groups = 2;
    change(a);
    return a;
  };
  struct Bad {
    ConvArgs args;
    std::string says;
  };
  const std::vector<Bad> cases = {
      {with([](ConvArgs& a) { a.op = "conv4d"; }), "--op = conv4d must be conv1d, conv2d or conv3d"},
      {with([](ConvArgs& a) { a.layout = "NWHC"; }), "--layout = NWHC must be NCHW or NHWC"},
      {with([](ConvArgs& a) { a.groups = 0; }), "groups = 0 must be >= 1"},
      {with([](ConvArgs& a) { a.groups = 3; }), "groups = 3 must divide the input channels C = 4"},
      {with([](ConvArgs& a) { a.groups = 4; }), "groups = 4 must divide the output channels K = 6"},
      {with([](ConvArgs& a) { a.stride = {1, 0}; }), "stride W = 0 must be >= 1"},
      {with([](ConvArgs& a) { a.stride = {1, 1, 1}; }), "--stride = 1,1,1 has 3 values; a 2D op takes 1 or 2"},
      {with([](ConvArgs& a) { a.dilation = {-1}; }), "dilation H = -1 must be >= 1"},
      {with([](ConvArgs& a) { a.dilation = {3}; }), "kernel_size H = 3 with dilation 3 spans 7, larger than the padded input 6"},
      {with([](ConvArgs& a) { a.padding = {0, -2}; }), "padding begin W = -2 must be non-negative"},
      {with([](ConvArgs& a) { a.pads = {0, 0, 0, -1}; }), "padding end W = -1 must be non-negative"},
      {with([](ConvArgs& a) { a.pads = {1, 1}; }), "--pads = 1,1 has 2 values; a 2D op takes 4 (every begin, then every end)"},
      {with([](ConvArgs& a) { a.padding = {1}, a.pads = {1, 1, 1, 1}; }), "--padding and --pads exclude each other"},
      {with([](ConvArgs& a) { a.pad_mode = ConvPadMode::valid, a.padding = {1}; }), "--padding and --pads exclude each other"},
      {with([](ConvArgs& a) { a.pad_mode = ConvPadMode::same, a.stride = {2, 1}; }),
       "stride H = 2 must be 1 with padding='same'"},
  };
  for (const Bad& b : cases)
    EXPECT_NE(refusal(b.args, image, w).find(b.says), std::string::npos) << refusal(b.args, image, w) << " / wanted: " << b.says;

  const ConvArgs ok = with([](ConvArgs&) {});
  EXPECT_EQ(refusal(ok, image, w), "");
  EXPECT_EQ(refusal(ok, {4, 6}, w), "--input shape (4, 6) has rank 2; conv2d takes rank 4 (batched) or 3 (unbatched)");
  EXPECT_EQ(refusal(ok, image, npy_header(NpyType::f32, {6, 2, 3})),
            "--weight shape (6, 2, 3) has rank 3; conv2d takes rank 4 (K, C/groups, kernel...)");
  EXPECT_EQ(refusal(ok, image, npy_header(NpyType::f32, {6, 4, 3, 3})),
            "--weight shape (6, 4, 3, 3) has 4 input channels per group; input C = 4 with groups = 2 needs 2");
  EXPECT_EQ(refusal(ok, image, npy_header(NpyType::i64, {6, 2, 3, 3})),
            "--weight dtype int64 must be float16, bfloat16, float32 or float64");
  EXPECT_EQ(refusal(ok, {0, 4, 6, 5}, w), "");  // an empty batch, as PyTorch takes it
  EXPECT_EQ(refusal(ok, {-1, 4, 6, 5}, w), "batch N = -1 must be >= 0");
  EXPECT_EQ(refusal(ok, {2, 4, 0, 5}, w), "input size H = 0 must be >= 1");
  EXPECT_NE(refusal(ok, {int64_t{1} << 40, 4, int64_t{1} << 20, 5}, w).find("overflows int64"), std::string::npos);
}

TEST(ConvRun, TensorsMustMatchThePlan) {
  const ConvPlan plan = plan_conv(args("conv1d"), {1, 2, 5}, "--input-size", npy_header(NpyType::f32, {3, 2, 2}));
  EXPECT_EQ(refusal_of([&] { check_conv_input(plan, npy_header(NpyType::f64, {1, 2, 5})); }),
            "--input dtype float64 does not match --weight dtype float32");
  EXPECT_EQ(refusal_of([&] { check_conv_grad_output(plan, npy_header(NpyType::f32, {1, 3, 5})); }),
            "--grad-output shape (1, 3, 5) does not match the output shape (1, 3, 4)");
  EXPECT_EQ(refusal_of([&] { check_conv_grad_output(plan, npy_header(NpyType::bf16, {1, 3, 4})); }),
            "--grad-output dtype bfloat16 does not match --weight dtype float32");
  EXPECT_EQ(refusal_of([&] { check_conv_grad_output(plan, npy_header(NpyType::f32, {1, 3, 4})); }), "");
}

// f16 and bf16 go through the oracle in double and come back rounded to nearest-even: with
// values exact in both types the result is exact too.
TEST(ConvRun, HalfPrecisionDtypes) {
  for (NpyType t : {NpyType::f16, NpyType::bf16}) {
    const ConvPlan plan = plan_conv(args("conv1d"), {1, 1, 4}, "--input shape", npy_header(t, {1, 1, 2}));
    const NpyArray y = conv_forward_npy(plan, npy_array(t, {1, 1, 4}, {1, 2, 3, 4}), npy_array(t, {1, 1, 2}, {0.5, -2}));
    EXPECT_EQ(y.header.type, t);
    EXPECT_EQ(npy_values(y), (std::vector<double>{-3.5, -5, -6.5}));
    const NpyArray dx = conv_backward_npy(plan, npy_array(t, {1, 1, 2}, {0.5, -2}), npy_array(t, {1, 1, 3}, {1, 1, 1}));
    EXPECT_EQ(npy_values(dx), (std::vector<double>{0.5, -1.5, -1.5, -2}));
  }
}

// backward --variant runs a registered conv kernel on the named backend through ConvPreparedRun,
// verified against the oracle: the same dx as the oracle's on exact data; an unknown or
// unsupported variant and an absent backend are refused by name.
TEST(ConvRun, VariantsOnABackend) {
  ConvArgs a = args("conv2d");
  a.stride = {2};
  a.padding = {1};
  const ConvPlan plan = plan_conv(a, {2, 2, 5, 6}, "--input-size", npy_header(NpyType::f32, {3, 2, 3, 3}));
  std::vector<double> w(54), dy(static_cast<size_t>(plan.problem.y_elems()));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(static_cast<int>(i % 5) - 2);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(static_cast<int>(i % 7) - 3);
  const NpyArray wa = npy_array(NpyType::f32, {3, 2, 3, 3}, w), dya = npy_array(NpyType::f32, {2, 3, 3, 3}, dy);
  const std::vector<double> oracle = npy_values(conv_backward_npy(plan, wa, dya));
  for (const ConvVariant& v : conv_variants()) {
    if (v.gpu_only || !v.supports(plan.problem, BackendKind::cpu).ok) continue;  // conv.gemm.tc: f16 and bf16 only
    EXPECT_EQ(npy_values(conv_backward_npy(plan, wa, dya, v.name, "cpu")), oracle) << v.name;
  }
  EXPECT_EQ(npy_values(conv_backward_npy(plan, wa, dya, "auto", "cpu")), oracle);
  EXPECT_EQ(refusal_of([&] { conv_backward_npy(plan, wa, dya, "no.such", "cpu"); }),
            "--variant = no.such is not a registered conv variant (see poolgrad variants)");
  EXPECT_EQ(refusal_of([&] { conv_backward_npy(plan, wa, dya, "oracle", "gpu0"); }),
            "--backend gpu0 runs a --variant; the oracle runs on the host");
  EXPECT_EQ(refusal_of([&] { conv_backward_npy(plan, wa, dya, "conv.gather", "tpu"); }), "--backend 'tpu' must be cpu or gpuN");
}

// `--variant auto` on a GPU tries the variant measured fastest for the problem's class first.
TEST(ConvRun, AutoTriesTheMeasuredFastestFirst) {
  ConvProblem p;
  p.dims = 2;
  p.n = 2;
  p.c = 64;
  p.k = 64;
  set_window(p, uniform_window({9, 9}, 3, 1, 1));
  conv_finalize(p);
  auto first = [](const ConvProblem& q, BackendKind b) {
    const std::vector<std::string> order = conv_auto_order(q, b);
    return order.empty() ? std::string("registry order") : order.front();
  };
  EXPECT_EQ(first(p, BackendKind::gpu), "conv.winograd");
  EXPECT_EQ(first(p, BackendKind::cpu), "registry order");
  ConvProblem strided = p;
  set_window(strided, uniform_window({9, 9}, 3, 2, 1));
  conv_finalize(strided);
  EXPECT_EQ(first(strided, BackendKind::gpu), "conv.gemm");
  ConvProblem narrow = p;
  narrow.c = 16;
  conv_finalize(narrow);
  EXPECT_EQ(first(narrow, BackendKind::gpu), "conv.gemm");
  auto k3s1 = [](int dims, std::vector<int64_t> in) {
    ConvProblem q;
    q.dims = dims;
    q.n = 2;
    q.c = q.k = 64;
    set_window(q, uniform_window(std::move(in), 3, 1, 1));
    conv_finalize(q);
    EXPECT_EQ(conv_validate(q), "");
    return q;
  };
  const ConvProblem line = k3s1(1, {40}), cube = k3s1(3, {6, 6, 6});
  EXPECT_EQ(first(line, BackendKind::gpu), "conv.winograd");
  EXPECT_EQ(first(cube, BackendKind::gpu), "conv.gemm");
  ConvProblem half = p;
  half.dtype = DType::bf16;
  EXPECT_EQ(first(half, BackendKind::gpu), "conv.gemm.tma");
  // C/groups 64: conv.gemm.wgmma's column tile half empty, so conv.gemm.tc comes before it.
  EXPECT_EQ(conv_auto_order(half, BackendKind::gpu)[1], "conv.gemm.tc");
  ConvProblem wide_half = half;
  wide_half.c = 128;
  conv_finalize(wide_half);
  EXPECT_EQ(first(wide_half, BackendKind::gpu), "conv.gemm.tma");
  EXPECT_EQ(conv_auto_order(wide_half, BackendKind::gpu)[1], "conv.gemm.wgmma");
  ConvProblem depthwise = half;
  depthwise.groups = 64;
  conv_finalize(depthwise);
  EXPECT_EQ(first(depthwise, BackendKind::gpu), "conv.depthwise");
  // Every name it tries is registered.
  for (const ConvProblem& q : {p, strided, narrow, line, cube, half, depthwise})
    for (const std::string& name : conv_auto_order(q, BackendKind::gpu)) EXPECT_NE(find_conv_variant(name), nullptr) << name;
}

}  // namespace
}  // namespace pg
