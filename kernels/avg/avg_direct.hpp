// avg.direct: for disjoint windows (stride >= effective kernel on every axis) at most one
// window covers a dx element, found with one division per axis. One work item per group of V
// consecutive dx elements writes each exactly once: dy / divisor for a tap, 0 for an element
// no window covers. Bytes moved: dy read once (neighbouring lanes share it in cache), dx
// written once; no zeroing pass, no atomics. Windows that tile the input exactly take the broadcast of
// avg_direct_exact.hpp.
#pragma once

#include "src/registry.hpp"
#include "kernels/avg/avg_direct_exact.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"

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

struct AvgDirect {
  static constexpr const char* name = "avg.direct";
  static constexpr Op op = Op::avg;
  static constexpr Inputs inputs = Inputs::dy_only;
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;
  static Domain domain() { return {}; }

  static Support supports(const Problem& p) {
    if (!p.windows_disjoint())
      return Support::no("windows overlap (stride < effective kernel on some axis): use avg.gather");
    return Support::yes();
  }
  static size_t workspace_bytes(const Problem&) { return 0; }

  // Exact tilings broadcast dy (avg_direct_exact.hpp); channels-first only for k2 along W.
  // False when p is not one.
  template <class T, class Idx, bool kChannelsLast, int V, class Exec>
  static bool launch_exact(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    if constexpr (V == 1) {
      return false;
    } else {
      if (!avg_direct_exact_applies(p) || (!kChannelsLast && p.kernel[2] != 2)) return false;
      using A = accum_t<T>;
      const A divisor = static_cast<A>(p.has_divisor_override ? p.divisor_override : p.taps());
      const auto dy = static_cast<const T*>(b.dy);
      const auto dx = static_cast<T*>(b.dx);
      if constexpr (kChannelsLast) {
        ex.template for_each<Idx>(p.out_elems() / V, AvgDirectExactPointsBody<T, Idx, V>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.c / V)), divisor, dy, dx});
      } else {
        const int64_t plane_in = p.in[1] * p.in[2];
        ex.template for_each<Idx>(p.in_elems() / V / p.kernel[0], AvgDirectExactPlanesBody<T, Idx, V, 2>{
            Divider<Idx>(static_cast<Idx>(plane_in / V)), Divider<Idx>(static_cast<Idx>(p.in[2] / V)),
            Divider<Idx>(static_cast<Idx>(p.kernel[1])), static_cast<Idx>(plane_in), static_cast<Idx>(p.out[1] * p.out[2]),
            static_cast<Idx>(p.out[2]), static_cast<Idx>(p.kernel[0]), divisor, dy, dx});
      }
      return true;
    }
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      with_dx_groups<T, Idx>(p, b, [&](auto channels_last, auto vec) {
        constexpr bool kChannelsLast = decltype(channels_last)::value;
        constexpr int V = decltype(vec)::value;
        if (launch_exact<T, Idx, kChannelsLast, V>(ex, p, b)) return;
        const int64_t row = kChannelsLast ? p.c : p.in[2];
        ex.template for_each<Idx>(p.in_elems() / V, AvgDirectBody<T, Idx, kChannelsLast, V>{
            make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(row / V)),
            static_cast<const T*>(b.dy), static_cast<T*>(b.dx)});
      });
    });
  }
};

}  // namespace pg
