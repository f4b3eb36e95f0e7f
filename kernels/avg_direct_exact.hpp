// avg.direct's hot path for windows that tile the input exactly (kernel == stride, no padding,
// no dilation, every axis a whole number of windows: k2 s2 p0 on even sizes). Every dx element
// is then a tap of exactly one window and every window's divisor is the same (each convention
// counts the full kernel), so the backward is a broadcast: one work item reads a pack of dy
// and writes the kernel-volume of dx packs it covers, with no per-element division of indices.
//
// The generic direct store spends its time on index arithmetic per dx group (a magic division
// per axis to find the window, per-axis counts, a float division per element); here the dy
// offset is the work item times the pack width and only the dx base needs three divisions.
// The value is dy / divisor as the oracle computes it: one rounding.
#pragma once

#include "avg_geometry.hpp"

namespace pg {

inline bool avg_direct_exact_applies(const Problem& p) {
  for (int a = 0; a < kAxes; ++a)
    if (p.kernel[a] != p.stride[a] || p.pad_begin[a] != 0 || p.pad_end[a] != 0 || p.dilation[a] != 1 ||
        p.in[a] != p.out[a] * p.kernel[a])
      return false;
  return true;
}

// Channels-first: a work item reads G = V / KW consecutive dy along W and writes the V dx they
// cover in each of the kernel's D x H rows (W a multiple of V, so packs never straddle rows).
// Channels-last: a work item reads V channels of one dy point and writes them to each of the
// kernel-volume dx points of its window (C a multiple of V).
template <class T, class Idx, bool kChannelsLast, int V, int KW>
struct AvgDirectExactBody {
  using A = accum_t<T>;
  static constexpr int G = kChannelsLast ? V : V / KW;
  AvgShape<Idx> g;
  Divider<Idx> packs_per_row;  // out W / G (channels-first), C / V (channels-last)
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const Pack<T, G> d = load_pack<G>(dy, gi * G);
    // Convert each value once (half types convert in software), then replicate.
    T s[G];
#pragma unroll
    for (int v = 0; v < G; ++v) s[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = s[kChannelsLast ? v : v / KW];

    const AvgAxis<Idx>& az = g.axis[0];
    const AvgAxis<Idx>& ay = g.axis[1];
    const AvgAxis<Idx>& ax = g.axis[2];
    Idx rest = packs_per_row.div(gi);
    const Idx lead = packs_per_row.mod(gi);
    Idx ox = 0;
    if constexpr (kChannelsLast) {
      ox = g.by_out[2].mod(rest);
      rest = g.by_out[2].div(rest);
    }
    const Idx oy = g.by_out[1].mod(rest);
    rest = g.by_out[1].div(rest);
    const Idx oz = g.by_out[0].mod(rest);
    const Idx outer = g.by_out[0].div(rest);
    if constexpr (kChannelsLast) {
      const Idx c0 = lead * V;
      for (Idx i = 0; i < az.kernel; ++i)
        for (Idx j = 0; j < ay.kernel; ++j)
          for (Idx l = 0; l < ax.kernel; ++l)
            store_pack<V>(dx, g.in_point(outer, oz * az.kernel + i, oy * ay.kernel + j, ox * ax.kernel + l) * g.c + c0, out);
    } else {
      const Idx x0 = lead * V;
      for (Idx i = 0; i < az.kernel; ++i)
        for (Idx j = 0; j < ay.kernel; ++j) store_pack<V>(dx, g.in_point(outer, oz * az.kernel + i, oy * ay.kernel + j, x0), out);
    }
  }
};

}  // namespace pg
