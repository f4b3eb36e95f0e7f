// avg.gather: one work item per group of V consecutive dx elements (along W in channels-first,
// along C in channels-last), summing dy / divisor over every window that has the element as a
// tap. Every dx element is written once, with no zeroing pass and no atomics, in a fixed order:
// deterministic. Works for every problem, with V-wide packs where dy and dx are 16-byte aligned
// and the contiguous axis divides into them, else one element per item.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

template <class T, class Idx, bool kChannelsLast, int V>
struct AvgGatherBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const DxGroup<Idx> q = dx_group<kChannelsLast>(g, groups_per_row, V, gi);
    const AvgAxis<Idx>& az = g.axis[0];
    const AvgAxis<Idx>& ay = g.axis[1];
    const AvgAxis<Idx>& ax = g.axis[2];
    A acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = A(0);
    Idx z_lo, z_hi, y_lo, y_hi;
    az.covering(q.s[0], &z_lo, &z_hi);
    ay.covering(q.s[1], &y_lo, &y_hi);
    for (Idx oz = z_lo; oz <= z_hi; ++oz) {
      if (!az.is_tap(q.s[0], oz)) continue;
      const Idx cz = az.count(g.rule, oz);
      for (Idx oy = y_lo; oy <= y_hi; ++oy) {
        if (!ay.is_tap(q.s[1], oy)) continue;
        const Idx cy = ay.count(g.rule, oy);
        const Idx row = g.out_point(q.outer, oz, oy, 0);
        if constexpr (kChannelsLast) {
          // All lanes are channels of one position: one window walk, V-wide dy loads.
          Idx x_lo, x_hi;
          ax.covering(q.s[2], &x_lo, &x_hi);
          for (Idx ox = x_lo; ox <= x_hi; ++ox) {
            if (!ax.is_tap(q.s[2], ox)) continue;
            const A divisor = g.template divisor<A>(cz, cy, ax.count(g.rule, ox));
            const Pack<T, V> d = load_pack<V>(dy, (row + ox) * g.c + q.c0);
#pragma unroll
            for (int v = 0; v < V; ++v) acc[v] += static_cast<A>(to_float(d.v[v])) / divisor;
          }
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const Idx x = q.s[2] + v;
            Idx x_lo, x_hi;
            ax.covering(x, &x_lo, &x_hi);
            for (Idx ox = x_lo; ox <= x_hi; ++ox) {
              if (!ax.is_tap(x, ox)) continue;
              const A divisor = g.template divisor<A>(cz, cy, ax.count(g.rule, ox));
              acc[v] += static_cast<A>(to_float(dy[row + ox])) / divisor;
            }
          }
        }
      }
    }
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(acc[v]);
    store_pack<V>(dx, q.offset, out);
  }
};

struct AvgGather : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Every problem, at the default reach (a few windows per axis): items are one element or pack
  // along the contiguous axis and have no structure along D or H to span.
  static Domain domain() { return Domain{}; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      with_dx_groups<T, Idx>(p, b, [&](auto channels_last, auto vec) {
        constexpr bool kChannelsLast = decltype(channels_last)::value;
        constexpr int V = decltype(vec)::value;
        const int64_t row = kChannelsLast ? p.c : p.in[2];
        ex.template for_each<Idx>(p.in_elems() / V, AvgGatherBody<T, Idx, kChannelsLast, V>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(row / V)),
            static_cast<const T*>(b.dy), static_cast<T*>(b.dx)});
      });
    });
  }
};

}  // namespace pg
