// The convolution oracle on cases computed by hand: 1D/2D/3D, stride, dilation, asymmetric and
// "same" padding, groups (depthwise included), and channels-last against channels-first; and
// conv.winograd's error bound (reference/conv_winograd_bound.hpp) on a case by hand and against
// the direct terms.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "reference/conv_reference.hpp"
#include "reference/conv_winograd_bound.hpp"
#include "src/model/backend.hpp"  // Error

namespace pg {
namespace {

using Values = std::vector<double>;

// A 1D problem (the W axis): N = 1, one channel in and out unless changed afterwards.
ConvProblem line(int64_t length, int64_t kernel, int64_t stride = 1, int64_t dilation = 1, int64_t pad_begin = 0,
                 int64_t pad_end = 0) {
  ConvProblem p;
  p.dims = 1;
  p.in[2] = length;
  p.kernel[2] = kernel;
  p.stride[2] = stride;
  p.dilation[2] = dilation;
  p.pad_begin[2] = pad_begin;
  p.pad_end[2] = pad_end;
  conv_finalize(p);
  EXPECT_EQ(conv_validate(p), "") << conv_to_string(p);
  return p;
}

TEST(ConvReference, OneDimensionalValidCorrelation) {
  // y[o] = x[o] - x[o+2]: a correlation, the kernel not flipped.
  const ConvProblem p = line(5, 3);
  EXPECT_EQ(p.out[2], 3);
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3, 4, 5}, {1, 0, -1}), (Values{-2, -2, -2}));
  const ref::ConvGradient g = ref::conv_backward_data(p, {1, 2, 3}, {1, 0, -1});
  // dx[i] = sum over o of dy[o] * w[i - o].
  EXPECT_EQ(g.dx, (Values{1, 2, 2, -2, -3}));
  EXPECT_EQ(g.terms, (std::vector<int64_t>{1, 2, 3, 2, 1}));
  EXPECT_EQ(g.abs_sum, (Values{1, 2, 4, 2, 3}));
}

TEST(ConvReference, StrideDilationAndAsymmetricPadding) {
  // L=5, k=2, dilation 2, stride 2, pads 1 (begin) and 2 (end): out = (5+3-2-1)/2 + 1 = 3.
  // Tap positions: o=0 -> -1, 1; o=1 -> 1, 3; o=2 -> 3, 5 (past the end).
  const ConvProblem p = line(5, 2, 2, 2, 1, 2);
  EXPECT_EQ(p.out[2], 3);
  EXPECT_EQ(ref::conv_forward(p, {10, 20, 30, 40, 50}, {2, 3}), (Values{3 * 20, 2 * 20 + 3 * 40, 2 * 40}));
  const ref::ConvGradient g = ref::conv_backward_data(p, {1, 10, 100}, {2, 3});
  // Only x1 and x3 are read; x0, x2, x4 get an exact 0 from no term.
  EXPECT_EQ(g.dx, (Values{0, 3 * 1 + 2 * 10, 0, 3 * 10 + 2 * 100, 0}));
  EXPECT_EQ(g.terms, (std::vector<int64_t>{0, 2, 0, 2, 0}));
}

TEST(ConvReference, StrideLargerThanKernelLeavesGaps) {
  const ConvProblem p = line(7, 2, 3);  // windows {0,1}, {3,4}; 2, 5, 6 uncovered
  EXPECT_EQ(p.out[2], 2);
  const ref::ConvGradient g = ref::conv_backward_data(p, {1, -2}, {5, 7});
  EXPECT_EQ(g.dx, (Values{5, 7, 0, -10, -14, 0, 0}));
  EXPECT_EQ(g.terms, (std::vector<int64_t>{1, 1, 0, 1, 1, 0, 0}));
}

