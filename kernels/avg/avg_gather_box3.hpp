// avg.gather.box3: the gather for the most common overlapping window: kernel 3, stride 1,
// padding 1 on H and W (and on D, or a flat D: a 2D problem), no dilation, channels-first, so
// out == in on every axis and dx is the 3x3(x3) box sum of s = dy / divisor. W is a whole
// number of 16-byte packs, dy and dx are 16-byte aligned (launch throws otherwise) and offsets
// fit int32.
//
// The generic gather reads and divides every dy value once per tap (27 times in 3D) and spends
// most of its time on index arithmetic. Here a work item owns V consecutive dx along W of one
// row and walks a run of D planes. Per window plane it reads three dy rows (a V-wide pack and
// one halo element each side; neighbouring items read the same rows, from cache), scales and
// sums them along W and H in registers; dx of plane z is then the sum of the window planes
// z-1, z, z+1, which slide through registers. A dx element costs one plane of arithmetic and
// about one dy read from DRAM. The kernel is bound by load latency: the loads of the plane after
// next are issued before dx plane z is summed and stored (software pipelining), and for the
// 16-bit types before plane z + 1 is reduced too (kAvgBox3EarlyLoads).
//
// The divisor is the product of per-axis counts, and a count differs from the interior one only
// at the first and last window of an axis (exclude_pad), so the host computes the eight
// reciprocals once (divisor_override: all eight are 1 / override). Each term is rounded twice
// (the reciprocal and the product) and sums are 3+3+3 deep: inside the oracle's (terms + 2) u
// bound.
#pragma once

#include <type_traits>

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

// Whether the 3D walk issues a window plane's loads before it reduces the plane loaded before
// (two planes of loads in registers at once), or after (one): after for f32, whose body then
// fits 64 registers; the figures are in the tuning notes below (kAvgBox3LaunchBounds).
template <class T>
inline constexpr bool kAvgBox3EarlyLoads = !std::is_same_v<T, float>;

// kDepth: the D axis is a 3-window (3D); else D is a single plane (2D).
template <class T, class Idx, int V, bool kDepth>
struct AvgBox3Body {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;  // W / V
  Divider<Idx> rows;            // H
  Divider<Idx> chunks;          // runs of D planes per (n, c, row)
  Idx chunk;                    // planes per run
  // 1 / divisor by whether the window is the first or last along D, H, W: [ez][ey][ex].
  A recip[2][2][2];
  const T* dy;
  T* dx;

  // The dy a pack of dx reads from one window plane, as loaded: three window rows, each a V-wide
  // pack and one halo element either side; zero where the window is outside the tensor.
  struct PlaneRows {
    Pack<T, V> mid[3];
    T lo[3], hi[3];
  };

