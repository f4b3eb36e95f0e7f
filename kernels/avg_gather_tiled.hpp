// avg.gather.tiled: for overlapping windows, where a per-element gather re-reads and re-divides
// every dy value once per covered tap (27 times for k3 s1 in 3D).
//
// The backward pass is separable: with s = dy / divisor (the divisor is per window), and A_a
// the 0/1 matrix "input i is a tap of window o along axis a",
//   dx = (A_0 (x) A_1 (x) A_2) s,
// because a position is a tap of a window iff it is one along every axis. A block owns a tile
// of dx (tile[0] x tile[1] x 32 positions of one (n, c) plane), loads the dy windows that cover
// it once into shared memory, divides each once, and applies the three per-axis sums there:
// W, then H, then D, writing dx once. The summation order differs from the oracle's, with
// fewer roundings per element (depth kz+ky+kx instead of kz*ky*kx), inside its bound.
// Deterministic: fixed order, no atomics; every dx element written once, no zeroing pass.
//
// The CPU backend runs the same block body with one "thread" per block, phases in order.
#pragma once

#include <cstddef>
#include <numeric>

#include "../src/backend.hpp"
#include "../src/registry.hpp"
#include "avg_geometry.hpp"
#include "exec.hpp"

namespace pg {

inline constexpr int kAvgTileX = 32;         // dx columns per tile: one coalesced 32-lane row
inline constexpr int kAvgBlockRows = 8;      // thread rows: 32 x 8 = 256 threads per block
inline constexpr size_t kAvgTileBytes = 48 * 1024;  // shared memory a block may use without opt-in

// Tile shape and shared-memory layout, the same on the host and in the kernel.
struct AvgTilePlan {
  int tile[kAxes];      // dx positions per tile along each axis
  int windows[kAxes];   // bound on the windows covering one tile, per axis
  int tap_step[kAxes];  // window-index gap between consecutive windows sharing a tap
  int region1;          // accumulator elements: the divided windows, later the D-pass input
  int region2;          // accumulator elements: the W-pass output
  size_t bytes;
};

// The largest tile whose shared memory fits, or false.
inline bool plan_avg_tiles(const Problem& p, size_t accum_size, AvgTilePlan* plan) {
  // (tile D, tile H) candidates, largest first; the W extent is always kAvgTileX.
  static constexpr int k3d[][2] = {{8, 8}, {4, 8}, {4, 4}, {2, 4}, {1, 4}, {1, 2}, {1, 1}};
  static constexpr int k2d[][2] = {{1, 32}, {1, 16}, {1, 8}, {1, 4}, {1, 2}, {1, 1}};
  static constexpr int k1d[][2] = {{1, 1}};
  const int(*candidates)[2] = p.in[0] > 1 ? k3d : p.in[1] > 1 ? k2d : k1d;
  const int n = p.in[0] > 1 ? 7 : p.in[1] > 1 ? 6 : 1;
  for (int c = 0; c < n; ++c) {
    AvgTilePlan q;
    const int64_t want[kAxes] = {candidates[c][0], candidates[c][1], kAvgTileX};
    int64_t ints = 0;
    for (int a = 0; a < kAxes; ++a) {
      // Even tiles: H = 56 in tiles of 32 becomes two tiles of 28, not 32 + 24.
      const int64_t t = want[a] >= p.in[a] ? p.in[a] : want[a];
      const int64_t count = (p.in[a] + t - 1) / t;
      q.tile[a] = static_cast<int>(a == 2 ? t : (p.in[a] + count - 1) / count);
      const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
      const int64_t w = (q.tile[a] - 1 + reach) / p.stride[a] + 1;
      if (w > (int64_t{1} << 20)) return false;
      q.windows[a] = static_cast<int>(w < p.out[a] ? w : p.out[a]);
      q.tap_step[a] = static_cast<int>(p.dilation[a] / std::gcd(p.stride[a], p.dilation[a]));
      ints += 2 * q.tile[a] + q.windows[a];
    }
    const int64_t slab = int64_t{q.windows[0]} * q.windows[1] * q.windows[2];
    const int64_t yz = int64_t{q.windows[0]} * q.tile[1] * q.tile[2];
    const int64_t rows = int64_t{q.windows[0]} * q.windows[1] * q.tile[2];
    const int64_t bytes = (std::max(slab, yz) + rows) * static_cast<int64_t>(accum_size) + ints * 4;
    if (bytes > static_cast<int64_t>(kAvgTileBytes)) continue;
    q.region1 = static_cast<int>(std::max(slab, yz));
    q.region2 = static_cast<int>(rows);
    q.bytes = static_cast<size_t>(bytes);
    *plan = q;
    return true;
  }
  return false;
}

// The work of one block on one tile, written for bx * by cooperating threads.
template <class T, class Idx>
struct AvgTiledBlock {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  AvgTilePlan plan;
  Divider<Idx> tiles_along[kAxes];
  const T* dy;
  T* dx;

