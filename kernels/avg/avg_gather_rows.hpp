// avg.gather.rows: the average pool backward of 1D channels-first problems (sequence and audio
// models: Conformer's k3s1p1, dilated and strided 1D windows), any kernel, stride, dilation,
// padding, ceil mode, divisor rule and divisor_override, every dtype, as long rows of flat dx.
//
// Why: avg.gather.planes, the best before it on 1D overlapping windows, ran Conformer's
// (32,512,1000) k3s1p1 row at 62.6% of the copy ceiling on the H200, issue-bound: 74 thread
// instructions per dx element against the 63 the multiprocessors can issue at the ceiling's rate
// (ncu, bench/results/2026-12-02_h200_direct_keys.md). It stages planes in shared memory behind
// per-block window tables; avg.gather, with no staging, loads and divides each dy once per lane it
// feeds. A 1D row needs neither. A work item here is V consecutive elements of flat dx (one
// 16-byte pack, wherever rows begin), and for a pack inside one row:
//   - stride 1, no dilation, a kernel K of 2, 3 or 5: the pack's V + K - 1 windows are loaded
//     once each into registers (neighbouring items read the same lines, which L1 holds) and lane
//     v sums the K from its own, unrolled, with no tap tests; where all of them lie inside the
//     row (every window but a row's first and last few) they share one reciprocal divisor;
//   - other stride-1 windows (dilated, wider): each lane walks its taps;
//   - strided windows: the windows that reach the pack are loaded once each, and each lane adds
//     those that have it as a tap.
// A pack that crosses a row's end, and every element where packs do not fit (V = 1), walks its
// windows per lane.
// Terms: where windows share elements, dy times the window's reciprocal divisor (two roundings,
// inside the oracle's (terms + 2) u, as avg.gather.columns' terms); where none do, dy / divisor,
// one rounding as the oracle and every avg variant compute it: bitwise equal to avg.gather there.
// Each lane sums its windows in ascending order from zero: deterministic, no atomics, each dx
// element written once.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "src/model/variant.hpp"

namespace pg {

// Whether some input element is a tap of two windows along W. Only then do terms multiply by a
// rounded reciprocal divisor; where none is, every dx element is one dy / divisor, and the avg
// variants agree bitwise (AvgVariants.AgreeBitwiseOnDisjointWindows).
inline bool rows_windows_share(const Problem& p) { return p.effective_kernel(2) > p.stride[2] && p.out[2] >= 2; }

template <class T, class Idx, int V, int K, bool kRecip>
struct AvgGatherRowsBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;  // 1D: axis 2 is the row, axes 0 and 1 are trivial
  Divider<Idx> by_w;
  A full_recip;  // 1 / the divisor of a window with every tap inside the input (kernel, or the override)
  const T* dy;
  T* dx;

  // Window o's divisor; the trivial axes count 1 under every rule, as avg.gather's product has them.
  PG_HD A divisor(Idx o) const { return g.template divisor<A>(1, 1, g.window_count(2, o)); }

  // The term of window o of the row whose dy starts at row_dy: dy / divisor, or (kRecip) dy times
  // the reciprocal, inside the oracle's (terms + 2) u as avg.gather.columns' terms are. `inner`:
  // window o has every tap inside the row, and its reciprocal is full_recip.
  PG_HD A term(Idx row_dy, Idx o, bool inner = false) const {
    const A d = static_cast<A>(to_float(dy[row_dy + o]));
    if constexpr (kRecip) return d * (inner ? full_recip : A(1) / divisor(o));
    else return d / divisor(o);
  }

  // The sum of element x's windows in ascending order.
  PG_HD A element(Idx row_dy, Idx x) const {
    const AvgAxis<Idx>& ax = g.axis[2];
    Idx lo, hi;
    ax.covering(x, &lo, &hi);
    A acc = A(0);
    for (Idx o = lo; o <= hi; ++o)
      if (ax.is_tap(x, o)) acc += term(row_dy, o);
    return acc;
  }

