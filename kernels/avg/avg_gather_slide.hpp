// avg.gather.slide: the average pool backward for 2D channels-first stride-1, undilated windows
// of up to 9 taps along each axis (any padding, every divisor rule, divisor_override) as a sum
// sliding down each dx column, with no shared memory.
//
// Why: avg.gather.columns, the best before it on Inception's k3s1p1 rows, ran them at 64-68% of
// the copy ceiling on the H100 and 56-58% on the H200 without being issue-bound (29 thread
// instructions per dx element against a budget of 63): a block copies whole planes of dy into
// shared memory and sums only once all of it has landed, and Mixed_5b's blocks fill 1.11 waves, so
// a wave's loads and its sums do not overlap (ncu, H100, 2026-12-05: no eligible warp 63% of the
// cycles, DRAM 44% busy). Here a work item is one dx column (plane, x), or a segment of its rows,
// and owns no shared memory: the window columns that cover x are fixed along the column, so the
// item walks down its rows, reads each window row's taps (the KW dy values beside x; a warp's
// lanes are consecutive columns, so a warp's loads are a row of dy, its neighbours' taps in L1),
// keeps the last KH window-row sums in registers and writes each dx once, coalesced. It loads
// the taps of P window rows at once, ahead of their sums: the first build (2026-12-05) loaded one
// row at a time, waited a DRAM round trip per dx row and ran 0.56-0.65x avg.gather.columns.
// Divisors: where every window has the same one, the window-row sums are of dy and dx is their
// sum times its reciprocal; else each term is dy times the reciprocal of its window's divisor,
// computed once per item for the window columns under a window row of the full kernel and per
// row for the padded rows at the plane's edges. Either way a term rounds at most twice more than
// the exact value: inside the oracle's (terms + 2) u, as avg.gather.columns'. Deterministic (fixed
// order), no atomics, each dx element written once. Where no position is a tap of two windows
// (kernels of 1, or one window along each axis) each term is dy / divisor instead, one rounding as
// every avg variant's (AvgVariants.AgreeBitwiseOnDisjointWindows). The kernels of 3 x 3
// (Inception, NASNet) are unrolled exactly; others up to 9 x 9 run predicated over 9.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "src/model/variant.hpp"

namespace pg {

// The widest kernel along H and W: the fuzz's wide kernels reach 9.
inline constexpr int kSlideMaxKernel = 9;
// Items a launch should have at least: columns are cut into segments of rows until there are
// this many (each segment re-reads the KH - 1 window rows above it). 2^18 is about one full wave
// of threads on an H100 or H200 (132 multiprocessors of 2,048).
inline constexpr int64_t kSlideItems = int64_t{1} << 18;

// 2D channels-first (D one position), stride 1 and no dilation on H and W (the domain), kernels
// up to kSlideMaxKernel.
inline Support avg_slide_support(const Problem& p) {
  if (p.dims != 2 || p.layout != Layout::channels_first) return Support::no("2D channels-first only");
  for (int a = 1; a < kAxes; ++a)
    if (p.kernel[a] > kSlideMaxKernel) return Support::no("a kernel wider than 9");
  return Support::yes();
}

// Rows per segment: whole columns, or cut so that the launch has kSlideItems items, but no
// segment shorter than 8 rows.
inline int64_t slide_segment_rows(const Problem& p) {
  const int64_t H = p.in[1], columns = p.n * p.c * p.in[2];
  const int64_t want = std::max<int64_t>(1, (kSlideItems + columns - 1) / std::max<int64_t>(columns, 1));
  const int64_t segments = std::clamp<int64_t>(want, 1, std::max<int64_t>(1, H / 8));
  return (H + segments - 1) / segments;
}

// K: the kernel along H and W when both are 3 (unrolled), else 0 (up to 9, predicated).
template <class T, class Idx, int K>
struct AvgGatherSlideBody {
  using A = accum_t<T>;
  static constexpr int R = K > 0 ? K : kSlideMaxKernel;  // registers of the ring and of a row's taps
  // Window rows whose taps are loaded together, before any of them is summed: a thread has P rows
  // of loads in flight where the first build had one (a DRAM round trip per dx row, 0.56-0.65x
  // avg.gather.columns on the H100, 2026-12-05). P * R loaded values stay near 24 registers.
  static constexpr int P = K > 0 ? 8 : 2;
  AvgShape<Idx> g;
  Divider<Idx> by_columns;   // columns of all planes, N * C * W
  Divider<Idx> by_w;         // W
  Idx segment;               // rows per segment
  bool uniform;              // every window has the divisor whose reciprocal is `recip`
  bool divide;               // no position is a tap of two windows: each term is dy / divisor
  A recip;
  const T* dy;
  T* dx;

