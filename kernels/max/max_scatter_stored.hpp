// max.scatter.stored: one work item per output element adds dy at the input position its
// stored index names. Overlapping windows can name the same input, so the adds are atomic
// and the result is not bitwise repeatable; dx (or the f32 workspace) is zeroed first.
#pragma once

#include "src/registry.hpp"
#include "kernels/common/accum_workspace.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxScatterStoredItem {
  MaxGeom<Idx> g;
  const T* dy;
  const void* indices;
  accum_t<T>* sum;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_output<A0, V>(g, e);
    const Idx at = st.out_base + st.lin * g.step;
    int64_t stored[V];
    load_indices<V>(indices, g.index_type, at, stored);
    const Pack<T, V> grad = load_pack<V>(dy, at);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const Idx pos = decode_index(g, stored[j], st.nc + j, st.q);
      if (pos >= 0) atomic_add(sum + st.in_base + pos * g.step + j, static_cast<accum_t<T>>(to_float(grad.v[j])));
    }
  }
};

struct MaxScatterStored {
  static constexpr const char* name = "max.scatter.stored";
  static constexpr Op op = Op::max;
  static constexpr Inputs inputs = Inputs::dy_and_indices;
  static constexpr bool deterministic = false;
  static constexpr bool gpu_only = false;
  // Every problem: any window, layout, dtype, index format and type, both index widths.
  // Channels-last C up to 2 packs of f32 reaches the vector path.
  static Domain domain() {
    Domain d;
    d.max_channels = 8;
    d.reach[1] = 16;  // atomics race only on problems big enough for several CPU threads
    d.reach[2] = 40;
    return d;
  }

  static Support supports(const Problem&) { return Support::yes(); }
  static size_t workspace_bytes(const Problem& p) { return accum_workspace_bytes(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    launch_with(ex, p, b, IndexWidth::fit);
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max(p, width, {b.dy, b.indices}, [&]<class T, class Idx, int A0, int V>() {
      accum_t<T>* sum = zeroed_accumulator<T>(ex, p, b);
      const MaxScatterStoredItem<T, Idx, A0, V> item{make_max_geom<Idx>(p, V), static_cast<const T*>(b.dy), b.indices, sum};
      ex.template for_each<Idx>(p.out_elems() / V, item);
      narrow_workspace<T, Idx>(ex, p, b);
    });
  }
};

}  // namespace pg
