// avg.gather's hot path for the most common overlapping window: kernel 3, stride 1, padding 1,
// no dilation on H and W (and on D, or a 2D problem), channels-first, so out == in on every
// axis and dx is the 3x3(x3) box sum of s = dy / divisor.
//
// The generic gather reads and divides every dy value once per tap (27 times in 3D) and spends
// most of its time on index arithmetic. Here a work item owns V consecutive dx along W of one
// row and walks a run of D planes. Per window plane it reads three dy rows (a V-wide pack and
// one halo element each side; neighbouring items read the same rows, from cache), scales and
// sums them along W and H in registers; dx of plane z is then the sum of the window planes
// z-1, z, z+1, which slide through registers. A dx element costs one plane of arithmetic and
// about one dy read from DRAM.
//
// The divisor is the product of per-axis counts, and a count differs from the interior one only
// at the first and last window of an axis (exclude_pad), so each row needs two reciprocals,
// one for interior and one for border columns. Each term is rounded twice (the reciprocal and
// the product) and sums are 3+3+3 deep: inside the oracle's (terms + 2) u bound.
#pragma once

#include <algorithm>

#include "avg_geometry.hpp"

namespace pg {

// True when p is the case AvgBox3Body computes.
inline bool avg_box3_applies(const Problem& p) {
  if (p.layout != Layout::channels_first) return false;
  for (int a = 0; a < kAxes; ++a) {
    const bool box = p.kernel[a] == 3 && p.pad_begin[a] == 1 && p.pad_end[a] == 1;
    const bool flat = a == 0 && p.in[0] == 1 && p.kernel[0] == 1 && p.pad_begin[0] == 0 && p.pad_end[0] == 0;
    if (p.stride[a] != 1 || p.dilation[a] != 1 || !(box || flat) || p.out[a] != p.in[a]) return false;
  }
  return true;
}

// kDepth: the D axis is a 3-window (3D); else D is a single plane (2D).
template <class T, class Idx, int V, bool kDepth>
struct AvgBox3Body {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;  // W / V
  Divider<Idx> chunks;          // runs of D planes per (n, c, y)
  Idx chunk;                    // planes per run
  const T* dy;
  T* dx;

  // Sum over the three window rows around y and the windows along W covering x0 .. x0+V-1, of
  // dy / divisor in window plane oz.
  PG_HD void plane(Idx outer, Idx oz, Idx y, Idx x0, const bool* edge, A* sum) const {
    const Idx H = g.axis[1].in, W = g.axis[2].in;
    const Idx cz = g.axis[0].count(g.rule, oz);
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = A(0);
#pragma unroll
    for (int r = 0; r < 3; ++r) {
      const Idx oy = y - 1 + r;
      if (oy < 0 || oy >= H) continue;
      const Idx cy = g.axis[1].count(g.rule, oy);
      const A inner = A(1) / g.template divisor<A>(cz, cy, Idx{3});
      const A border = A(1) / g.template divisor<A>(cz, cy, g.axis[2].count(g.rule, Idx{0}));
      const Idx row = g.out_point(outer, oz, oy, 0);
      const Pack<T, V> mid = load_pack<V>(dy, row + x0);
      A t[V + 2];
      t[0] = x0 > 0 ? static_cast<A>(to_float(dy[row + x0 - 1])) : A(0);
#pragma unroll
      for (int v = 0; v < V; ++v) t[v + 1] = static_cast<A>(to_float(mid.v[v]));
      t[V + 1] = x0 + V < W ? static_cast<A>(to_float(dy[row + x0 + V])) : A(0);
#pragma unroll
      for (int j = 0; j < V + 2; ++j) t[j] *= edge[j] ? border : inner;
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v] += (t[v] + t[v + 1]) + t[v + 2];
    }
  }

  PG_HD void operator()(Idx gi) const {
    const Idx x0 = groups_per_row.mod(gi) * V;
    Idx rest = groups_per_row.div(gi);
    const Idx y = g.by_in[1].mod(rest);
    rest = g.by_in[1].div(rest);
    const Idx z_begin = chunks.mod(rest) * chunk;
    const Idx outer = chunks.div(rest);
    const Idx D = g.axis[0].in, W = g.axis[2].in;
    const Idx z_end = z_begin + chunk < D ? z_begin + chunk : D;
    // Window columns x0-1 .. x0+V: which are the first or last window along W.
    bool edge[V + 2];
#pragma unroll
    for (int j = 0; j < V + 2; ++j) edge[j] = x0 - 1 + j == 0 || x0 - 1 + j == W - 1;
    A before[V], here[V], after[V];
#pragma unroll
    for (int v = 0; v < V; ++v) before[v] = after[v] = A(0);
    if constexpr (kDepth) {
      if (z_begin > 0) plane(outer, z_begin - 1, y, x0, edge, before);
      plane(outer, z_begin, y, x0, edge, here);
    }
    for (Idx z = z_begin; z < z_end; ++z) {
      Pack<T, V> out;
      if constexpr (kDepth) {
        if (z + 1 < D) plane(outer, z + 1, y, x0, edge, after);
        else
          for (int v = 0; v < V; ++v) after[v] = A(0);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          out.v[v] = from_accum<T>((before[v] + here[v]) + after[v]);
          before[v] = here[v];
          here[v] = after[v];
        }
      } else {
        plane(outer, z, y, x0, edge, here);
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(here[v]);
      }
      store_pack<V>(dx, g.in_point(outer, z, y, x0), out);
    }
  }
};

// Work items for p: W / V * H * N * C per run of planes, D cut into runs only as far as needed
// to fill the GPU (each run re-reads two window planes).
template <class T, class Idx, int V, bool kDepth>
AvgBox3Body<T, Idx, V, kDepth> make_avg_box3(const Problem& p, const T* dy, T* dx, int64_t* items) {
  constexpr int64_t kWantItems = int64_t{1} << 19;
  const int64_t per_run = p.n * p.c * p.in[1] * (p.in[2] / V);
  const int64_t runs = std::min<int64_t>(p.in[0], std::max<int64_t>(1, (kWantItems + per_run - 1) / per_run));
  const int64_t chunk = (p.in[0] + runs - 1) / runs;
  const int64_t used = (p.in[0] + chunk - 1) / chunk;
  *items = per_run * used;
  return {make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2] / V)), Divider<Idx>(static_cast<Idx>(used)),
          static_cast<Idx>(chunk), dy, dx};
}

}  // namespace pg