  // Rows y0 - 1 .. y0 + 1 of the window plane at element offset `plane_at`, columns x0 - 1 ..
  // x0 + V; all zero when !in_tensor (a plane before the first or past the last).
  PG_HD void load(Idx plane_at, Idx y0, Idx x0, bool in_tensor, PlaneRows& r) const {
    const Idx H = g.axis[1].in, W = g.axis[2].in;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      const Idx oy = y0 - 1 + k;
      const bool row_in = in_tensor && oy >= 0 && oy < H;
      const Idx at = plane_at + oy * W + x0;
      if (row_in) {
        r.mid[k] = load_pack<V>(dy, at);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) r.mid[k].v[v] = T{};
      }
      r.lo[k] = row_in && x0 > 0 ? dy[at - 1] : T{};
      r.hi[k] = row_in && x0 + V < W ? dy[at + V] : T{};
    }
  }

  // sum = the 3 x 3 window sums of dy / divisor in window plane oz for dx columns x0 .. x0+V-1;
  // `edge` marks which of the window columns x0-1 .. x0+V is a border window.
  PG_HD void reduce(const PlaneRows& r, Idx oz, Idx y0, const bool* edge, A* sum) const {
    const Idx D = g.axis[0].in, H = g.axis[1].in;
    // Constant indices only: a runtime index into the parameter array would copy it to memory.
    const bool ez = oz == 0 || oz == D - 1;
    const A edge_inner = ez ? recip[1][1][0] : recip[0][1][0], edge_border = ez ? recip[1][1][1] : recip[0][1][1];
    const A mid_inner = ez ? recip[1][0][0] : recip[0][0][0], mid_border = ez ? recip[1][0][1] : recip[0][0][1];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = A(0);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      const Idx oy = y0 - 1 + k;
      const bool ey = oy == 0 || oy == H - 1;
      const A inner = ey ? edge_inner : mid_inner, border = ey ? edge_border : mid_border;
      A t[V + 2];
      t[0] = static_cast<A>(to_float(r.lo[k]));
#pragma unroll
      for (int v = 0; v < V; ++v) t[v + 1] = static_cast<A>(to_float(r.mid[k].v[v]));
      t[V + 1] = static_cast<A>(to_float(r.hi[k]));
#pragma unroll
      for (int j = 0; j < V + 2; ++j) t[j] *= edge[j] ? border : inner;
#pragma unroll
      for (int v = 0; v < V; ++v) sum[v] += (t[v] + t[v + 1]) + t[v + 2];
    }
  }

  PG_HD void operator()(Idx gi) const {
    const Idx x0 = groups_per_row.mod(gi) * V;
    Idx rest = groups_per_row.div(gi);
    const Idx y0 = rows.mod(rest);
    rest = rows.div(rest);
    const Idx z_begin = chunks.mod(rest) * chunk;
    const Idx outer = chunks.div(rest);
    const Idx D = g.axis[0].in, H = g.axis[1].in, W = g.axis[2].in;
    const Idx plane = H * W;
    const Idx base = outer * D * plane;  // plane 0 of this (n, c); out == in on every axis
    bool edge[V + 2];
#pragma unroll
    for (int j = 0; j < V + 2; ++j) edge[j] = x0 - 1 + j == 0 || x0 - 1 + j == W - 1;
    A before[V], here[V], after[V];
    PlaneRows cur;
    if constexpr (!kDepth) {
      load(base, y0, x0, true, cur);
      reduce(cur, 0, y0, edge, here);
      store(here, base + y0 * W + x0);
      return;
    }
    const Idx z_end = z_begin + chunk < D ? z_begin + chunk : D;
    load(base + (z_begin - 1) * plane, y0, x0, z_begin > 0, cur);
    reduce(cur, z_begin - 1, y0, edge, before);
    load(base + z_begin * plane, y0, x0, true, cur);
    reduce(cur, z_begin, y0, edge, here);
    load(base + (z_begin + 1) * plane, y0, x0, z_begin + 1 < D, cur);
    for (Idx z = z_begin; z < z_end; ++z) {
      // Software pipelining: plane z + 2 (needed by the next dx plane) is loaded before dx plane
      // z is stored (and, early, before plane z + 1 is reduced), so its loads are in flight
      // during that work.
      PlaneRows next;
      const bool next_in = z + 2 < D && z + 1 < z_end;
      if constexpr (kAvgBox3EarlyLoads<T>) {
        load(base + (z + 2) * plane, y0, x0, next_in, next);
        reduce(cur, z + 1, y0, edge, after);
      } else {
        reduce(cur, z + 1, y0, edge, after);
        load(base + (z + 2) * plane, y0, x0, next_in, next);
      }
#pragma unroll
      for (int v = 0; v < V; ++v) before[v] = (before[v] + here[v]) + after[v];
      store(before, base + z * plane + y0 * W + x0);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        before[v] = here[v];
        here[v] = after[v];
      }
      cur = next;
    }
  }

  PG_HD void store(const A* sum, Idx at) const {
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(sum[v]);
    store_pack<V>(dx, at, out);
  }
};