  PG_HD void operator()(Idx item) const {
    const AvgAxis<Idx>& ax = g.axis[2];
    const Idx e = item * V, W = ax.in;
    Idx row = by_w.div(e);
    Idx x = e - row * W;
    Pack<T, V> out;
    A acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = A(0);
    if (x + V <= W) {
      const Idx row_dy = row * ax.out;
      if constexpr (K > 0) {
        // Windows first .. first + V + K - 2, first = x + pad - (K - 1): lane v's are q[v] ..
        // q[v + K - 1] in ascending order. A window outside [0, out) adds +0, which leaves a sum
        // that starts from +0 as it is.
        const Idx first = x + ax.pad_begin - (K - 1);
        A q[V + K - 1];
        if (kRecip && ax.windows_inside(first, first + V + K - 2)) {
#pragma unroll
          for (int j = 0; j < V + K - 1; ++j) q[j] = static_cast<A>(to_float(dy[row_dy + first + j])) * full_recip;
        } else {
#pragma unroll
          for (int j = 0; j < V + K - 1; ++j) {
            const Idx o = first + j;
            q[j] = o >= 0 && o < ax.out ? term(row_dy, o) : A(0);
          }
        }
#pragma unroll
        for (int v = 0; v < V; ++v)
#pragma unroll
          for (int t = 0; t < K; ++t) acc[v] += q[v + t];
      } else if (ax.stride == 1) {
        // Lane v is tap t of window top - t * dilation, top = x + v + pad: descending taps,
        // ascending windows, only the taps whose window exists (a kernel of 2^40 visits a few).
        const bool inner = ax.windows_inside(x + ax.pad_begin - ax.reach, x + V - 1 + ax.pad_begin);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const Idx top = x + v + ax.pad_begin, over = top - (ax.out - 1);
          Idx t_hi = ax.by_dilation.div(top);
          if (t_hi > ax.kernel - 1) t_hi = ax.kernel - 1;
          const Idx t_lo = over <= 0 ? Idx{0} : ax.by_dilation.div(over + ax.dilation - 1);
          for (Idx t = t_hi; t >= t_lo; --t) acc[v] += term(row_dy, top - t * ax.dilation, inner);
        }
      } else {
        // Windows from the first that reaches lane 0 to the last that starts by lane V - 1, each
        // loaded once; a lane adds those that have it as a tap.
        Idx lo, hi, lo_last, hi_last;
        ax.covering(x, &lo, &hi);
        ax.covering(x + V - 1, &lo_last, &hi_last);
        const bool inner = ax.windows_inside(lo, hi_last);
        for (Idx o = lo; o <= hi_last; ++o) {
          const A t = term(row_dy, o, inner);
          const Idx start = o * ax.stride - ax.pad_begin;
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const Idx k = x + v - start;  // lane v's place in window o's span
            if (k >= 0 && k <= ax.reach && ax.is_tap(x + v, o)) acc[v] += t;
          }
        }
      }
    } else {
      // The pack crosses a row's end: each lane in its own row.
#pragma unroll
      for (int v = 0; v < V; ++v) {
        acc[v] = element(row * ax.out, x);
        if (++x == W) {
          x = 0;
          ++row;
        }
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(acc[v]);
    store_pack<V>(dx, e, out);
  }
};

struct AvgGatherRows : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.rows", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // 1D channels-first, any window; rows from a few elements to a few dozen, so that packs cross
  // rows and rows are shorter than a pack.
  static Domain domain() { return channels_first_rows(); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<AvgGatherRows>(p);
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      using A = accum_t<T>;
      constexpr int VW = kVecWidth<T>;
      const bool packed = flat_dx_packed<T, Idx>(p, b);
      const A full_recip = A(1) / (p.has_divisor_override ? static_cast<A>(p.divisor_override) : static_cast<A>(p.kernel[2]));
      const auto run = [&]<int V, int K, bool kRecip>() {
        ex.template for_each<Idx>(p.in_elems() / V, AvgGatherRowsBody<T, Idx, V, K, kRecip>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2])), full_recip, static_cast<const T*>(b.dy),
            static_cast<T*>(b.dx)});
      };
      const bool recip = rows_windows_share(p);
      if (!packed) {
        if (recip) run.template operator()<1, 0, true>();
        else run.template operator()<1, 0, false>();
        return;
      }
      with_unrolled_w_kernel(p, [&](auto kernel) {
        constexpr int K = decltype(kernel)::value;
        if (recip) run.template operator()<VW, K, true>();
        else run.template operator()<VW, K, false>();
      });
    });
  }
};

}  // namespace pg
