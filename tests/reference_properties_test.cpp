// RapidCheck properties of the oracle (DESIGN.md "Property catalog"), on small problems with
// small-integer data so that every identity but the average adjoint holds exactly. Run with
// RC_PARAMS="max_success=1000" (meson sets it); replay a failure with RC_PARAMS="reproduce=...".
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

#include "reference/pool_reference.hpp"

namespace pg {
namespace {

using ref::kNoTap;

struct Case {
  Problem p;
  std::vector<double> x, dy;
};

// inRange over its whole range at every size: RapidCheck otherwise keeps early cases small,
// which would leave 3D problems and ceil overhangs rare.
template <class T>
T any_in(T lo, T hi_exclusive) {
  return *rc::gen::resize(100, rc::gen::inRange<T>(lo, hi_exclusive));
}

// Problems that always validate: each input axis at least the effective kernel minus the
// padding, so the output is never empty; ceil mode, asymmetric padding and dilation mixed in.
Case gen_case(Op op) {
  Case k;
  Problem& p = k.p;
  p.op = op;
  p.pad_limit = PadLimit::none;
  p.avg3d_input_at_least_kernel = false;
  p.dims = any_in(1, 4);
  p.n = any_in<int64_t>(1, 3);
  p.c = any_in<int64_t>(1, 6);
  p.ceil_mode = any_in(0, 2) == 1;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    p.kernel[a] = any_in<int64_t>(1, 4);
    p.stride[a] = any_in<int64_t>(1, 4);
    p.dilation[a] = any_in<int64_t>(1, 3);
    p.pad_begin[a] = any_in<int64_t>(0, p.kernel[a]);
    p.pad_end[a] = any_in<int64_t>(0, p.kernel[a]);
    const int64_t least = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
    p.in[a] = least + any_in<int64_t>(0, p.dims == 3 ? 3 : 5);
  }
  p.divisor = *rc::gen::element(Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad);
  p.tie = *rc::gen::element(TieRule::first, TieRule::last);
  p.nan = *rc::gen::element(NanRule::propagate, NanRule::ignore);
  finalize(p);
  RC_ASSERT(validate(p) == "");
  // Small ranges make ties; NaN and -inf only where a property asks for them.
  const int top = any_in(1, 5);
  for (int64_t i = 0; i < p.in_elems(); ++i) k.x.push_back(any_in(0, top + 1));
  for (int64_t i = 0; i < p.out_elems(); ++i) k.dy.push_back(any_in(-3, 4));
  return k;
}

void add_specials(Case& k) {
  for (double& v : k.x) {
    const int r = *rc::gen::inRange(0, 10);
    if (r == 0) v = NAN;
    if (r == 1) v = -INFINITY;
  }
}

// Coverage the generators must reach, shown in each property's statistics.
void classify(const Problem& p, const std::vector<double>& x) {
  bool overhang = false, start_edge = false, pad_dilation = false, anisotropic = false;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    const int64_t last_end = (p.out[a] - 1) * p.stride[a] - p.pad_begin[a] + p.effective_kernel(a);
    overhang |= last_end > p.in[a] + p.pad_end[a];
    // The start-inside rule removed a window that would start in the end padding.
    const int64_t span = p.in[a] + p.pad_begin[a] + p.pad_end[a] - p.effective_kernel(a);
    start_edge |= p.ceil_mode && span >= 0 && (span + p.stride[a] - 1) / p.stride[a] + 1 != p.out[a];
    pad_dilation |= p.dilation[a] > 1 && p.pad_begin[a] > 0;
    anisotropic |= a > kAxes - p.dims && p.kernel[a] != p.kernel[a - 1];
  }
  bool nan = false, neginf = false;
  for (double v : x) nan |= std::isnan(v), neginf |= v == -INFINITY;
  RC_CLASSIFY(overhang, "ceil overhang");
  RC_CLASSIFY(start_edge, "start-inside rule dropped a window");
  RC_CLASSIFY(pad_dilation, "padding with dilation");
  RC_CLASSIFY(anisotropic, "anisotropic kernel");
  RC_CLASSIFY(p.c % 4 != 0, "C not a multiple of 4");
  RC_CLASSIFY(nan, "NaN in x");
  RC_CLASSIFY(neginf, "-inf in x");
  RC_TAG(p.dims);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// <pool(x), dy> = <x, pool_bwd(dy)>; max with the argmax of x fixed, so also exact.
RC_GTEST_PROP(OracleProperties, Adjoint, ()) {
  const Op op = *rc::gen::element(Op::max, Op::avg);
  Case k = gen_case(op);
  classify(k.p, k.x);
  const ref::Forward f = ref::forward(k.p, k.x);
  if (op == Op::max) {
    for (size_t o = 0; o < f.y.size(); ++o)
      if (f.index[o] == kNoTap) k.dy[o] = 0;  // a window with no tap routes nothing
    const std::vector<double> y = [&] { auto v = f.y; for (double& e : v) if (std::isinf(e)) e = 0; return v; }();
    RC_ASSERT(dot(y, k.dy) == dot(k.x, ref::backward_max_recompute(k.p, k.x, k.dy).dx));
  } else {
    const double left = dot(f.y, k.dy), right = dot(k.x, ref::backward_avg(k.p, k.dy).dx);
    RC_ASSERT(std::fabs(left - right) <= 1e-12 * (1 + std::fabs(left)));
  }
}

RC_GTEST_PROP(OracleProperties, LinearInDy, ()) {
  const Op op = *rc::gen::element(Op::max, Op::avg);
  Case k = gen_case(op);
  classify(k.p, k.x);
  const int scale = *rc::gen::inRange(-3, 4);
  std::vector<double> other(k.dy.size()), mixed(k.dy.size());
  for (size_t i = 0; i < k.dy.size(); ++i) {
    other[i] = *rc::gen::inRange(-3, 4);
    mixed[i] = scale * k.dy[i] + other[i];
  }
  auto bwd = [&](const std::vector<double>& dy) {
    return op == Op::max ? ref::backward_max_recompute(k.p, k.x, dy).dx : ref::backward_avg(k.p, dy).dx;
  };
  const std::vector<double> a = bwd(k.dy), b = bwd(other), m = bwd(mixed);
  for (size_t i = 0; i < m.size(); ++i)
    RC_ASSERT(std::fabs(m[i] - (scale * a[i] + b[i])) <= 1e-12 * (1 + std::fabs(m[i])));
}

// Where no window is clipped away, Σdx = Σdy: max routes each window's dy whole, and an
// exclude_pad average spreads dy / taps over its taps. Only windows with no tap inside the
// input (all in padding) lose their dy, and those are the ones left out of the sum.
RC_GTEST_PROP(OracleProperties, GradientMassIsConserved, ()) {
  const Op op = *rc::gen::element(Op::max, Op::avg);
  Case k = gen_case(op);
  k.p.divisor = Divisor::exclude_pad;
  classify(k.p, k.x);
  // 1 for a window with a tap, 0 for one without: the exclude_pad average of all ones.
  Problem avg = k.p;
  avg.op = Op::avg;
  const std::vector<double> has_tap = ref::forward(avg, std::vector<double>(k.x.size(), 1.0)).y;
  double routed = 0, total = 0;
  for (size_t o = 0; o < k.dy.size(); ++o) routed += k.dy[o] * has_tap[o];
  RC_CLASSIFY(std::count(has_tap.begin(), has_tap.end(), 0.0) > 0, "some window has no tap");
  const std::vector<double> dx =
      op == Op::max ? ref::backward_max_recompute(k.p, k.x, k.dy).dx : ref::backward_avg(k.p, k.dy).dx;
  for (double v : dx) total += v;
  if (op == Op::max) RC_ASSERT(total == routed);
  else RC_ASSERT(std::fabs(total - routed) <= 1e-9 * (1 + std::fabs(routed)));
}

// The selected tap obeys the tie and NaN rules, checked against their statement, not the scan.
RC_GTEST_PROP(OracleProperties, TieAndNanRouting, ()) {
  Case k = gen_case(Op::max);
  add_specials(k);
  classify(k.p, k.x);
  Problem p = k.p;
  p.index_format = IndexFormat::window;
  p.n = 1;
  p.c = 1;
  finalize(p);
  std::vector<double> x(k.x.begin(), k.x.begin() + p.in_elems());
  const ref::Forward f = ref::forward(p, x);
  for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
      for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
        std::vector<std::pair<int64_t, double>> taps;  // (tap number, value) inside the input
        for (int64_t t = 0; t < p.taps(); ++t) {
          const int64_t k0 = t / (p.kernel[1] * p.kernel[2]), k1 = t / p.kernel[2] % p.kernel[1], k2 = t % p.kernel[2];
          const int64_t i0 = o0 * p.stride[0] - p.pad_begin[0] + k0 * p.dilation[0];
          const int64_t i1 = o1 * p.stride[1] - p.pad_begin[1] + k1 * p.dilation[1];
          const int64_t i2 = o2 * p.stride[2] - p.pad_begin[2] + k2 * p.dilation[2];
          if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= p.in[0] || i1 >= p.in[1] || i2 >= p.in[2]) continue;
          taps.push_back({t, x[(i0 * p.in[1] + i1) * p.in[2] + i2]});
        }
        const int64_t got = f.index[(o0 * p.out[1] + o1) * p.out[2] + o2];
        if (taps.empty()) {
          RC_ASSERT(got == kNoTap);
          continue;
        }
        int64_t want = -1;
        bool any_nan = false, any_number = false;
        double top = -INFINITY;
        for (auto [t, v] : taps) {
          any_nan |= std::isnan(v);
          if (!std::isnan(v)) any_number = true, top = std::max(top, v);
        }
        if (any_nan && p.nan == NanRule::propagate) {
          for (auto [t, v] : taps) if (std::isnan(v)) want = t;  // the last NaN
        } else if (!any_number) {
          want = taps.front().first;  // ignore, all NaN: the first tap
        } else {
          for (auto [t, v] : taps)
            if (v == top && (want < 0 || p.tie == TieRule::last)) want = t;
        }
        RC_ASSERT(got == want);
      }
}

