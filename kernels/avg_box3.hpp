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
// A work item can also own R consecutive rows, which share the R + 2 window rows they read, so
// a window row is loaded and summed along W once per R dx rows instead of three times; on an
// H100 one row per item (more resident items) measured faster (kAvgBox3Rows below).
//
// The divisor is the product of per-axis counts, and a count differs from the interior one only
// at the first and last window of an axis (exclude_pad), so the host computes the eight
// reciprocals once. Each term is rounded twice (the reciprocal and the product) and sums are
// 3+3+3 deep: inside the oracle's (terms + 2) u bound.
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

// kDepth: the D axis is a 3-window (3D); else D is a single plane (2D). R: dx rows per work
// item, which share the R + 2 window rows they read.
template <class T, class Idx, int V, int R, bool kDepth>
struct AvgBox3Body {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;  // W / V
  Divider<Idx> row_groups;      // ceil(H / R)
  Divider<Idx> chunks;          // runs of D planes per (n, c, row group)
  Idx chunk;                    // planes per run
  // 1 / divisor by whether the window is the first or last along D, H, W: [ez][ey][ex].
  A recip[2][2][2];
  const T* dy;
  T* dx;

  // W-sums of dy / divisor in window row `row` (element offset of its x = 0) for the columns
  // x0 .. x0+V-1; `edge` marks which of the window columns x0-1 .. x0+V is a border window.
  PG_HD void row_sums(Idx row, Idx x0, const bool* edge, A inner, A border, A* w) const {
    const Idx W = g.axis[2].in;
    const Pack<T, V> mid = load_pack<V>(dy, row + x0);
    A t[V + 2];
    t[0] = x0 > 0 ? static_cast<A>(to_float(dy[row + x0 - 1])) : A(0);
#pragma unroll
    for (int v = 0; v < V; ++v) t[v + 1] = static_cast<A>(to_float(mid.v[v]));
    t[V + 1] = x0 + V < W ? static_cast<A>(to_float(dy[row + x0 + V])) : A(0);
#pragma unroll
    for (int j = 0; j < V + 2; ++j) t[j] *= edge[j] ? border : inner;
#pragma unroll
    for (int v = 0; v < V; ++v) w[v] = (t[v] + t[v + 1]) + t[v + 2];
  }

  // sum[k] = the 3 x 3 window sums of window plane oz for dx row y0 + k.
  PG_HD void plane(Idx outer, Idx oz, Idx y0, Idx x0, const bool* edge, A (*sum)[V]) const {
    const Idx D = g.axis[0].in, H = g.axis[1].in;
    // Constant indices only: a runtime index into the parameter array would copy it to memory.
    const bool ez = oz == 0 || oz == D - 1;
    const A edge_inner = ez ? recip[1][1][0] : recip[0][1][0], edge_border = ez ? recip[1][1][1] : recip[0][1][1];
    const A mid_inner = ez ? recip[1][0][0] : recip[0][0][0], mid_border = ez ? recip[1][0][1] : recip[0][0][1];
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) sum[k][v] = A(0);
#pragma unroll
    for (int r = 0; r < R + 2; ++r) {
      const Idx oy = y0 - 1 + r;
      if (oy < 0 || oy >= H) continue;
      const bool ey = oy == 0 || oy == H - 1;
      A w[V];
      row_sums(g.out_point(outer, oz, oy, 0), x0, edge, ey ? edge_inner : mid_inner, ey ? edge_border : mid_border, w);
      // Window row r serves dx rows r - 2, r - 1, r.
#pragma unroll
      for (int k = r - 2; k <= r; ++k)
        if (k >= 0 && k < R)
#pragma unroll
          for (int v = 0; v < V; ++v) sum[k][v] += w[v];
    }
  }

  PG_HD void operator()(Idx gi) const {
    const Idx x0 = groups_per_row.mod(gi) * V;
    Idx rest = groups_per_row.div(gi);
    const Idx y0 = row_groups.mod(rest) * R;
    rest = row_groups.div(rest);
    const Idx z_begin = chunks.mod(rest) * chunk;
    const Idx outer = chunks.div(rest);
    const Idx D = g.axis[0].in, H = g.axis[1].in, W = g.axis[2].in;
    const Idx z_end = z_begin + chunk < D ? z_begin + chunk : D;
    bool edge[V + 2];
#pragma unroll
    for (int j = 0; j < V + 2; ++j) edge[j] = x0 - 1 + j == 0 || x0 - 1 + j == W - 1;
    A before[R][V], here[R][V], after[R][V];
    if constexpr (kDepth) {
      if (z_begin > 0) {
        plane(outer, z_begin - 1, y0, x0, edge, before);
      } else {
#pragma unroll
        for (int k = 0; k < R; ++k)
#pragma unroll
          for (int v = 0; v < V; ++v) before[k][v] = A(0);
      }
      plane(outer, z_begin, y0, x0, edge, here);
    }
    for (Idx z = z_begin; z < z_end; ++z) {
      if constexpr (kDepth) {
        if (z + 1 < D) {
          plane(outer, z + 1, y0, x0, edge, after);
        } else {
#pragma unroll
          for (int k = 0; k < R; ++k)
#pragma unroll
            for (int v = 0; v < V; ++v) after[k][v] = A(0);
        }
      } else {
        plane(outer, z, y0, x0, edge, here);
      }
#pragma unroll
      for (int k = 0; k < R; ++k) {
        Pack<T, V> out;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          if constexpr (kDepth) {
            out.v[v] = from_accum<T>((before[k][v] + here[k][v]) + after[k][v]);
            before[k][v] = here[k][v];
            here[k][v] = after[k][v];
          } else {
            out.v[v] = from_accum<T>(here[k][v]);
          }
        }
        if (y0 + k < H) store_pack<V>(dx, g.in_point(outer, z, y0 + k, x0), out);
      }
    }
  }
};

