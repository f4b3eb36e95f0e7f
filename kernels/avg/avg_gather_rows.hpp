// avg.gather.rows: the average pool backward of 1D channels-first problems (sequence and audio
// models: Conformer's k3s1p1, dilated and strided 1D windows), any kernel, stride, dilation,
// padding, ceil mode, divisor rule and divisor_override, every dtype, as long rows of flat dx.
//
// Why: avg.gather.planes, the best before it on 1D overlapping windows, ran Conformer's
// (32,512,1000) k3s1p1 row at 62.6% of the copy ceiling on the H200, issue-bound: 74 thread
// instructions per dx element against the 63 the multiprocessors can issue at the ceiling's rate
// (ncu, bench/results/2026-12-02_h200_direct_keys.md). It stages planes in shared memory behind
// per-block window tables; avg.gather, with no staging, loads and divides each dy once per lane it
// feeds. A 1D row needs neither: a work item here is V consecutive elements of flat dx (one
// 16-byte pack, wherever rows begin). For a pack inside one row the windows that cover its
// elements are one range of window numbers: each is loaded once (neighbouring items read the same
// lines, which L1 holds) and divided by its own divisor once, and each lane sums those that have
// it as a tap. With stride 1, no dilation and a kernel of 3 (kExact3) the pack's V + 2 windows are
// unrolled and a lane's three are fixed registers: no tap tests. A pack that crosses a row's end,
// and every element where packs do not fit (V = 1), walks its windows per lane.
// A term is dy / divisor in the accumulator type and each lane sums its windows in ascending
// order from zero, as avg.gather does: bitwise equal to it, deterministic, no atomics, each dx
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

// Stride 1, dilation 1, kernel 3: the unrolled path.
inline bool rows_exact3(const Problem& p) { return p.kernel[2] == 3 && p.stride[2] == 1 && p.dilation[2] == 1; }

template <class T, class Idx, int V, bool kExact3>
struct AvgGatherRowsBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;  // 1D: axis 2 is the row, axes 0 and 1 are trivial
  Divider<Idx> by_w;
  const T* dy;
  T* dx;

  // dy / divisor of window o of the row whose dy starts at row_dy. The trivial axes count 1 under
  // every rule, as avg.gather's per-axis product has them.
  PG_HD A term(Idx row_dy, Idx o) const {
    return static_cast<A>(to_float(dy[row_dy + o])) / g.template divisor<A>(1, 1, g.window_count(2, o));
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
    if (x + V <= W) {
      A acc[V];
      const Idx row_dy = row * ax.out;
      if constexpr (kExact3) {
        // Windows first - 2 .. first + V - 1, first = x + pad: lane v's are q[v], q[v + 1],
        // q[v + 2] in ascending order; a window outside [0, out) adds +0, which leaves a sum that
        // starts from +0 as it is.
        const Idx first = x + ax.pad_begin - 2;
        A q[V + 2];
#pragma unroll
        for (int j = 0; j < V + 2; ++j) {
          const Idx o = first + j;
          q[j] = static_cast<uint32_t>(o) < static_cast<uint32_t>(ax.out) ? term(row_dy, o) : A(0);
        }
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = ((A(0) + q[v]) + q[v + 1]) + q[v + 2];
      } else {
        // Windows from the first that reaches lane 0 to the last that starts by lane V - 1.
        Idx lo, hi, lo_last, hi_last;
        ax.covering(x, &lo, &hi);
        ax.covering(x + V - 1, &lo_last, &hi_last);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] = A(0);
        for (Idx o = lo; o <= hi_last; ++o) {
          const A t = term(row_dy, o);
          const Idx start = o * ax.stride - ax.pad_begin;
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const Idx k = x + v - start;  // lane v's place in window o's span
            if (k >= 0 && k <= ax.reach && ax.is_tap(x + v, o)) acc[v] += t;
          }
        }
      }
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(acc[v]);
    } else {
      // The pack crosses a row's end: each lane in its own row.
#pragma unroll
      for (int v = 0; v < V; ++v) {
        out.v[v] = from_accum<T>(element(row * ax.out, x));
        if (++x == W) {
          x = 0;
          ++row;
        }
      }
    }
    store_pack<V>(dx, e, out);
  }
};

struct AvgGatherRows : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.rows", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // 1D channels-first, any window; rows from a few elements to a few dozen, so that packs cross
  // rows and rows are shorter than a pack; one free axis in three a wide kernel.
  static Domain domain() {
    Domain d;
    d.min_dims = d.max_dims = 1;
    d.layouts = {Layout::channels_first};
    d.reach[2] = 40;
    return d;
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<AvgGatherRows>(p);
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      constexpr int VW = kVecWidth<T>;
      // Full 16-byte packs of dx: aligned, and a whole number of them. The int64 path stays scalar.
      const bool packed = std::is_same_v<Idx, int32_t> && aligned16(b.dx) && p.in_elems() % VW == 0;
      const auto run = [&]<int V, bool kExact3>() {
        ex.template for_each<Idx>(p.in_elems() / V, AvgGatherRowsBody<T, Idx, V, kExact3>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2])), static_cast<const T*>(b.dy),
            static_cast<T*>(b.dx)});
      };
      if (!packed) run.template operator()<1, false>();
      else if (rows_exact3(p)) run.template operator()<VW, true>();
      else run.template operator()<VW, false>();
    });
  }
};

}  // namespace pg
