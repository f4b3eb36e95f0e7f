// What every average-pool backward variant shares: per-axis window geometry in the index type
// the launch picked, the divisor rule, vector packs, and the dtype / index-type dispatch.
//
// The divisor of a window is a product of per-axis counts under every convention (include_pad:
// taps before the end of the padding; exclude_pad: taps inside the input, because a tap is
// inside iff it is inside on every axis; full_kernel: the kernel size), so each axis answers
// for itself and the variants multiply.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "src/model/problem.hpp"
#include "src/model/variant.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/require.hpp"
#include "kernels/common/pool_geometry.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {

template <class Idx>
struct AvgAxis {
  Idx in, out, kernel, stride, dilation, pad_begin, pad_end, reach;
  Divider<Idx> by_stride, by_dilation;

  // Taps of window o that the divisor counts along this axis.
  PG_HD Idx count(Divisor rule, Idx o) const {
    const Idx start = o * stride - pad_begin;
    if (rule == Divisor::full_kernel) return kernel;
    if (rule == Divisor::include_pad) {
      // The window clamped to input + end padding (PyTorch): start >= -pad_begin always.
      const Idx room = in + pad_end - 1 - start;
      if (room < 0) return 0;
      const Idx last = by_dilation.div(room);
      return last + 1 < kernel ? last + 1 : kernel;
    }
    const Idx first = start >= 0 ? Idx{0} : by_dilation.div(-start + dilation - 1);
    const Idx room = in - 1 - start;
    if (room < 0) return 0;
    Idx last = by_dilation.div(room);
    if (last > kernel - 1) last = kernel - 1;
    return last >= first ? last - first + 1 : Idx{0};
  }

  // Windows [*lo, *hi] whose span covers input position i (empty when *lo > *hi). Window o
  // of the span has i as a tap only when is_tap(i, o).
  PG_HD void covering(Idx i, Idx* lo, Idx* hi) const {
    const Idx first = i + pad_begin - reach;
    *lo = first <= 0 ? Idx{0} : by_stride.div(first + stride - 1);
    const Idx h = by_stride.div(i + pad_begin);
    *hi = h < out - 1 ? h : out - 1;
  }

  PG_HD bool is_tap(Idx i, Idx o) const {
    return dilation == 1 || by_dilation.mod(i + pad_begin - o * stride) == 0;
  }

  // When windows are disjoint (stride >= effective kernel) at most one covers i: true and its
  // index in *o when i is one of its taps.
  PG_HD bool only_window(Idx i, Idx* o) const {
    const Idx shifted = i + pad_begin;
    *o = by_stride.div(shifted);
    const Idx k = shifted - *o * stride;
    return *o < out && k <= reach && (dilation == 1 || by_dilation.mod(k) == 0);
  }

  // Whether windows first_o .. last_o all have every tap inside the input: under every divisor
  // rule they count the whole kernel.
  PG_HD bool windows_inside(Idx first_o, Idx last_o) const {
    return first_o * stride >= pad_begin && last_o * stride - pad_begin + reach < in;
  }

  // Input positions [*first, *last] of window o's taps that lie inside the input, stepping by
  // the dilation (empty when *first > *last).
  PG_HD void inside_taps(Idx o, Idx* first, Idx* last) const {
    const Idx start = o * stride - pad_begin;
    const Idx k_first = start >= 0 ? Idx{0} : by_dilation.div(-start + dilation - 1);
    const Idx room = in - 1 - start;
    Idx k_last = room < 0 ? Idx{-1} : by_dilation.div(room);
    if (k_last > kernel - 1) k_last = kernel - 1;
    *first = start + k_first * dilation;
    *last = k_last >= k_first ? start + k_last * dilation : *first - 1;
  }
};

// The problem in the launch's index type; trivially copyable, passed to kernels by value.
template <class Idx>
struct AvgShape {
  AvgAxis<Idx> axis[kAxes];
  Idx n, c;
  Divider<Idx> by_c, by_in[kAxes], by_out[kAxes];
  Divisor rule;
  bool has_override;
  int64_t override_value;
  bool small_windows;  // kernel volume <= 2^24: count products are exact in f32

  // Divisor of the window whose per-axis counts are given. Small windows multiply in the
  // accumulator type (exact, and cheaper than 64-bit integer products and conversions on a
  // GPU); larger ones in 64 bits, as three kernel sizes can overflow int32.
  template <class A>
  PG_HD A divisor(Idx c0, Idx c1, Idx c2) const {
    if (has_override) return static_cast<A>(override_value);
    if (small_windows) return static_cast<A>(c0) * static_cast<A>(c1) * static_cast<A>(c2);
    return static_cast<A>(static_cast<int64_t>(c0) * c1 * c2);
  }

  // Taps of window o along axis a that the divisor counts. Interior windows, the common case,
  // count the whole kernel under every rule and skip AvgAxis::count's divisions.
  PG_HD Idx window_count(int a, Idx o) const {
    const AvgAxis<Idx>& ax = axis[a];
    const Idx start = o * ax.stride - ax.pad_begin;
    if (start >= 0 && start + ax.reach < ax.in) return ax.kernel;
    return ax.count(rule, o);
  }