  template <class Barrier>
  PG_HD void run(Idx tile_id, int tx, int ty, int bx, int by, unsigned char* smem, Barrier barrier) const {
    const int* tile = plan.tile;
    const int* wmax = plan.windows;
    A* slab = reinterpret_cast<A*>(smem);
    A* rows = slab + plan.region1;
    int* ints = reinterpret_cast<int*>(rows + plan.region2);
    int* first[kAxes];  // per tile position: its first covering window, tile-local
    int* taps[kAxes];   // per tile position: how many windows have it as a tap
    int* wcount[kAxes]; // per tile window: the divisor's count along the axis
    for (int a = 0; a < kAxes; ++a) {
      first[a] = ints;
      taps[a] = ints + tile[a];
      wcount[a] = ints + 2 * tile[a];
      ints += 2 * tile[a] + wmax[a];
    }

    Idx i0[kAxes], o0[kAxes];
    int nw[kAxes];
    Idx outer = tile_id;
    for (int a = kAxes - 1; a >= 0; --a) {
      i0[a] = tiles_along[a].mod(outer) * tile[a];
      outer = tiles_along[a].div(outer);
    }
    for (int a = 0; a < kAxes; ++a) {
      const AvgAxis<Idx>& ax = g.axis[a];
      const Idx last = (i0[a] + tile[a] < ax.in ? i0[a] + tile[a] : ax.in) - 1;
      Idx lo, hi, unused;
      ax.covering(i0[a], &lo, &unused);
      ax.covering(last, &unused, &hi);
      o0[a] = lo;
      nw[a] = hi >= lo ? static_cast<int>(hi - lo + 1) : 0;
    }

    const int tid = ty * bx + tx;
    const int threads = bx * by;
    for (int a = 0; a < kAxes; ++a) {
      const AvgAxis<Idx>& ax = g.axis[a];
      for (int j = tid; j < tile[a]; j += threads) {
        const Idx i = i0[a] + j;
        int f = 0, n = 0;
        if (i < ax.in) {
          Idx lo, hi;
          ax.covering(i, &lo, &hi);
          while (lo <= hi && !ax.is_tap(i, lo)) ++lo;
          if (lo <= hi) {
            f = static_cast<int>(lo - o0[a]);
            n = static_cast<int>((hi - lo) / plan.tap_step[a]) + 1;
          }
        }
        first[a][j] = f;
        taps[a][j] = n;
      }
      for (int w = tid; w < nw[a]; w += threads) wcount[a][w] = static_cast<int>(ax.count(g.rule, o0[a] + w));
    }
    barrier();

    // dy / divisor for every window covering the tile. Table reads are hoisted by hand: the
    // compiler cannot tell that the stores to the slab leave them alone.
    for (int z = 0; z < nw[0]; ++z)
      for (int y = ty; y < nw[1]; y += by) {
        const Idx cz = wcount[0][z], cy = wcount[1][y];
        const Idx row = g.out_point(outer, o0[0] + z, o0[1] + y, o0[2]);
        A* dst = slab + (z * wmax[1] + y) * wmax[2];
        for (int x = tx; x < nw[2]; x += bx)
          dst[x] = static_cast<A>(to_float(dy[row + x])) / g.template divisor<A>(cz, cy, wcount[2][x]);
      }
    barrier();

    // W: rows[z][y][x] = sum over the windows along W that have x as a tap.
    const int step2 = plan.tap_step[2];
    for (int x = tx; x < tile[2]; x += bx) {
      const int f = first[2][x], n = taps[2][x];
      for (int z = 0; z < nw[0]; ++z)
        for (int y = ty; y < nw[1]; y += by) {
          const A* src = slab + (z * wmax[1] + y) * wmax[2] + f;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step2];
          rows[(z * wmax[1] + y) * tile[2] + x] = s;
        }
    }
    barrier();

    // H: slab becomes [window z][tile y][tile x].
    const int step1 = plan.tap_step[1] * tile[2];
    for (int y = ty; y < tile[1]; y += by) {
      const int f = first[1][y], n = taps[1][y];
      for (int z = 0; z < nw[0]; ++z)
        for (int x = tx; x < tile[2]; x += bx) {
          const A* src = rows + (z * wmax[1] + f) * tile[2] + x;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step1];
          slab[(z * tile[1] + y) * tile[2] + x] = s;
        }
    }
    barrier();

