// avg.direct's hot path for windows that tile the input exactly (kernel == stride, no padding,
// no dilation, every axis a whole number of windows: k2 s2 p0 on even sizes). Every dx element
// is then a tap of exactly one window and every window's divisor is the same (each convention
// counts the full kernel), so the backward is a broadcast of dy / divisor (one rounding, as the
// oracle computes it) with no per-element division of indices.
#pragma once

#include "kernels/avg/avg_geometry.hpp"

namespace pg {

inline bool avg_direct_exact_applies(const Problem& p) {
  for (int a = 0; a < kAxes; ++a)
    if (p.kernel[a] != p.stride[a] || p.pad_begin[a] != 0 || p.pad_end[a] != 0 || p.dilation[a] != 1 ||
        p.in[a] != p.out[a] * p.kernel[a])
      return false;
  return true;
}

// Channels-first, kernel KW along W (V a multiple of KW, W of V): a work item is one V-pack of
// dx in the first plane of a window's D taps; it reads the V / KW dy it covers and writes the
// pack to each of the kernel's D planes. Consecutive items are consecutive packs of a plane, so
// every store instruction of a warp writes 32 x 16 contiguous bytes. (Items that each wrote the
// D x H taps of a dy group stored rows with gaps between them: f16 rows of 112 bytes end
// mid-sector. H100, avgpool3d (16,64,16,56,56) k2s2 f16: 0.057 ms then, 0.044 ms this way; f32
// 0.0855 -> 0.0831 ms.) The item whose row pair shares a dy row reads it from cache.
template <class T, class Idx, int V, int KW>
struct AvgDirectExactPlanesBody {
  using A = accum_t<T>;
  static constexpr int G = V / KW;
  Divider<Idx> packs_per_plane;  // H * W / V
  Divider<Idx> packs_per_row;    // W / V
  Divider<Idx> rows_per_window;  // kernel along H
  Idx plane_in, plane_out, out_w, kernel_d;
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const Idx at = packs_per_plane.mod(gi);
    const Idx window_plane = packs_per_plane.div(gi);  // n * C * D_out + oz, as a dy plane index
    const Idx oy = rows_per_window.div(packs_per_row.div(at));
    const Pack<T, G> d = load_pack<G>(dy, window_plane * plane_out + oy * out_w + packs_per_row.mod(at) * G);
    // Convert each value once (half types convert in software), then replicate.
    T s[G];
#pragma unroll
    for (int v = 0; v < G; ++v) s[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = s[v / KW];
    const Idx first = window_plane * kernel_d * plane_in + at * V;
    for (Idx i = 0; i < kernel_d; ++i) store_pack<V>(dx, first + i * plane_in, out);
  }
};

// Channels-last (C a multiple of V): a work item reads V channels of one dy point and writes
// them to each of the kernel-volume dx points of its window.
template <class T, class Idx, int V>
struct AvgDirectExactPointsBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> packs_per_point;  // C / V
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const Pack<T, V> d = load_pack<V>(dy, gi * V);
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);

    const AvgAxis<Idx>& az = g.axis[0];
    const AvgAxis<Idx>& ay = g.axis[1];
    const AvgAxis<Idx>& ax = g.axis[2];
    const Idx c0 = packs_per_point.mod(gi) * V;
    Idx rest = packs_per_point.div(gi);
    const Idx ox = g.by_out[2].mod(rest);
    rest = g.by_out[2].div(rest);
    const Idx oy = g.by_out[1].mod(rest);
    rest = g.by_out[1].div(rest);
    const Idx oz = g.by_out[0].mod(rest);
    const Idx outer = g.by_out[0].div(rest);
    for (Idx i = 0; i < az.kernel; ++i)
      for (Idx j = 0; j < ay.kernel; ++j)
        for (Idx l = 0; l < ax.kernel; ++l)
          store_pack<V>(dx, g.in_point(outer, oz * az.kernel + i, oy * ay.kernel + j, ox * ax.kernel + l) * g.c + c0, out);
  }
};

}  // namespace pg
