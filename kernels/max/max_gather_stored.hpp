// max.gather.stored: one work item per input element (channels-last: per 16-byte pack of
// channels when C and the buffers allow) visits only the windows holding it (for_each_window_of) and sums
// dy where the window's stored index names it. Deterministic (fixed summation order), no
// atomics, and every dx element is written exactly once, so there is no zeroing pass. PyTorch's
// 2D CUDA max-pool backward works this way. It takes every problem; the variants beside it
// (max.gather.stored.run, .fixed.*, .block.*) are faster bodies for narrower domains.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxGatherStoredItem {
  MaxGeom<Idx> g;
  const T* dy;
  const void* indices;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_input<A0, V>(g, e);
    // The index a window stores when it picked this element; window format varies per window.
    int64_t mine[V];
#pragma unroll
    for (int j = 0; j < V; ++j) mine[j] = encode_position(g, st.q, st.lin, st.nc + j);
    const bool per_window = g.format == IndexFormat::window;
    accum_t<T> acc[V] = {};
    auto along_w = [&](Idx o0, Idx t0, Idx o1, Idx t1) {
      const Idx row = (o0 * g.out[1] + o1) * g.out[2];
      for_each_window_of(g, 2, st.q[2], [&](Idx o2, Idx t2) {
        const Idx at = st.out_base + (row + o2) * g.step;
        int64_t stored[V];
        load_indices<V>(indices, g.index_type, at, stored);
        const int64_t tap = (t0 * g.k[1] + t1) * g.k[2] + t2;
        bool match[V], any = false;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          match[j] = stored[j] == (per_window ? tap : mine[j]);
          any = any || match[j];
        }
        if (!any) return;
        const Pack<T, V> grad = load_pack<V>(dy, at);
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (match[j]) acc[j] += to_float(grad.v[j]);
      });
    };
    auto along_hw = [&](Idx o0, Idx t0) {
      for_each_window_of(g, 1, st.q[1], [&](Idx o1, Idx t1) { along_w(o0, t0, o1, t1); });
    };
    if (A0 == 0) for_each_window_of(g, 0, st.q[0], along_hw);
    else along_hw(0, 0);
    Pack<T, V> out;
#pragma unroll
    for (int j = 0; j < V; ++j) out.v[j] = from_accum<T>(acc[j]);
    store_pack<V>(dx, st.in_base + st.lin * g.step, out);
  }
};

struct MaxGatherStored : MaxVariant<MaxGatherStored> {
  static constexpr PoolTraits traits{
      .name = "max.gather.stored", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every problem: any window, layout, dtype, index format and type, both index widths.
  // Channels-last C up to 2 packs of f32 reaches the vector path.
  static Domain domain() {
    Domain d;
    d.max_channels = 8;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const MaxGatherStoredItem<T, Idx, A0, V> item{make_max_geom<Idx>(p, V), static_cast<const T*>(b.dy), b.indices,
                                                    static_cast<T*>(b.dx)};
      ex.template for_each<Idx>(p.in_elems() / V, item);
    });
  }
};

}  // namespace pg
