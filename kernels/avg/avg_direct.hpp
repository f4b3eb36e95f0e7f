// avg.direct: for disjoint windows (stride >= effective kernel on every axis) at most one
// window covers a dx element, found with one division per axis. One work item per group of V
// consecutive dx elements writes each exactly once: dy / divisor for a tap, 0 for an element
// no window covers. Bytes moved: dy read once (neighbouring lanes share it in cache), dx
// written once; no zeroing pass, no atomics. V-wide packs where dy and dx are 16-byte aligned
// and the contiguous axis divides into them, else one element per item. (Windows that tile the
// input exactly have broadcasts of their own: avg.direct.exact.cl and .cf.)
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

template <class T, class Idx, bool kChannelsLast, int V>
struct AvgDirectBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const DxGroup<Idx> q = dx_group<kChannelsLast>(g, groups_per_row, V, gi);
    const AvgAxis<Idx>& ax = g.axis[2];
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(A(0));
    Idx oz, oy;
    if (g.axis[0].only_window(q.s[0], &oz) && g.axis[1].only_window(q.s[1], &oy)) {
      const Idx cz = g.axis[0].count(g.rule, oz);
      const Idx cy = g.axis[1].count(g.rule, oy);
      const Idx row = g.out_point(q.outer, oz, oy, 0);
      if constexpr (kChannelsLast) {
        Idx ox;
        if (ax.only_window(q.s[2], &ox)) {
          const A divisor = g.template divisor<A>(cz, cy, ax.count(g.rule, ox));
          const Pack<T, V> d = load_pack<V>(dy, (row + ox) * g.c + q.c0);
#pragma unroll
          for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
        }
      } else {
        // Neighbouring lanes usually share their window (k2 s2: pairs): divide once per window.
        Idx prev_ox = -1;
        T prev = out.v[0];
#pragma unroll
        for (int v = 0; v < V; ++v) {
          Idx ox;
          if (!ax.only_window(q.s[2] + v, &ox)) continue;
          if (ox != prev_ox) {
            const A divisor = g.template divisor<A>(cz, cy, ax.count(g.rule, ox));
            prev = from_accum<T>(static_cast<A>(to_float(dy[row + ox])) / divisor);
            prev_ox = ox;
          }
          out.v[v] = prev;
        }
      }
    }
    store_pack<V>(dx, q.offset, out);
  }
};

struct AvgDirect : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.direct", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Disjoint windows, at the default reach: items are one element or pack along the contiguous
  // axis and have no structure along D or H to span.
  static Domain domain() { return {.windows = WindowRule::disjoint, .shapes = {}}; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      with_dx_groups<T, Idx>(p, b, [&](auto channels_last, auto vec) {
        constexpr bool kChannelsLast = decltype(channels_last)::value;
        constexpr int V = decltype(vec)::value;
        const int64_t row = kChannelsLast ? p.c : p.in[2];
        ex.template for_each<Idx>(p.in_elems() / V, AvgDirectBody<T, Idx, kChannelsLast, V>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(row / V)),
            static_cast<const T*>(b.dy), static_cast<T*>(b.dx)});
      });
    });
  }
};

}  // namespace pg
