// max.direct.stored: for disjoint windows (stride >= effective kernel on every axis), one work
// item per output element decodes its stored index and writes its whole cell: dy at the
// indexed tap, 0 everywhere else (max_cell.hpp). Each dx element is written once, with no
// zeroing pass and no atomics; deterministic.
#pragma once

#include "src/registry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_cell.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "kernels/common/require.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxDirectStoredItem {
  MaxGeom<Idx> g;
  const T* dy;
  const void* indices;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_output<A0, V>(g, e);
    const Idx at = st.out_base + st.lin * g.step;
    int64_t stored[V];
    load_indices<V>(indices, g.index_type, at, stored);
    Idx winner[V];
#pragma unroll
    for (int j = 0; j < V; ++j) winner[j] = decode_index(g, stored[j], st.nc + j, st.q);
    write_cell<A0, V>(g, st, winner, load_pack<V>(dy, at), dx);
  }
};

struct MaxDirectStored {
  static constexpr const char* name = "max.direct.stored";
  static constexpr Op op = Op::max;
  static constexpr Inputs inputs = Inputs::dy_and_indices;
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;
  // Disjoint windows, anything else; a work item is one output cell, so sizes need no reach
  // beyond the default.
  static Domain domain() {
    Domain d;
    d.windows = WindowRule::disjoint;
    return d;
  }

  static Support supports(const Problem&) { return Support::yes(); }
  static size_t workspace_bytes(const Problem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    launch_with(ex, p, b, IndexWidth::fit);
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    // Overlapping windows would write a dx element from two cells.
    require_supported<MaxDirectStored>(p);
    dispatch_max(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const MaxDirectStoredItem<T, Idx, A0, V> item{make_max_geom<Idx>(p, V), static_cast<const T*>(b.dy), b.indices,
                                                    static_cast<T*>(b.dx)};
      ex.template for_each<Idx>(p.out_elems() / V, item);
    });
  }
};

}  // namespace pg