RC_GTEST_PROP(OracleProperties, StoredIndicesEqualRecompute, ()) {
  Case k = gen_case(Op::max);
  if (*rc::gen::arbitrary<bool>()) add_specials(k);
  k.p.index_format = *rc::gen::element(IndexFormat::plane, IndexFormat::global_row, IndexFormat::global_col, IndexFormat::window);
  classify(k.p, k.x);
  const ref::Forward f = ref::forward(k.p, k.x);
  RC_ASSERT(ref::backward_max_indices(k.p, k.dy, f.index).dx == ref::backward_max_recompute(k.p, k.x, k.dy).dx);
}

// The same problem in NC[D]HW and N[D]HWC gives the same values at the same coordinates.
RC_GTEST_PROP(OracleProperties, ChannelsLastAgrees, ()) {
  const Op op = *rc::gen::element(Op::max, Op::avg);
  Case k = gen_case(op);
  classify(k.p, k.x);
  Problem last = k.p;
  last.layout = Layout::channels_last;
  // Index of (n, c, spatial s) in each layout for a plane of `plane` elements.
  auto to_last = [&](const std::vector<double>& v, int64_t plane) {
    std::vector<double> out(v.size());
    for (int64_t n = 0; n < k.p.n; ++n)
      for (int64_t c = 0; c < k.p.c; ++c)
        for (int64_t s = 0; s < plane; ++s) out[(n * plane + s) * k.p.c + c] = v[(n * k.p.c + c) * plane + s];
    return out;
  };
  const ref::Forward a = ref::forward(k.p, k.x), b = ref::forward(last, to_last(k.x, k.p.in_plane()));
  RC_ASSERT(to_last(a.y, k.p.out_plane()) == b.y);
  const std::vector<double> dy_last = to_last(k.dy, k.p.out_plane());
  if (op == Op::max) {
    std::vector<double> ia(a.index.begin(), a.index.end()), ib(b.index.begin(), b.index.end());
    RC_ASSERT(to_last(ia, k.p.out_plane()) == ib);  // plane indices do not depend on the layout
    RC_ASSERT(to_last(ref::backward_max_recompute(k.p, k.x, k.dy).dx, k.p.in_plane()) ==
              ref::backward_max_recompute(last, to_last(k.x, k.p.in_plane()), dy_last).dx);
  } else {
    RC_ASSERT(to_last(ref::backward_avg(k.p, k.dy).dx, k.p.in_plane()) == ref::backward_avg(last, dy_last).dx);
  }
}

