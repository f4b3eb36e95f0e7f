// max.direct.stored and max.direct.recompute: for disjoint windows (stride >= effective kernel
// on every axis), one work item per output element finds its window's maximum (decodes its
// stored index, or recomputes it from x) and writes its whole cell: dy at the maximum, 0
// everywhere else (max_cell.hpp). Each dx element is written once, with no zeroing pass and no
// atomics; deterministic.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_reads.hpp"
#include "kernels/max/max_cell.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <ArgmaxFrom S, class T, class Idx, int A0, int V>
struct MaxDirectItem {
  MaxGeom<Idx> g;
  MaxReads<S, T, Idx> reads;
  typename MaxReads<S, T, Idx>::template Keys<V> keys;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_output<A0, V>(g, e);
    Idx winner[V];
    const Pack<T, V> grad = reads.template keys_and_grad<A0, V>(g, st, winner);
    write_cell<A0, V>(g, st, keys, winner, grad, dx);
  }
};

template <ArgmaxFrom S>
struct MaxDirect : MaxVariant<MaxDirect<S>> {
  static constexpr PoolTraits traits{.name = S == ArgmaxFrom::stored ? "max.direct.stored" : "max.direct.recompute",
                                     .op = Op::max,
                                     .inputs = kArgmaxInputs<S>,
                                     .deterministic = true};
  // Disjoint windows, anything else; a work item is one output cell, so sizes need no reach
  // beyond the default.
  static Domain domain() {
    Domain d;
    d.windows = WindowRule::disjoint;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    // Overlapping windows would write a dx element from two cells.
    require_supported<MaxDirect>(p);
    dispatch_max(p, width, {argmax_buffer<S>(b), b.dy, b.dx},
                 [&]<class T, class Idx, int A0, int V>() {
      const MaxGeom<Idx> g = make_max_geom<Idx>(p, V);
      const MaxDirectItem<S, T, Idx, A0, V> item{g, MaxReads<S, T, Idx>::from(b), MaxReads<S, T, Idx>::template keys<V>(g),
                                                 static_cast<T*>(b.dx)};
      ex.template for_each<Idx>(p.out_elems() / V, item);
    });
  }
};

using MaxDirectStored = MaxDirect<ArgmaxFrom::stored>;
using MaxDirectRecompute = MaxDirect<ArgmaxFrom::recompute>;

}  // namespace pg