// Tuning, timed on an H100 (avgpool3d (8,64,16,56,56) k3s1p1 f32 unless said). The kernel is
// bound by latency, not bandwidth: what helps is more loads in flight.
// - Rows per item: sharing window rows between R dx rows saves L1 traffic but costs registers;
//   2026-11-22 R = 4 0.1035 ms, R = 2 0.1002, 2026-11-23 R = 1 0.0939 (one run of planes each).
// - D cut into runs (each re-reads two window planes) so that there are several waves of items
//   (the last wave of long items runs the GPU half empty): without prefetch, R = 1, one run
//   0.0939 ms, two (2^19 items) 0.0914, three (2^20) 0.0902. Runs are at least
//   kAvgBox3MinRunPlanes long (plan_plane_runs), which leaves these rows' split as it was (f32:
//   one run of 16 planes, f16: two of 8) and keeps a small problem's runs from shrinking to
//   single planes, which read every window plane three times.
// - Prefetching the next plane (the loop in AvgBox3Body). Registers depend on launch bounds:
//   f32 72 without any (3 blocks per SM), 64 with the 256-thread bound alone (4 blocks, no
//   spill; nvcc 13 later gave 76, 3 blocks), 64 and spilling with 4 blocks asked. 2026-11-23,
//   thread bound: one run (2^18 items)
//   0.0802 ms, two (2^19) 0.0827, three (2^20) 0.0857; 4 blocks asked (spills) 0.1147; 72
//   registers 0.0870 at 2^20. With loads in flight the tail matters less than re-read planes.
//   f16 (8 per item, 100 registers with the thread bound, 2 blocks): one run 0.0756, two
//   0.0846, three 0.1047 (without the bound: below).
// - 2D (64,128,56,56): one plane per item, so nothing to prefetch; 48 registers (5 blocks) 0.0808
//   ms, capped to 40 (6 blocks, no spill in f32) 0.0762, to 32 (8 blocks, spills) 0.0765.
// - Other types run without launch bounds: bf16 and f64 spill under the 2D cap (ptxas -v), and
//   the halves take more registers under the thread bound. f16 (8,64,16,56,56): 79 registers
//   without 0.0675 ms, 100 with the thread bound 0.0753; f16 2D 0.0482 without, 0.0488 with.
// - 2026-12-06 (bench/results/2026-12-06_h100_box3_late.md): f32 3D loads the plane after next
//   after it reduces the plane before (kAvgBox3EarlyLoads), so one plane of loads is live: 64
//   registers without spilling, four blocks asked (76 registers, three blocks, before). The
//   baseline's k3s1p1 cip and exclude_pad rows 85.6 -> 79.5 us, (2,16,64,64,64) 32.0 -> 29.0,
//   (4,32,32,40,40) 26.7 -> 26.3; the thread bound alone gave the same 64 registers and rows
//   0-3% slower; the early loads capped to 64 registers spilled and ran 0.65x. The 16-bit bodies
//   keep the early loads: after, nvcc gives them more registers, not fewer (f16 78 -> 89, bf16
//   88 -> 96).
inline constexpr int64_t kAvgBox3WantItems = int64_t{1} << 18;
inline constexpr int64_t kAvgBox3MinRunPlanes = 4;  // twice the two window planes a run re-reads
template <class T, bool kDepth>
inline constexpr int kAvgBox3LaunchBounds = !std::is_same_v<T, float> ? kNoLaunchBounds : kDepth ? 4 : 6;

// Work items for p: W / V * H * N * C per run of planes (plan_plane_runs); p has dx elements.
template <class T, class Idx, int V, bool kDepth>
AvgBox3Body<T, Idx, V, kDepth> make_avg_box3(const Problem& p, const T* dy, T* dx, int64_t* items) {
  const int64_t per_run = p.n * p.c * p.in[1] * (p.in[2] / V);
  const PlaneRuns runs = plan_plane_runs(p.in[0], per_run, kAvgBox3WantItems, kAvgBox3MinRunPlanes);
  *items = per_run * runs.count;
  AvgBox3Body<T, Idx, V, kDepth> body{make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2] / V)),
                                      Divider<Idx>(static_cast<Idx>(p.in[1])), Divider<Idx>(static_cast<Idx>(runs.count)),
                                      static_cast<Idx>(runs.length), {}, dy, dx};
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

struct AvgGatherBox3 : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.box3", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // k3 s1 p1 gives out == in on every axis; 1D problems are out (H must be a box too). Sizes
  // for the fuzz: D up to 12, three runs of kAvgBox3MinRunPlanes; a few rows and W packs.
  static Domain domain() {
    return {.min_dims = 2,
            .windows = WindowRule::listed,
            .shapes = {{.kernel = 3, .stride = 1, .pad_min = 1, .pad_max = 1}},
            .trivial_leading = 1,
            .layouts = {Layout::channels_first},
            .contiguous_packs = true,
            .reach = {11, 6, 32}};
  }

  static Support supports(const Problem& p) {
    if (!avg_fits_int32(p)) return Support::no("offsets beyond int32");
    return Support::yes();
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_aligned16(traits.name, {{"dy", b.dy}, {"dx", b.dx}});  // 16-byte packs of both
    if (p.in_elems() == 0) return;  // an empty batch: nothing to write, and no work items to plan
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      constexpr int V = kVecWidth<T>;
      const auto dy = static_cast<const T*>(b.dy);
      const auto dx = static_cast<T*>(b.dx);
      int64_t items;
      if (p.kernel[0] == 3) {
        const auto body = make_avg_box3<T, int32_t, V, true>(p, dy, dx, &items);
        ex.template for_each<int32_t, kAvgBox3LaunchBounds<T, true>>(items, body);
      } else {
        const auto body = make_avg_box3<T, int32_t, V, false>(p, dy, dx, &items);
        ex.template for_each<int32_t, kAvgBox3LaunchBounds<T, false>>(items, body);
      }
    });
  }
};

}  // namespace pg