TEST(ConvReference, SamePaddingPutsTheOddExtraAtTheEnd) {
  ConvProblem p = line(4, 2);
  p.pad_mode = ConvPadMode::same;
  conv_finalize(p);
  EXPECT_EQ(p.pad_begin[2], 0);
  EXPECT_EQ(p.pad_end[2], 1);
  EXPECT_EQ(p.out[2], 4);
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3, 4}, {1, 10}), (Values{21, 32, 43, 4}));
  p.dilation[2] = 2;  // total 2: one each side, taps o-1 and o+1
  conv_finalize(p);
  EXPECT_EQ(p.pad_begin[2], 1);
  EXPECT_EQ(p.pad_end[2], 1);
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3, 4}, {1, 10}), (Values{20, 1 + 30, 2 + 40, 3}));
  p.dilation[2] = 1;
  p.kernel[2] = 4;  // total 3: 1 before, 2 after
  conv_finalize(p);
  EXPECT_EQ(p.pad_begin[2], 1);
  EXPECT_EQ(p.pad_end[2], 2);
  EXPECT_EQ(conv_validate(p), "");
  p.pad_mode = ConvPadMode::valid;
  conv_finalize(p);
  EXPECT_EQ(p.pad_begin[2], 0);
  EXPECT_EQ(p.pad_end[2], 0);
  EXPECT_EQ(p.out[2], 1);
}

TEST(ConvReference, GroupsAreIndependentConvolutions) {
  // C=4, K=2, groups 2, 1x1 kernel: y0 reads channels 0,1 and y1 channels 2,3.
  ConvProblem p = line(1, 1);
  p.c = 4;
  p.k = 2;
  p.groups = 2;
  ASSERT_EQ(conv_validate(p), "");
  const Values w = {1, 2, 3, 4};  // (K=2, C/G=2)
  EXPECT_EQ(ref::conv_forward(p, {1, 10, 100, 1000}, w), (Values{21, 4300}));
  EXPECT_EQ(ref::conv_backward_data(p, {1, -1}, w).dx, (Values{1, 2, -3, -4}));
}

TEST(ConvReference, DepthwiseTwoDimensional) {
  // C = K = groups = 2, 2x2 input, 2x2 kernel: one output per channel.
  ConvProblem p;
  p.c = p.k = p.groups = 2;
  p.in[1] = p.in[2] = 2;
  p.kernel[1] = p.kernel[2] = 2;
  conv_finalize(p);
  ASSERT_EQ(conv_validate(p), "");
  const Values w = {1, 1, 1, 1, 1, 0, 0, -1};
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3, 4, 5, 6, 7, 8}, w), (Values{10, 5 - 8}));
  const ref::ConvGradient g = ref::conv_backward_data(p, {2, 3}, w);
  EXPECT_EQ(g.dx, (Values{2, 2, 2, 2, 3, 0, 0, -3}));
  EXPECT_EQ(g.terms, (std::vector<int64_t>(8, 1)));
}

TEST(ConvReference, TwoDimensionalAxesAreNotMixedUp) {
  // 2x3 input, kernel 1x2: y[h, w] = x[h, w] + 10 x[h, w+1].
  ConvProblem p;
  p.in[1] = 2;
  p.in[2] = 3;
  p.kernel[2] = 2;
  conv_finalize(p);
  ASSERT_EQ(conv_validate(p), "");
  EXPECT_EQ(p.out[1], 2);
  EXPECT_EQ(p.out[2], 2);
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3, 4, 5, 6}, {1, 10}), (Values{21, 32, 54, 65}));
  EXPECT_EQ(ref::conv_backward_data(p, {1, 2, 3, 4}, {1, 10}).dx, (Values{1, 12, 20, 3, 34, 40}));
}

TEST(ConvReference, ThreeDimensionalStrideAndPadding) {
  // 2x2x2 input, 2x2x2 kernel, stride 2, padding 1: each axis has outputs 0 (tap 1 reads x0)
  // and 1 (tap 0 reads x1), so y[o] = x[o] * w[1-o0, 1-o1, 1-o2] = x[o] * w[7 - flat(o)].
  ConvProblem p;
  p.dims = 3;
  for (int a = 0; a < kAxes; ++a) {
    p.in[a] = p.kernel[a] = p.stride[a] = 2;
    p.pad_begin[a] = p.pad_end[a] = 1;
  }
  conv_finalize(p);
  ASSERT_EQ(conv_validate(p), "");
  const Values iota = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(ref::conv_forward(p, iota, iota), (Values{8, 14, 18, 20, 20, 18, 14, 8}));
  const ref::ConvGradient g = ref::conv_backward_data(p, iota, iota);
  EXPECT_EQ(g.dx, (Values{8, 14, 18, 20, 20, 18, 14, 8}));
  EXPECT_EQ(g.terms, (std::vector<int64_t>(8, 1)));
}