// Every index format names the same tap: decoded to (n, c, d, h, w) they agree with plane
// indices, and routing through any of them gives the same gradient.
RC_GTEST_PROP(OracleProperties, IndexFormatsRoundTrip, ()) {
  Case k = gen_case(Op::max);
  classify(k.p, k.x);
  Problem p = k.p;
  p.index_format = IndexFormat::plane;
  const ref::Forward plane = ref::forward(p, k.x);
  const int64_t P = p.in_plane();
  for (IndexFormat fmt : {IndexFormat::global_row, IndexFormat::global_col, IndexFormat::window}) {
    Problem q = p;
    q.index_format = fmt;
    const ref::Forward f = ref::forward(q, k.x);
    size_t o = 0;
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t c = 0; c < p.c; ++c)
        for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
          for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
            for (int64_t o2 = 0; o2 < p.out[2]; ++o2, ++o) {
              const int64_t want = plane.index[o], got = f.index[o];
              if (want == kNoTap) {
                RC_ASSERT(got == kNoTap);
                continue;
              }
              int64_t decoded;
              if (fmt == IndexFormat::global_row) {
                RC_ASSERT(got / P == n * p.c + c);
                decoded = got % P;
              } else if (fmt == IndexFormat::global_col) {
                RC_ASSERT(got / P == n * p.c + c);
                const int64_t r = got % P, d = r % p.in[0], h = r / p.in[0] % p.in[1], w = r / (p.in[0] * p.in[1]);
                decoded = (d * p.in[1] + h) * p.in[2] + w;
              } else {
                const int64_t k0 = got / (p.kernel[1] * p.kernel[2]), k1 = got / p.kernel[2] % p.kernel[1], k2 = got % p.kernel[2];
                const int64_t d = o0 * p.stride[0] - p.pad_begin[0] + k0 * p.dilation[0];
                const int64_t h = o1 * p.stride[1] - p.pad_begin[1] + k1 * p.dilation[1];
                const int64_t w = o2 * p.stride[2] - p.pad_begin[2] + k2 * p.dilation[2];
                decoded = (d * p.in[1] + h) * p.in[2] + w;
              }
              RC_ASSERT(decoded == want);
            }
    RC_ASSERT(ref::backward_max_indices(q, k.dy, f.index).dx == ref::backward_max_indices(p, k.dy, plane.index).dx);
  }
}

}  // namespace
}  // namespace pg