    // D, and the one write of each dx element.
    const int step0 = plan.tap_step[0] * tile[1] * tile[2];
    for (int z = 0; z < tile[0] && i0[0] + z < g.axis[0].in; ++z) {
      const int f = first[0][z], n = taps[0][z];
      for (int y = ty; y < tile[1] && i0[1] + y < g.axis[1].in; y += by) {
        T* dst = dx + g.in_point(outer, i0[0] + z, i0[1] + y, i0[2]);
        for (int x = tx; x < tile[2] && i0[2] + x < g.axis[2].in; x += bx) {
          const A* src = slab + (f * tile[1] + y) * tile[2] + x;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step0];
          dst[x] = from_accum<T>(s);
        }
      }
    }
    // The next tile rewrites the tables and the slab.
    barrier();
  }
};

template <class T, class Idx>
AvgTiledBlock<T, Idx> make_avg_tiled_block(const Problem& p, const AvgTilePlan& plan, const BwdBuffers& b,
                                           int64_t* tiles) {
  AvgTiledBlock<T, Idx> blk;
  blk.g = make_avg_shape<Idx>(p);
  blk.plan = plan;
  *tiles = p.n * p.c;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t along = (p.in[a] + plan.tile[a] - 1) / plan.tile[a];
    blk.tiles_along[a] = Divider<Idx>(static_cast<Idx>(along));
    *tiles *= along;
  }
  blk.dy = static_cast<const T*>(b.dy);
  blk.dx = static_cast<T*>(b.dx);
  return blk;
}

struct SequentialPhases {
  PG_HD void operator()() const {}
};

template <class T, class Idx>
struct AvgTiledOnCpu {
  AvgTiledBlock<T, Idx> block;
  void operator()(Idx tile_id) const {
    alignas(16) unsigned char smem[kAvgTileBytes];
    block.run(tile_id, 0, 0, 1, 1, smem, SequentialPhases{});
  }
};

#if PG_GPU_COMPILER

struct BlockBarrier {
  PG_HD void operator()() const {
#if PG_DEVICE_PASS
    __syncthreads();
#endif
  }
};

template <class T, class Idx>
__global__ void __launch_bounds__(kAvgTileX * kAvgBlockRows) avg_tiled_kernel(AvgTiledBlock<T, Idx> block, Idx tiles) {
  extern __shared__ double avg_tile_smem[];
  for (Idx t = blockIdx.x; t < tiles; t += gridDim.x)
    block.run(t, threadIdx.x, threadIdx.y, blockDim.x, blockDim.y,
              reinterpret_cast<unsigned char*>(avg_tile_smem), BlockBarrier{});
}

#endif

struct AvgGatherTiled {
  static constexpr const char* name = "avg.gather.tiled";
  static constexpr Op op = Op::avg;
  static constexpr Inputs inputs = Inputs::dy_only;
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;

  static Support supports(const Problem& p) {
    if (p.layout != Layout::channels_first)
      return Support::no("channels-last: W is not contiguous; avg.gather vectorizes over C there");
    AvgTilePlan plan;
    if (!plan_avg_tiles(p, p.dtype == DType::f64 ? 8 : 4, &plan))
      return Support::no("window reach too large for a 48 KiB shared-memory tile");
    return Support::yes();
  }
  static size_t workspace_bytes(const Problem&) { return 0; }

  static void launch(const CpuExec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      AvgTilePlan plan;
      if (!plan_avg_tiles(p, sizeof(accum_t<T>), &plan)) throw Error("avg.gather.tiled: no tile fits");
      int64_t tiles;
      const auto block = make_avg_tiled_block<T, Idx>(p, plan, b, &tiles);
      ex.template for_each<Idx>(tiles, AvgTiledOnCpu<T, Idx>{block});
    });
  }

#if PG_GPU_COMPILER
  static void launch(const GpuExec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      AvgTilePlan plan;
      if (!plan_avg_tiles(p, sizeof(accum_t<T>), &plan)) throw Error("avg.gather.tiled: no tile fits");
      int64_t tiles;
      const auto block = make_avg_tiled_block<T, Idx>(p, plan, b, &tiles);
      if (tiles == 0) return;
      const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
      avg_tiled_kernel<T, Idx><<<grid, dim3(kAvgTileX, kAvgBlockRows), plan.bytes, ex.stream>>>(block, static_cast<Idx>(tiles));
      PG_LAUNCH_CHECK("avg_tiled_kernel");
    });
  }
#endif
};

}  // namespace pg