TEST(ConvReference, ThreeDimensionalAnisotropic) {
  // 2x3x4 input, kernel 2x1x2 with dilation 1x1x2, stride 1x2x1: out 1x2x2.
  ConvProblem p;
  p.dims = 3;
  p.in[0] = 2, p.in[1] = 3, p.in[2] = 4;
  p.kernel[0] = 2, p.kernel[2] = 2;
  p.dilation[2] = 2;
  p.stride[1] = 2;
  conv_finalize(p);
  ASSERT_EQ(conv_validate(p), "");
  ASSERT_EQ(p.out[0], 1);
  ASSERT_EQ(p.out[1], 2);
  ASSERT_EQ(p.out[2], 2);
  Values x(24);
  for (int i = 0; i < 24; ++i) x[i] = i;  // x[d, h, w] = 12d + 4h + w
  const Values w = {1, 10, 100, 1000};  // w[kd, kw]
  // y[0, oh, ow] = sum over kd, kw of w[kd, kw] * x[kd, 2*oh, ow + 2*kw].
  auto y_at = [&](int oh, int ow) {
    return 1 * x[8 * oh + ow] + 10 * x[8 * oh + ow + 2] + 100 * x[12 + 8 * oh + ow] + 1000 * x[12 + 8 * oh + ow + 2];
  };
  EXPECT_EQ(ref::conv_forward(p, x, w), (Values{y_at(0, 0), y_at(0, 1), y_at(1, 0), y_at(1, 1)}));
  const Values dx = ref::conv_backward_data(p, {1, 2, 3, 4}, w).dx;
  EXPECT_EQ(dx[0], 1);             // (0,0,0): tap (0,0) of output (0,0)
  EXPECT_EQ(dx[2], 10 * 1);        // (0,0,2): tap kw=1 of output ow=0 (ow=2 does not exist)
  EXPECT_EQ(dx[3], 10 * 2);        // (0,0,3): tap kw=1 of output ow=1
  EXPECT_EQ(dx[4], 0);             // (0,1,0): row h=1 is skipped by stride 2
  EXPECT_EQ(dx[12 + 8 + 1], 100 * 4);  // (1,2,1): tap kd=1, kw=0 of output (1,1)
  EXPECT_EQ(dx[12 + 8 + 3], 1000 * 4);  // (1,2,3): tap kd=1, kw=1 of output (1,1)
}

// A 2D problem with everything at once: batch, groups with several channels each, anisotropic
// stride, dilation and asymmetric pads. Channels-last must give the same numbers as
// channels-first once every tensor is transposed.
TEST(ConvReference, ChannelsLastEqualsChannelsFirstAfterTransposition) {
  ConvProblem cf;
  cf.n = 2, cf.c = 4, cf.k = 6, cf.groups = 2;
  cf.in[1] = 3, cf.in[2] = 5;
  cf.kernel[1] = 2, cf.kernel[2] = 3;
  cf.stride[2] = 2;
  cf.dilation[2] = 2;
  cf.pad_begin[1] = 1, cf.pad_end[2] = 2;
  conv_finalize(cf);
  ASSERT_EQ(conv_validate(cf), "");
  ConvProblem cl = cf;
  cl.layout = Layout::channels_last;

  // (outer, channels, plane) <-> (outer, plane, channels).
  auto to_last = [](const Values& v, int64_t outer, int64_t channels, int64_t plane) {
    Values r(v.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t s = 0; s < plane; ++s) r[(o * plane + s) * channels + c] = v[(o * channels + c) * plane + s];
    return r;
  };
  auto fill = [](int64_t n, int seed) {
    Values v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7 + seed) % 11) - 5;
    return v;
  };
  const Values x = fill(cf.x_elems(), 1), w = fill(cf.w_elems(), 2), dy = fill(cf.y_elems(), 3);
  const Values x_l = to_last(x, cf.n, cf.c, cf.in_plane()), w_l = to_last(w, cf.k, cf.c_per_group(), cf.taps()),
               dy_l = to_last(dy, cf.n, cf.k, cf.out_plane());
  EXPECT_EQ(ref::conv_forward(cl, x_l, w_l), to_last(ref::conv_forward(cf, x, w), cf.n, cf.k, cf.out_plane()));
  const ref::ConvGradient first = ref::conv_backward_data(cf, dy, w), last = ref::conv_backward_data(cl, dy_l, w_l);
  EXPECT_EQ(last.dx, to_last(first.dx, cf.n, cf.c, cf.in_plane()));
  EXPECT_EQ(last.abs_sum, to_last(first.abs_sum, cf.n, cf.c, cf.in_plane()));
  Values terms_first(first.terms.begin(), first.terms.end()), terms_last(last.terms.begin(), last.terms.end());
  EXPECT_EQ(terms_last, to_last(terms_first, cf.n, cf.c, cf.in_plane()));
}

