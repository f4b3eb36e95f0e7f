// max.direct.recompute: for disjoint windows (stride >= effective kernel on every axis), one
// work item per output element recomputes its window's maximum from x and writes its whole
// cell: dy at the maximum, 0 everywhere else (max_cell.hpp). Each x and dx element is touched
// once, with no zeroing pass and no atomics; deterministic.
#pragma once

#include "src/registry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_argmax.hpp"
#include "kernels/max/max_cell.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxDirectRecomputeItem {
  MaxGeom<Idx> g;
  const T* x;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_output<A0, V>(g, e);
    Idx winner[V];
    window_argmax<A0, V>(g, x, st.in_base, st.q, winner);
    write_cell<A0, V>(g, st, winner, load_pack<V>(dy, st.out_base + st.lin * g.step), dx);
  }
};

struct MaxDirectRecompute {
  static constexpr const char* name = "max.direct.recompute";
  static constexpr Op op = Op::max;
  static constexpr Inputs inputs = Inputs::dy_and_x;
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
    require_supported<MaxDirectRecompute>(p);
    dispatch_max(p, width, {b.x, b.dy, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const MaxDirectRecomputeItem<T, Idx, A0, V> item{make_max_geom<Idx>(p, V), static_cast<const T*>(b.x),
                                                       static_cast<const T*>(b.dy), static_cast<T*>(b.dx)};
      ex.template for_each<Idx>(p.out_elems() / V, item);
    });
  }
};

}  // namespace pg
