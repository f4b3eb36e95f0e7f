// max.gather.recompute: one work item per input element visits the windows holding it
// (for_each_window_of), recomputes each one's maximum from x, and sums dy where the maximum is this
// element. Deterministic, no atomics, every dx element written exactly once; it re-reads x
// (taps x covering windows per element), so it suits small windows.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_argmax.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxGatherRecomputeItem {
  MaxGeom<Idx> g;
  const T* x;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_input<A0, V>(g, e);
    accum_t<T> acc[V] = {};
    auto along_w = [&](Idx o0, Idx o1) {
      for_each_window_of(g, 2, st.q[2], [&](Idx o2, Idx) {
        const Idx o[kAxes] = {o0, o1, o2};
        Idx winner[V];
        window_argmax<A0, V>(g, x, st.in_base, o, winner);
        bool match[V], any = false;
#pragma unroll
        for (int j = 0; j < V; ++j) {
          match[j] = winner[j] == st.lin;
          any = any || match[j];
        }
        if (!any) return;
        const Pack<T, V> grad = load_pack<V>(dy, st.out_base + out_lin(g, o) * g.step);
#pragma unroll
        for (int j = 0; j < V; ++j)
          if (match[j]) acc[j] += to_float(grad.v[j]);
      });
    };
    auto along_hw = [&](Idx o0, Idx) {
      for_each_window_of(g, 1, st.q[1], [&](Idx o1, Idx) { along_w(o0, o1); });
    };
    if (A0 == 0) for_each_window_of(g, 0, st.q[0], along_hw);
    else along_hw(0, 0);
    Pack<T, V> out;
#pragma unroll
    for (int j = 0; j < V; ++j) out.v[j] = from_accum<T>(acc[j]);
    store_pack<V>(dx, st.in_base + st.lin * g.step, out);
  }
};

struct MaxGatherRecompute : MaxVariant<MaxGatherRecompute> {
  static constexpr PoolTraits traits{
      .name = "max.gather.recompute", .op = Op::max, .inputs = Inputs::dy_and_x, .deterministic = true};
  // Every problem: any window, layout, dtype, both index widths; the argmax comes from x, so
  // every index format and type is admitted (none is read). Channels-last C up to 2 packs of
  // f32 reaches the vector path.
  static Domain domain() {
    Domain d;
    d.max_channels = 8;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max(p, width, {b.x, b.dy, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const MaxGatherRecomputeItem<T, Idx, A0, V> item{make_max_geom<Idx>(p, V), static_cast<const T*>(b.x),
                                                       static_cast<const T*>(b.dy), static_cast<T*>(b.dx)};
      ex.template for_each<Idx>(p.in_elems() / V, item);
    });
  }
};

}  // namespace pg