TEST(ConvReference, HugePaddingAndDilationCostNothing) {
  // Only the last tap of each window lands inside; the oracle never walks the padded window.
  const ConvProblem p = line(3, 3, 1, int64_t{1} << 40, int64_t{1} << 41, 0);
  ASSERT_EQ(p.out[2], 3);
  EXPECT_EQ(ref::conv_forward(p, {1, 2, 3}, {5, 6, 7}), (Values{7, 14, 21}));
  EXPECT_EQ(ref::conv_backward_data(p, {1, 1, 1}, {5, 6, 7}).dx, (Values{7, 7, 7}));
}

// conv.winograd's bound on a 1D case by hand: L = 6 (a whole tile and a partial one), k3 p1.
// Element i of tile T sums |A^T[r][x]| (|G||f|)[x] (|B^T||d|)[x] over the 6 points x, with
// f = |w| flipped and d = |dy| from T + pad - 2 on (fractions computed exactly beside this test).
TEST(ConvWinogradBound, OneDimensionalByHand) {
  const ConvProblem p = line(6, 3, 1, 1, 1, 1);
  const ref::ConvBound b = ref::winograd_f4x4_bound(p, {1, -2, 3, -4, 5, -6}, {2, -1, 3});
  const Values want = {191.0 / 3, 205.0 / 3, 296.0 / 3, 622.0 / 3, 839.0 / 6, 368.0 / 3};
  ASSERT_EQ(b.abs_sum.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(b.abs_sum[i], want[i], 1e-12 * want[i]) << i;
  EXPECT_EQ(b.terms, (std::vector<int64_t>(6, 1 + ref::kWinogradF4x4DepthPerAxis)));
}

// The transforms' chain in absolute values expands to a sum that holds every direct term, so it
// is never below the oracle's sum of |terms|, on every layout, group count and padding.
TEST(ConvWinogradBound, NeverBelowTheDirectTerms) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    ConvProblem p;
    p.dims = 2;
    p.n = 1 + trial % 2;
    p.groups = 1 + trial % 3;
    p.c = p.groups * (1 + trial % 4);
    p.k = p.groups * (1 + trial % 5);
    p.layout = trial % 2 ? Layout::channels_last : Layout::channels_first;
    for (int a = 1; a < kAxes; ++a) {
      p.kernel[a] = 3;
      p.in[a] = 3 + (trial * (a + 2)) % 9;
      p.pad_begin[a] = (trial + a) % 3;
      p.pad_end[a] = (trial / 3 + a) % 3;
    }
    conv_finalize(p);
    ASSERT_EQ(conv_validate(p), "") << conv_to_string(p);
    std::uniform_real_distribution<double> value(-2, 2);
    Values dy(static_cast<size_t>(p.y_elems())), w(static_cast<size_t>(p.w_elems()));
    for (double& v : dy) v = value(rng);
    for (double& v : w) v = value(rng);
    const ref::ConvGradient direct = ref::conv_backward_data(p, dy, w);
    const ref::ConvBound b = ref::winograd_f4x4_bound(p, dy, w);
    for (size_t i = 0; i < direct.abs_sum.size(); ++i) {
      EXPECT_GE(b.abs_sum[i], direct.abs_sum[i] * (1 - 1e-12)) << conv_to_string(p) << " element " << i;
      EXPECT_EQ(b.terms[i], p.k_per_group() + 2 * ref::kWinogradF4x4DepthPerAxis);
    }
  }
}

TEST(ConvWinogradBound, RefusesOtherWindows) {
  ConvProblem p = line(8, 3, 2);
  EXPECT_THROW(ref::winograd_f4x4_bound(p, Values(static_cast<size_t>(p.y_elems()), 1.0), {1, 1, 1}), Error);
}

}  // namespace
}  // namespace pg