  // Items run column-fastest (a warp's lanes are consecutive columns, its loads rows of dy), then
  // by segment of rows.
  PG_HD void operator()(Idx item) const {
    const AvgAxis<Idx>& ay = g.axis[1];
    const AvgAxis<Idx>& ax = g.axis[2];
    const Idx seg = by_columns.div(item);
    const Idx column = item - seg * static_cast<Idx>(by_columns.divisor);
    const Idx y0 = seg * segment;
    const Idx plane = by_w.div(column);
    const Idx x = column - plane * ax.in;
    const Idx y_end = y0 + segment < ay.in ? y0 + segment : ay.in;
    const Idx kh = K > 0 ? Idx{K} : ay.kernel, kw = K > 0 ? Idx{K} : ax.kernel;
    // Window column j (0 .. kw - 1) of x: first + j; its reciprocal under a window row of the
    // full kernel (or 0 where the window column does not exist).
    const Idx first = x + ax.pad_begin - (kw - 1);
    bool col_ok[R];
    A col_div[R], col_recip[R];
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const Idx ox = first + j;
      col_ok[j] = j < kw && static_cast<uint32_t>(ox) < static_cast<uint32_t>(ax.out);
      col_div[j] = A(1);
      col_recip[j] = A(0);
      if (!uniform && col_ok[j]) {
        col_div[j] = g.template divisor<A>(1, kh, g.window_count(2, ox));
        col_recip[j] = A(1) / col_div[j];
      }
    }
    // A term: dy times its window's reciprocal divisor, or (divide) dy / divisor.
    const auto term = [&](A d, A div, A rec) { return divide ? d / div : d * rec; };
    const Idx plane_dy = plane * (ay.out * ax.out);
    // Window row oy's taps that cover x; false (nothing loaded) outside the plane's windows.
    const auto load_row = [&](Idx oy, A (&v)[R]) {
      const bool row_ok = static_cast<uint32_t>(oy) < static_cast<uint32_t>(ay.out);
      const Idx row = plane_dy + oy * ax.out + first;  // dy of window column j: dy[row + j]
#pragma unroll
      for (int j = 0; j < R; ++j) v[j] = row_ok && col_ok[j] ? static_cast<A>(to_float(dy[row + j])) : A(0);
      return row_ok;
    };
    // The sum of window row oy's terms, from its loaded taps (a row of the plane's windows).
    const auto row_sum = [&](Idx oy, const A (&v)[R]) {
      A h = A(0);
      if (uniform) {
#pragma unroll
        for (int j = 0; j < R; ++j)
          if (col_ok[j]) h += v[j];
        return h;
      }
      const Idx oy_start = oy - ay.pad_begin;
      if (oy_start >= 0 && oy_start + kh <= ay.in) {
#pragma unroll
        for (int j = 0; j < R; ++j)
          if (col_ok[j]) h += term(v[j], col_div[j], col_recip[j]);
        return h;
      }
      // A window row in the padding: its own counts along H.
      const Idx cy = g.window_count(1, oy);
#pragma unroll
      for (int j = 0; j < R; ++j)
        if (col_ok[j]) {
          const A div = g.template divisor<A>(1, cy, g.window_count(2, first + j));
          h += term(v[j], div, A(1) / div);
        }
      return h;
    };
    // The segment's window rows in order: oy0 + r for r < rows. Window row y + pad - t covers y
    // for t < kh, so the first kh - 1 rows only fill the ring; from then on each row completes
    // dx row y0 + r - (kh - 1). ring[R - 1] is the newest window row; dx sums the last kh.
    const Idx oy0 = y0 + ay.pad_begin - (kh - 1);
    const Idx rows = (y_end - y0) + kh - 1;
    const Idx out = plane * (ay.in * ax.in) + x;
    A ring[R];
#pragma unroll
    for (int t = 0; t < R; ++t) ring[t] = A(0);
    for (Idx r0 = 0; r0 < rows; r0 += P) {
      A v[P][R];
      bool ok[P];
#pragma unroll
      for (int i = 0; i < P; ++i) ok[i] = r0 + i < rows && load_row(oy0 + r0 + i, v[i]);
#pragma unroll
      for (int i = 0; i < P; ++i) {
        const Idx r = r0 + i;
        if (r >= rows) break;
#pragma unroll
        for (int s = 0; s + 1 < R; ++s) ring[s] = ring[s + 1];
        ring[R - 1] = ok[i] ? row_sum(oy0 + r, v[i]) : A(0);
        if (r < kh - 1) continue;
        A sum = A(0);
#pragma unroll
        for (int t = 0; t < R; ++t)
          if (t >= R - kh) sum += ring[t];
        dx[out + (y0 + r - (kh - 1)) * ax.in] = from_accum<T>(uniform ? sum * recip : sum);
      }
    }
  }
};

struct AvgGatherSlide : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.slide", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // 2D channels-first stride-1 windows without dilation; planes up to about 20 x 20 so that rows
  // end in every way and long columns are cut into segments; one free axis in three a wide kernel.
  static Domain domain() {
    Domain d;
    d.min_dims = d.max_dims = 2;
    d.windows = WindowRule::unit_stride;
    d.layouts = {Layout::channels_first};
    d.dilation = false;
    d.reach[1] = 20;
    d.reach[2] = 16;
    d.wide_kernel_one_in = 3;
    return d;
  }

  static Support supports(const Problem& p) { return avg_slide_support(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<AvgGatherSlide>(p);
    if (p.in_elems() == 0) return;
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      using A = accum_t<T>;
      double divisor = 1.0;
      const bool divide = !undilated_windows_overlap(p);
      const bool uniform = avg_uniform_divisor(p, &divisor) && !divide;
      const int64_t rows = slide_segment_rows(p), segments = (p.in[1] + rows - 1) / rows;
      const auto run = [&]<int K>() {
        ex.template for_each<Idx>(p.n * p.c * p.in[2] * segments, AvgGatherSlideBody<T, Idx, K>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.n * p.c * p.in[2])), Divider<Idx>(static_cast<Idx>(p.in[2])),
            static_cast<Idx>(rows), uniform, divide, A(1) / static_cast<A>(divisor), static_cast<const T*>(b.dy),
            static_cast<T*>(b.dx)});
      };
      if (p.kernel[1] == 3 && p.kernel[2] == 3) run.template operator()<3>();
      else run.template operator()<0>();
    });
  }
};

}  // namespace pg