// Rows per item and the items the D split aims for, timed on an H100 (avgpool3d (8,64,16,56,56)
// k3s1p1 f32). 2026-11-22: R = 4 with 2^17 items (D cut in two runs) 0.1095 ms, R = 4 with 2^16
// (one run) 0.1035, R = 2 with one run 0.1002 (55 registers, 4 blocks per SM; forcing 5 or 6
// through __launch_bounds__ spilled and measured slower). 2026-11-23: R = 1 (48 registers, 5
// blocks per SM) with one run 0.0939, two runs (2^19) 0.0914, three (2^20) 0.0902. Sharing window
// rows saves L1 traffic, but the kernel is bound by latency: more resident warps, and more
// items than one wave (the last wave of long items runs the GPU half empty) beat the re-read
// window planes of each run. avgpool2d (64,128,56,56) k3s1p1: R = 2 0.0808, R = 1 0.0804.
inline constexpr int kAvgBox3Rows = 1;
inline constexpr int64_t kAvgBox3WantItems = int64_t{1} << 20;

// Work items for p: W / V * ceil(H / R) * N * C per run of planes, D cut into runs until there
// are kAvgBox3WantItems (each run re-reads two window planes).
template <class T, class Idx, int V, bool kDepth>
AvgBox3Body<T, Idx, V, kAvgBox3Rows, kDepth> make_avg_box3(const Problem& p, const T* dy, T* dx, int64_t* items) {
  constexpr int R = kAvgBox3Rows;
  constexpr int64_t kWantItems = kAvgBox3WantItems;
  const int64_t row_groups = (p.in[1] + R - 1) / R;
  const int64_t per_run = p.n * p.c * row_groups * (p.in[2] / V);
  const int64_t runs = std::min<int64_t>(p.in[0], std::max<int64_t>(1, (kWantItems + per_run - 1) / per_run));
  const int64_t chunk = (p.in[0] + runs - 1) / runs;
  const int64_t used = (p.in[0] + chunk - 1) / chunk;
  *items = per_run * used;
  AvgBox3Body<T, Idx, V, R, kDepth> body{make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2] / V)),
                                         Divider<Idx>(static_cast<Idx>(row_groups)), Divider<Idx>(static_cast<Idx>(used)),
                                         static_cast<Idx>(chunk), {}, dy, dx};
  // Per axis: the count of a first/last window, and of an interior one where the axis has any.
  Idx count[kAxes][2];
  for (int a = 0; a < kAxes; ++a) {
    const AvgAxis<Idx>& ax = body.g.axis[a];
    count[a][1] = ax.count(body.g.rule, 0);
    count[a][0] = ax.in > 2 ? ax.count(body.g.rule, 1) : count[a][1];
  }
  using A = accum_t<T>;
  for (int ez = 0; ez < 2; ++ez)
    for (int ey = 0; ey < 2; ++ey)
      for (int ex = 0; ex < 2; ++ex)
        body.recip[ez][ey][ex] = A(1) / body.g.template divisor<A>(count[0][ez], count[1][ey], count[2][ex]);
  return body;
}

}  // namespace pg
