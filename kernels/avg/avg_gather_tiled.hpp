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
// The CPU backend runs the same phases with emulated threads (AvgTiledOnCpu).
#pragma once

#include <cstddef>
#include <numeric>

#include "src/model/backend.hpp"
#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

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
      const int64_t tap_step = p.dilation[a] / std::gcd(p.stride[a], p.dilation[a]);
      if (tap_step > INT32_MAX) return false;  // the tile's int arithmetic would truncate it
      q.tap_step[a] = static_cast<int>(tap_step);
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

// The work of one block on one tile, as five phases for bx * by cooperating threads; every
// thread finishes a phase before any starts the next (a barrier on the GPU, phase-major order
// on the CPU).
template <class T, class Idx>
struct AvgTiledBlock {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  AvgTilePlan plan;
  Divider<Idx> tiles_along[kAxes];
  const T* dy;
  T* dx;

  // Where a tile lies and how shared memory is carved; each thread computes its own copy.
  struct Frame {
    Idx outer;          // n * C + c
    Idx i0[kAxes];      // first dx position of the tile
    Idx o0[kAxes];      // first window covering the tile
    int nw[kAxes];      // windows covering the tile
    A* slab;            // divided windows [z][y][x], later the H-pass output [z][tile y][tile x]
    A* rows;            // W-pass output [z][y][tile x]
    int* first[kAxes];  // per tile position: its first covering window, tile-local
    int* taps[kAxes];   // per tile position: how many windows have it as a tap
    int* wcount[kAxes]; // per tile window: the divisor's count along the axis
  };

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    f.slab = reinterpret_cast<A*>(smem);
    f.rows = f.slab + plan.region1;
    int* ints = reinterpret_cast<int*>(f.rows + plan.region2);
    for (int a = 0; a < kAxes; ++a) {
      f.first[a] = ints;
      f.taps[a] = ints + plan.tile[a];
      f.wcount[a] = ints + 2 * plan.tile[a];
      ints += 2 * plan.tile[a] + plan.windows[a];
    }
    f.outer = tile_id;
    for (int a = kAxes - 1; a >= 0; --a) {
      f.i0[a] = tiles_along[a].mod(f.outer) * plan.tile[a];
      f.outer = tiles_along[a].div(f.outer);
    }
    for (int a = 0; a < kAxes; ++a) {
      const AvgAxis<Idx>& ax = g.axis[a];
      const Idx last = (f.i0[a] + plan.tile[a] < ax.in ? f.i0[a] + plan.tile[a] : ax.in) - 1;
      Idx lo, hi, unused;
      ax.covering(f.i0[a], &lo, &unused);
      ax.covering(last, &unused, &hi);
      f.o0[a] = lo;
      f.nw[a] = hi >= lo ? static_cast<int>(hi - lo + 1) : 0;
    }
    return f;
  }

  // Phase 1: the per-axis tables.
  PG_HD void tables(const Frame& f, int tx, int ty, int bx, int by) const {
    const int tid = ty * bx + tx;
    const int threads = bx * by;
    for (int a = 0; a < kAxes; ++a) {
      const AvgAxis<Idx>& ax = g.axis[a];
      for (int j = tid; j < plan.tile[a]; j += threads) {
        const Idx i = f.i0[a] + j;
        int first = 0, n = 0;
        if (i < ax.in) {
          Idx lo, hi;
          ax.covering(i, &lo, &hi);
          while (lo <= hi && !ax.is_tap(i, lo)) ++lo;
          if (lo <= hi) {
            first = static_cast<int>(lo - f.o0[a]);
            n = static_cast<int>((hi - lo) / plan.tap_step[a]) + 1;
          }
        }
        f.first[a][j] = first;
        f.taps[a][j] = n;
      }
      for (int w = tid; w < f.nw[a]; w += threads) f.wcount[a][w] = static_cast<int>(ax.count(g.rule, f.o0[a] + w));
    }
  }

  // Phase 2: dy / divisor for every window covering the tile. Table reads are hoisted by
  // hand: the compiler cannot tell that the stores to the slab leave them alone.
  PG_HD void load(const Frame& f, int tx, int ty, int bx, int by) const {
    const int* wmax = plan.windows;
    for (int z = 0; z < f.nw[0]; ++z)
      for (int y = ty; y < f.nw[1]; y += by) {
        const Idx cz = f.wcount[0][z], cy = f.wcount[1][y];
        const Idx row = g.out_point(f.outer, f.o0[0] + z, f.o0[1] + y, f.o0[2]);
        A* dst = f.slab + (z * wmax[1] + y) * wmax[2];
        for (int x = tx; x < f.nw[2]; x += bx)
          dst[x] = static_cast<A>(to_float(dy[row + x])) / g.template divisor<A>(cz, cy, f.wcount[2][x]);
      }
  }

  // Phase 3, W: rows[z][y][x] = sum over the windows along W that have x as a tap.
  PG_HD void sum_w(const Frame& f, int tx, int ty, int bx, int by) const {
    const int* tile = plan.tile;
    const int* wmax = plan.windows;
    const int step = plan.tap_step[2];
    for (int x = tx; x < tile[2]; x += bx) {
      const int first = f.first[2][x], n = f.taps[2][x];
      for (int z = 0; z < f.nw[0]; ++z)
        for (int y = ty; y < f.nw[1]; y += by) {
          const A* src = f.slab + (z * wmax[1] + y) * wmax[2] + first;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step];
          f.rows[(z * wmax[1] + y) * tile[2] + x] = s;
        }
    }
  }

  // Phase 4, H: the slab becomes [window z][tile y][tile x].
  PG_HD void sum_h(const Frame& f, int tx, int ty, int bx, int by) const {
    const int* tile = plan.tile;
    const int* wmax = plan.windows;
    const int step = plan.tap_step[1] * tile[2];
    for (int y = ty; y < tile[1]; y += by) {
      const int first = f.first[1][y], n = f.taps[1][y];
      for (int z = 0; z < f.nw[0]; ++z)
        for (int x = tx; x < tile[2]; x += bx) {
          const A* src = f.rows + (z * wmax[1] + first) * tile[2] + x;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step];
          f.slab[(z * tile[1] + y) * tile[2] + x] = s;
        }
    }
  }

  // Phase 5, D, and the one write of each dx element.
  PG_HD void sum_d_and_store(const Frame& f, int tx, int ty, int bx, int by) const {
    const int* tile = plan.tile;
    const int step = plan.tap_step[0] * tile[1] * tile[2];
    for (int z = 0; z < tile[0] && f.i0[0] + z < g.axis[0].in; ++z) {
      const int first = f.first[0][z], n = f.taps[0][z];
      for (int y = ty; y < tile[1] && f.i0[1] + y < g.axis[1].in; y += by) {
        T* dst = dx + g.in_point(f.outer, f.i0[0] + z, f.i0[1] + y, f.i0[2]);
        for (int x = tx; x < tile[2] && f.i0[2] + x < g.axis[2].in; x += bx) {
          const A* src = f.slab + (first * tile[1] + y) * tile[2] + x;
          A s = A(0);
          for (int t = 0; t < n; ++t) s += src[t * step];
          dst[x] = from_accum<T>(s);
        }
      }
    }
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

// The CPU backend runs a block as kCpuCols x kCpuRows emulated threads, phase by phase, so the
// thread-strided loops the GPU runs are exercised too (with a shape unlike 32 x 8 on purpose).
inline constexpr int kCpuCols = 5, kCpuRows = 3;

template <class T, class Idx>
struct AvgTiledOnCpu {
  AvgTiledBlock<T, Idx> block;
  void operator()(Idx tile_id) const {
    alignas(16) unsigned char smem[kAvgTileBytes];
    const auto f = block.frame(tile_id, smem);
    auto every_thread = [&](auto phase) {
      for (int ty = 0; ty < kCpuRows; ++ty)
        for (int tx = 0; tx < kCpuCols; ++tx) phase(tx, ty);
    };
    every_thread([&](int tx, int ty) { block.tables(f, tx, ty, kCpuCols, kCpuRows); });
    every_thread([&](int tx, int ty) { block.load(f, tx, ty, kCpuCols, kCpuRows); });
    every_thread([&](int tx, int ty) { block.sum_w(f, tx, ty, kCpuCols, kCpuRows); });
    every_thread([&](int tx, int ty) { block.sum_h(f, tx, ty, kCpuCols, kCpuRows); });
    every_thread([&](int tx, int ty) { block.sum_d_and_store(f, tx, ty, kCpuCols, kCpuRows); });
  }
};

#if PG_GPU_COMPILER

template <class T, class Idx>
__global__ void __launch_bounds__(kAvgTileX * kAvgBlockRows) avg_tiled_kernel(AvgTiledBlock<T, Idx> block, Idx tiles) {
  extern __shared__ double avg_tile_smem[];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  for (Idx t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto f = block.frame(t, reinterpret_cast<unsigned char*>(avg_tile_smem));
    block.tables(f, tx, ty, bx, by);
    __syncthreads();
    block.load(f, tx, ty, bx, by);
    __syncthreads();
    block.sum_w(f, tx, ty, bx, by);
    __syncthreads();
    block.sum_h(f, tx, ty, bx, by);
    __syncthreads();
    block.sum_d_and_store(f, tx, ty, bx, by);
    // The next tile rewrites the tables and the slab.
    __syncthreads();
  }
}

#endif

struct AvgGatherTiled : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.tiled", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Channels-first, any window whose tile plan fits in shared memory (supports()). Sizes for
  // the fuzz: several tiles with a partial last one along every axis (tiles up to 8 planes along
  // D, 32 rows along H in 2D and 8 in 3D, 32 columns along W).
  static Domain domain() {
    return {.windows = WindowRule::any, .shapes = {}, .layouts = {Layout::channels_first}, .reach = {10, 40, 40}};
  }

  static Support supports(const Problem& p) {
    AvgTilePlan plan;
    if (!plan_avg_tiles(p, p.dtype == DType::f64 ? 8 : 4, &plan))
      return Support::no("window reach too large for a 48 KiB shared-memory tile");
    return Support::yes();
  }

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