  // Spatial point (s0, s1, s2) of `outer` in the input / output: the element offset itself in
  // channels-first (outer = n * C + c), the offset divided by C in channels-last (outer = n).
  PG_HD Idx in_point(Idx outer, Idx s0, Idx s1, Idx s2) const {
    return ((outer * axis[0].in + s0) * axis[1].in + s1) * axis[2].in + s2;
  }
  PG_HD Idx out_point(Idx outer, Idx s0, Idx s1, Idx s2) const {
    return ((outer * axis[0].out + s0) * axis[1].out + s1) * axis[2].out + s2;
  }
};

template <class Idx>
AvgShape<Idx> make_avg_shape(const Problem& p) {
  AvgShape<Idx> g;
  for (int a = 0; a < kAxes; ++a) {
    AvgAxis<Idx>& x = g.axis[a];
    x.in = static_cast<Idx>(p.in[a]);
    x.out = static_cast<Idx>(p.out[a]);
    x.kernel = static_cast<Idx>(p.kernel[a]);
    x.stride = static_cast<Idx>(p.stride[a]);
    x.dilation = static_cast<Idx>(p.dilation[a]);
    x.pad_begin = static_cast<Idx>(p.pad_begin[a]);
    x.pad_end = static_cast<Idx>(p.pad_end[a]);
    x.reach = static_cast<Idx>(p.dilation[a] * (p.kernel[a] - 1));
    x.by_stride = Divider<Idx>(x.stride);
    x.by_dilation = Divider<Idx>(x.dilation);
    g.by_in[a] = Divider<Idx>(x.in);
    g.by_out[a] = Divider<Idx>(x.out);
  }
  g.n = static_cast<Idx>(p.n);
  g.c = static_cast<Idx>(p.c);
  g.by_c = Divider<Idx>(g.c);
  g.rule = p.divisor;
  g.has_override = p.has_divisor_override;
  g.override_value = p.divisor_override;
  g.small_windows = p.taps() <= (int64_t{1} << 24);
  return g;
}

// The W kernels that the pack gathers (avg.gather.rows, avg.gather.flat) unroll, for stride-1
// undilated windows: a pack's V + K - 1 windows are registers and a lane's K of them fixed ones,
// summed without tap tests. Others (0) take a loop.
template <class F>
void with_unrolled_w_kernel(const Problem& p, F&& f) {
  const bool unit = p.stride[2] == 1 && p.dilation[2] == 1;
  if (unit && p.kernel[2] == 2) f(std::integral_constant<int, 2>{});
  else if (unit && p.kernel[2] == 3) f(std::integral_constant<int, 3>{});
  else if (unit && p.kernel[2] == 5) f(std::integral_constant<int, 5>{});
  else f(std::integral_constant<int, 0>{});
}

// Whether every window has the same divisor: an override or the kernel size, or along every axis
// every window counting the same taps. *divisor: that divisor, or 1 when windows differ.
inline bool avg_uniform_divisor(const Problem& p, double* divisor) {
  const AvgShape<int64_t> g = make_avg_shape<int64_t>(p);
  *divisor = 1.0;
  int64_t count[kAxes];
  for (int a = 0; a < kAxes; ++a) {
    count[a] = g.axis[a].count(p.divisor, 0);
    for (int64_t o = 1; o < p.out[a]; ++o)
      if (g.axis[a].count(p.divisor, o) != count[a]) return false;
  }
  *divisor = g.template divisor<double>(count[0], count[1], count[2]);
  return true;
}

// Some position is a tap of two windows, for undilated windows whose shared taps lie inside the
// input (columns' stride-1 windows of 2 to 8 taps, k3s2 with padding 1): an axis whose kernel is
// longer than its stride holds two windows or more. Where none does, every dx
// element is one dy / divisor and the avg variants agree bitwise (AvgVariants.
// AgreeBitwiseOnDisjointWindows); the gathers that multiply by reciprocal divisors (columns,
// k3s2) would not, so they decline those problems (a 3 x 3 plane under one 3 x 3 window, and a
// 2-wide row under one k3s2p1 window, differed by an ulp in that fuzz). (avg.gather.box3's
// domain holds no such problem: a W of whole 16-byte packs holds two k3s1 windows.)
inline bool undilated_windows_overlap(const Problem& p) {
  for (int a = 0; a < kAxes; ++a)
    if (p.kernel[a] > p.stride[a] && p.out[a] >= 2) return true;
  return false;
}

// A work item of the variants that write dx directly: V consecutive dx elements along the
// contiguous axis (W in channels-first, C in channels-last), V dividing that axis' length so
// a group never straddles a row and its first element is V-aligned.
template <class Idx>
struct DxGroup {
  Idx outer;  // n * C + c in channels-first, n in channels-last
  Idx s[kAxes];
  Idx c0;      // first channel (channels-last)
  Idx offset;  // element offset of the group's first element
};

