// max.scatter.stored and max.scatter.recompute: one work item per output element finds its
// window's maximum (decodes its stored index, or recomputes it from x) and adds dy there.
// Overlapping windows can name the same input, so the adds are atomic and the result is not
// bitwise repeatable; dx (or the f32 workspace) is zeroed first.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/accum_workspace.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_reads.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <ArgmaxFrom S, class T, class Idx, int A0, int V>
struct MaxScatterItem {
  MaxGeom<Idx> g;
  MaxReads<S, T, Idx> reads;
  accum_t<T>* sum;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_output<A0, V>(g, e);
    Idx winner[V];
    const Pack<T, V> grad = reads.template winners_and_grad<A0, V>(g, st, winner);
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (winner[j] >= 0)
        atomic_add(sum + st.in_base + winner[j] * g.step + j, static_cast<accum_t<T>>(to_float(grad.v[j])));
  }
};

template <ArgmaxFrom S>
struct MaxScatter : MaxVariant<MaxScatter<S>> {
  static constexpr PoolTraits traits{.name = S == ArgmaxFrom::stored ? "max.scatter.stored" : "max.scatter.recompute",
                                     .op = Op::max,
                                     .inputs = kArgmaxInputs<S>,
                                     .deterministic = false};
  // Every problem: any window, layout, dtype, both index widths, and (stored) every index format
  // and type; recompute reads none, so it admits them all too. Channels-last C up to 2 packs of
  // f32 reaches the vector path.
  static Domain domain() {
    Domain d;
    d.max_channels = 8;
    d.reach[1] = 16;  // atomics race only on problems big enough for several CPU threads
    d.reach[2] = 40;
    return d;
  }

  static size_t workspace_bytes(const Problem& p) { return accum_workspace_bytes(p); }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max(p, width, {argmax_buffer<S>(b), b.dy}, [&]<class T, class Idx, int A0, int V>() {
      accum_t<T>* sum = zeroed_accumulator<T>(ex, p, b);
      const MaxScatterItem<S, T, Idx, A0, V> item{make_max_geom<Idx>(p, V), MaxReads<S, T, Idx>::from(b), sum};
      ex.template for_each<Idx>(p.out_elems() / V, item);
      narrow_workspace<T, Idx>(ex, p, b);
    });
  }
};

using MaxScatterStored = MaxScatter<ArgmaxFrom::stored>;
using MaxScatterRecompute = MaxScatter<ArgmaxFrom::recompute>;

}  // namespace pg
