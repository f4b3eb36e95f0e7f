// RapidCheck properties of the convolution oracle on small problems with small-integer data,
// where every sum is exact. Forward and backward-data are written independently
// (reference/conv_reference.cpp), so the adjoint identity checks one against the other.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "reference/conv_reference.hpp"

namespace pg {
namespace {

// inRange over its whole range at every size: RapidCheck otherwise keeps early cases small.
template <class T>
T any_in(T lo, T hi_exclusive) {
  return *rc::gen::resize(100, rc::gen::inRange<T>(lo, hi_exclusive));
}

std::vector<double> small_integers(int64_t count) {
  std::vector<double> v(static_cast<size_t>(count));
  for (double& e : v) e = any_in(-3, 4);
  return v;
}

// Problems that always validate: groups (depthwise among them), explicit asymmetric, "same"
// and "valid" padding, stride, dilation, either layout; each axis at least the dilated kernel
// minus the padding, so the output is never empty.
ConvProblem gen_problem() {
  ConvProblem p;
  p.dims = any_in(1, 4);
  p.n = any_in<int64_t>(1, 3);
  p.groups = any_in<int64_t>(1, 4);
  const bool depthwise = any_in(0, 4) == 0;
  p.c = p.groups * (depthwise ? 1 : any_in<int64_t>(1, 4));
  p.k = p.groups * (depthwise ? 1 : any_in<int64_t>(1, 4));
  p.pad_mode = *rc::gen::element(ConvPadMode::explicit_pads, ConvPadMode::same, ConvPadMode::valid);
  p.layout = *rc::gen::element(Layout::channels_first, Layout::channels_last);
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    p.kernel[a] = any_in<int64_t>(1, 5);
    p.stride[a] = p.pad_mode == ConvPadMode::same ? 1 : any_in<int64_t>(1, 4);
    p.dilation[a] = any_in<int64_t>(1, 4);
    p.pad_begin[a] = any_in<int64_t>(0, 4);
    p.pad_end[a] = any_in<int64_t>(0, 4);
  }
  conv_finalize(p);  // resolves same/valid, so the least size below sees the real pads
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    const int64_t least = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
    p.in[a] = least + any_in<int64_t>(0, p.dims == 3 ? 3 : 6);
  }
  conv_finalize(p);
  RC_ASSERT(conv_validate(p) == "");
  bool gaps = false, overlap = false, all_pad_window = false;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    gaps |= p.stride[a] > p.effective_kernel(a);
    overlap |= p.stride[a] < p.effective_kernel(a);
    all_pad_window |= std::max(p.pad_begin[a], p.pad_end[a]) >= p.effective_kernel(a);
  }
  RC_CLASSIFY(p.groups > 1 && p.c == p.groups && p.k == p.groups, "depthwise");
  RC_CLASSIFY(p.groups > 1, "grouped");
  RC_CLASSIFY(gaps, "stride > dilated kernel: uncovered inputs");
  RC_CLASSIFY(overlap, "overlapping windows");
  RC_CLASSIFY(all_pad_window, "a window may lie in the padding");
  RC_CLASSIFY(p.layout == Layout::channels_last, "channels-last");
  RC_TAG(p.dims, p.pad_mode == ConvPadMode::same ? "same" : p.pad_mode == ConvPadMode::valid ? "valid" : "explicit");
  return p;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// <conv(x, w), dy> = <x, conv_bwd_data(dy, w)>, exactly on integers.
RC_GTEST_PROP(ConvOracleProperties, Adjoint, ()) {
  const ConvProblem p = gen_problem();
  const std::vector<double> x = small_integers(p.x_elems()), w = small_integers(p.w_elems()),
                            dy = small_integers(p.y_elems());
  RC_ASSERT(dot(ref::conv_forward(p, x, w), dy) == dot(x, ref::conv_backward_data(p, dy, w).dx));
}