// `groups_per_row` divides by W / V (channels-first) or C / V (channels-last).
template <bool kChannelsLast, class Idx>
PG_HD DxGroup<Idx> dx_group(const AvgShape<Idx>& g, const Divider<Idx>& groups_per_row, int vec, Idx gi) {
  DxGroup<Idx> q;
  const Idx first = groups_per_row.mod(gi) * vec;
  Idx rest = groups_per_row.div(gi);
  if (kChannelsLast) {
    q.c0 = first;
    q.s[2] = g.by_in[2].mod(rest);
    rest = g.by_in[2].div(rest);
  } else {
    q.c0 = 0;
    q.s[2] = first;
  }
  q.s[1] = g.by_in[1].mod(rest);
  rest = g.by_in[1].div(rest);
  q.s[0] = g.by_in[0].mod(rest);
  q.outer = g.by_in[0].div(rest);
  const Idx point = g.in_point(q.outer, q.s[0], q.s[1], q.s[2]);
  q.offset = kChannelsLast ? point * g.c + q.c0 : point;
  return q;
}

// int32 index arithmetic is safe when every tensor offset fits (fits_int32) and so does every
// per-axis intermediate: positions reach in + padding + a window reach + a stride.
inline bool avg_fits_int32(const Problem& p) {
  if (!fits_int32(p)) return false;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t extent = p.in[a] + p.pad_begin[a] + p.pad_end[a] + p.effective_kernel(a) +
                           p.stride[a] + p.out[a] * p.stride[a];
    if (extent >= (int64_t{1} << 31)) return false;
  }
  return true;
}

template <class T>
inline constexpr int kVecWidth = static_cast<int>(16 / sizeof(T));

// How a fast path that walks planes along D (avg.gather.box3, avg.gather.k3s2) cuts them into
// runs, one work item per run and per position in the other axes.
struct PlaneRuns {
  int64_t length;  // planes per run; the last run may be shorter
  int64_t count;
};

// `planes` cut into runs until there are `want_items` work items (`per_run` per run), to give
// the GPU several waves, but into runs of no fewer than `min_length` planes (or all of them):
// each run re-reads the window planes it shares with its neighbours, and a run of
// twice as many planes as it re-reads keeps that cost within half of the run's own reads.
inline PlaneRuns plan_plane_runs(int64_t planes, int64_t per_run, int64_t want_items, int64_t min_length) {
  const int64_t runs = std::min<int64_t>(planes, std::max<int64_t>(1, (want_items + per_run - 1) / per_run));
  const int64_t length = std::max((planes + runs - 1) / runs, std::min(min_length, planes));
  return {length, (planes + length - 1) / length};
}

// The sum of n values `step` apart. kTaps > 0: n is at most kTaps and the loop is unrolled and
// predicated (the per-tap cost of a loop with a trip count read from a table is several times
// its one load and one add); 0: any n.
template <int kTaps, class A>
PG_HD A sum_taps(const A* s, int n, int step) {
  A acc = A(0);
  if constexpr (kTaps > 0) {
#pragma unroll
    for (int j = 0; j < kTaps; ++j)
      if (j < n) acc += s[j * step];
  } else {
    for (int j = 0; j < n; ++j) acc += s[j * step];
  }
  return acc;
}

// Calls f(T{}, Idx{}) with T the storage type and Idx = int32_t when avg_fits_int32.
template <class F>
void with_avg_types(const Problem& p, F&& f) {
  with_dtype(p.dtype, [&](auto tag) {
    if (avg_fits_int32(p)) f(tag, int32_t{});
    else f(tag, int64_t{});
  });
}

// Whether dx is whole 16-byte packs of T, aligned: the work item of the variants that gather a
// pack of flat dx (avg.gather.rows, avg.gather.flat). The int64 path stays scalar.
template <class T, class Idx>
bool flat_dx_packed(const Problem& p, const BwdBuffers& b) {
  return std::is_same_v<Idx, int32_t> && aligned16(b.dx) && p.in_elems() % kVecWidth<T> == 0;
}

// Calls f(std::bool_constant<channels_last>{}, std::integral_constant<int, V>{}) with V the
// widest 16-byte pack the contiguous axis divides into when dy and dx are 16-byte aligned,
// else 1. The int64 path, for problems
// beyond 2^31 elements, stays scalar: it exists to be correct, and halves the instantiations.
template <class T, class Idx, class F>
void with_dx_groups(const Problem& p, const BwdBuffers& b, F&& f) {
  constexpr int V = kVecWidth<T>;
  const bool channels_last = p.layout == Layout::channels_last;
  if constexpr (std::is_same_v<Idx, int32_t>) {
    const bool aligned = aligned16(b.dy) && aligned16(b.dx);
    if (aligned && (channels_last ? p.c : p.in[2]) % V == 0) {
      if (channels_last) f(std::true_type{}, std::integral_constant<int, V>{});
      else f(std::false_type{}, std::integral_constant<int, V>{});
      return;
    }
  }
  if (channels_last) f(std::true_type{}, std::integral_constant<int, 1>{});
  else f(std::false_type{}, std::integral_constant<int, 1>{});
}

}  // namespace pg