// Every forward term x*w is one backward term dy*w: the term counts add up to the forward's, and
// an input no window reads gets no term and an exact zero.
RC_GTEST_PROP(ConvOracleProperties, TermCountsMatchTheForwardTerms, ()) {
  const ConvProblem p = gen_problem();
  // With x and w all ones, y counts the terms of each output.
  const std::vector<double> ones_x(static_cast<size_t>(p.x_elems()), 1.0), ones_w(static_cast<size_t>(p.w_elems()), 1.0);
  double forward_terms = 0;
  for (double v : ref::conv_forward(p, ones_x, ones_w)) forward_terms += v;
  const ref::ConvGradient g = ref::conv_backward_data(p, small_integers(p.y_elems()), small_integers(p.w_elems()));
  double backward_terms = 0;
  for (size_t i = 0; i < g.dx.size(); ++i) {
    backward_terms += static_cast<double>(g.terms[i]);
    if (g.terms[i] == 0) RC_ASSERT(g.dx[i] == 0.0 && g.abs_sum[i] == 0.0);
    RC_ASSERT(std::abs(g.dx[i]) <= g.abs_sum[i]);
  }
  RC_ASSERT(forward_terms == backward_terms);
}

// (outer, channels, plane) in channels-first order -> (outer, plane, channels).
std::vector<double> to_channels_last(const std::vector<double>& v, int64_t outer, int64_t channels, int64_t plane) {
  std::vector<double> r(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t s = 0; s < plane; ++s) r[(o * plane + s) * channels + c] = v[(o * channels + c) * plane + s];
  return r;
}

// The same numbers in channels-last order give the same results, transposed.
RC_GTEST_PROP(ConvOracleProperties, ChannelsLastAgreesWithChannelsFirst, ()) {
  ConvProblem cf = gen_problem();
  cf.layout = Layout::channels_first;
  ConvProblem cl = cf;
  cl.layout = Layout::channels_last;
  const std::vector<double> x = small_integers(cf.x_elems()), w = small_integers(cf.w_elems()),
                            dy = small_integers(cf.y_elems());
  auto x_last = [&](const std::vector<double>& v) { return to_channels_last(v, cf.n, cf.c, cf.in_plane()); };
  auto y_last = [&](const std::vector<double>& v) { return to_channels_last(v, cf.n, cf.k, cf.out_plane()); };
  const std::vector<double> w_l = to_channels_last(w, cf.k, cf.c_per_group(), cf.taps());
  RC_ASSERT(ref::conv_forward(cl, x_last(x), w_l) == y_last(ref::conv_forward(cf, x, w)));
  const ref::ConvGradient first = ref::conv_backward_data(cf, dy, w), last = ref::conv_backward_data(cl, y_last(dy), w_l);
  RC_ASSERT(last.dx == x_last(first.dx));
  RC_ASSERT(last.abs_sum == x_last(first.abs_sum));
}

// A grouped convolution is G independent convolutions on channel slices (channels first: each
// group's channels, output channels and weight rows are contiguous per sample).
RC_GTEST_PROP(ConvOracleProperties, GroupsAreIndependentConvolutions, ()) {
  ConvProblem p = gen_problem();
  p.layout = Layout::channels_first;
  const std::vector<double> x = small_integers(p.x_elems()), w = small_integers(p.w_elems()),
                            dy = small_integers(p.y_elems());
  const std::vector<double> y = ref::conv_forward(p, x, w), dx = ref::conv_backward_data(p, dy, w).dx;
  ConvProblem one = p;
  one.groups = 1;
  one.c = p.c_per_group();
  one.k = p.k_per_group();
  conv_finalize(one);
  RC_ASSERT(conv_validate(one) == "");
  const int64_t x_block = one.c * p.in_plane(), y_block = one.k * p.out_plane(), w_block = one.w_elems();
  // Elements [g*block, (g+1)*block) of every sample's stretch of `per_sample`.
  auto slice = [&](const std::vector<double>& v, int64_t per_sample, int64_t block, int64_t g, int64_t samples) {
    std::vector<double> r;
    for (int64_t n = 0; n < samples; ++n)
      r.insert(r.end(), v.begin() + n * per_sample + g * block, v.begin() + n * per_sample + (g + 1) * block);
    return r;
  };
  for (int64_t g = 0; g < p.groups; ++g) {
    const std::vector<double> xg = slice(x, p.c * p.in_plane(), x_block, g, p.n),
                              dyg = slice(dy, p.k * p.out_plane(), y_block, g, p.n), wg = slice(w, 0, w_block, g, 1);
    RC_ASSERT(ref::conv_forward(one, xg, wg) == slice(y, p.k * p.out_plane(), y_block, g, p.n));
    RC_ASSERT(ref::conv_backward_data(one, dyg, wg).dx == slice(dx, p.c * p.in_plane(), x_block, g, p.n));
  }
}

}  // namespace
}  // namespace pg
