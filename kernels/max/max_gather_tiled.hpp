// max.gather.tiled: max-pool backward from stored indices for every window (any kernel, stride,
// dilation, padding), both layouts, every index format and type, over shared-memory tiles.
//
// Why: with overlapping windows a per-element gather visits every window covering the element
// (k * k at stride 1: 169 reads of index and dy per dx element for YOLO's SPP k13), and a scatter
// adds atomically into global memory. Here a block owns a tile of dx and
//   1. loads once the windows that cover the tile: each window's stored index is decoded,
//      checked (a tap of its window, as every variant checks it) and kept as the tile-local
//      position it names (-1 outside the tile), with its dy;
//   2. splits the tile into bands, a run of positions contiguous in the tile (rows of the whole
//      tile width, or part of one row), one per thread: a thread scans the windows covering its
//      band in row-major window order and adds dy where a window names a position of its band,
//      into shared memory that only it writes;
//   3. writes the tile to dx once, coalesced, and zeroes it for the next tile.
// Per dx element that is about (band rows + kH - 1) / band rows * (band width + kW - 1) / band
// width compares of a shared int, instead of kH * kW global reads: 13 for SPP k13 on 19-wide rows.
// Deterministic (each element is summed by one thread in a fixed order), no atomics, each dx
// element written once, no zeroing pass over dx.
//
// The tile is a box [planes][D][H][W][lanes] of the tensor seen as [outer][D][H][W][lanes]:
// outer = N * C and one lane in channels-first, outer = N and lanes = channels in channels-last.
// The CPU backend runs the same phases with emulated threads and a small budget
// (kMaxTiledCpuBudget), so fuzz-sized problems span several tiles, planes, lanes and bands.
//
// Measured (H200, 2026-11-26, bench/results/2026-11-26_h200_max_tiled.md): YOLO SPP k5/k9/k13
// 2.8x/4.6x/6.0x the fastest other deterministic variant and ahead of the atomic scatter on k5 and
// k9; 24-35% of the copy ceiling there, issue-bound (~6 warp instructions per dx element).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/even_piece.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/tile_grid.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "src/model/variant.hpp"

namespace pg {

inline constexpr int kMaxTiledThreads = 256;
inline constexpr int kLoadBatch = 4;  // slots a thread reads before it decodes them (phase 1)

inline constexpr size_t kMaxTiledSmemBytes = 48 * 1024;  // no opt-in: four blocks share a multiprocessor

// How a tile may grow: shared-memory bytes, dx elements (positions times lanes, all planes),
// channels per channels-last tile, W positions per tile, and the threads that share it.
struct MaxTileBudget {
  size_t bytes;
  int64_t elements;
  int lanes, width, threads;
};
// On a GPU: as much as 48 KiB holds; 32 lanes (128 bytes of f32 channels per position).
inline constexpr MaxTileBudget kMaxTiledGpuBudget{kMaxTiledSmemBytes, int64_t{1} << 20, 32, 2048, kMaxTiledThreads};
// On the CPU backend the same bytes (so it runs every problem the GPU does) but few elements:
// fuzz-sized problems span several tiles along every axis and C.
inline constexpr MaxTileBudget kMaxTiledCpuBudget{kMaxTiledSmemBytes, 96, 4, 24, 28};

// Tile shape, bands and shared-memory layout, the same on the host and in the kernel.
struct MaxTilePlan {
  int planes, lanes;  // outer planes and lanes per tile
  int tile[kAxes];    // dx positions per tile along D, H, W
  int lay[kAxes];     // windows laid out per tile (a bound on those covering it)
  int positions;      // tile[0] * tile[1] * tile[2]
  int windows;        // lay[0] * lay[1] * lay[2]
  // A band is band_rows rows of one D slice, each the whole tile width, or (band_rows == 1)
  // band_width positions of one row: positions contiguous in the tile either way.
  int band_rows, band_width;
  int row_groups, segments;  // bands per D slice along H, and along W
  int threads;
  bool whole_planes;  // channels-first tiles of whole planes: a tile's sums are one run of dx
  Divider<int32_t> by_lanes, by_lay[kAxes], by_tile[kAxes], by_segments, by_row_groups, by_bands;
  size_t bytes;
};

namespace max_tiled {

// At most how many windows cover n consecutive positions along axis a.
inline int64_t cover(const Problem& p, int a, int64_t n) {
  const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
  return std::max<int64_t>(1, std::min<int64_t>((n - 1 + reach) / p.stride[a] + 1, p.out[a]));
}

// Shared memory of one plane of `lanes` lanes: per window its position (int) and dy (A), per
// tile position its sum (A). 0 when a count is beyond int arithmetic.
inline size_t plane_bytes(const Problem& p, const int* tile, int64_t lanes, size_t accum_size) {
  int64_t windows = 1, positions = 1;
  for (int a = 0; a < kAxes; ++a) {
    windows *= cover(p, a, tile[a]);
    positions *= tile[a];
    if (windows > (int64_t{1} << 24)) return 0;
  }
  return static_cast<size_t>(lanes * (windows * static_cast<int64_t>(4 + accum_size) + positions * static_cast<int64_t>(accum_size)));
}

// dx positions per laid-out window of a tile: 1 without a halo.
inline double positions_per_window(const Problem& p, const int* tile) {
  double ratio = 1;
  for (int a = 0; a < kAxes; ++a) ratio *= static_cast<double>(tile[a]) / static_cast<double>(cover(p, a, tile[a]));
  return ratio;
}

// The tile for `lanes` lanes within the budget: the whole plane (W capped), halved along the
// axis whose halving keeps the most dx positions per laid-out window, until it fits. false when
// not even one position fits.
inline bool shape_tile(const Problem& p, int64_t lanes, size_t accum_size, const MaxTileBudget& budget, int* tile) {
  tile[0] = static_cast<int>(p.in[0]);
  tile[1] = static_cast<int>(p.in[1]);
  tile[2] = static_cast<int>(even_piece(p.in[2], std::max<int64_t>(1, budget.width / lanes)));
  for (;;) {
    const size_t bytes = plane_bytes(p, tile, lanes, accum_size);
    if (bytes != 0 && bytes <= budget.bytes && int64_t{tile[0]} * tile[1] * tile[2] * lanes <= budget.elements) return true;
    int best = -1;
    double best_ratio = -1;
    for (int a = 0; a < kAxes; ++a) {
      if (tile[a] == 1) continue;
      int t[kAxes] = {tile[0], tile[1], tile[2]};
      t[a] = static_cast<int>(even_piece(p.in[a], t[a] / 2));
      const double ratio = positions_per_window(p, t);
      if (ratio > best_ratio) best_ratio = ratio, best = a;
    }
    if (best < 0) return false;
    tile[best] = static_cast<int>(even_piece(p.in[best], tile[best] / 2));
  }
}

}  // namespace max_tiled

// The plan for tiles within `budget`; false when not even a one-position tile of one lane fits
// (a window reach too long).
inline bool plan_max_tiles(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxTilePlan* plan) {
  using max_tiled::cover;
  const bool cl = p.layout == Layout::channels_last;
  const int64_t outer = std::max<int64_t>(cl ? p.n : p.n * p.c, 1);
  MaxTilePlan q{};
  q.threads = budget.threads;
  // Lanes: the widest lane tile whose tile keeps the most positions per laid-out window.
  double best_ratio = -1;
  for (int64_t want = cl ? budget.lanes : 1; want >= 1; want /= 2) {
    const int64_t lanes = cl ? even_piece(p.c, want) : 1;
    int tile[kAxes];
    if (!max_tiled::shape_tile(p, lanes, accum_size, budget, tile)) continue;
    const double ratio = max_tiled::positions_per_window(p, tile);
    if (ratio > best_ratio + 1e-9) {
      best_ratio = ratio;
      q.lanes = static_cast<int>(lanes);
      for (int a = 0; a < kAxes; ++a) q.tile[a] = tile[a];
    }
  }
  if (best_ratio < 0) return false;
  q.positions = q.tile[0] * q.tile[1] * q.tile[2];
  q.whole_planes = !cl && q.positions == p.in_plane();
  q.windows = 1;
  for (int a = 0; a < kAxes; ++a) {
    q.lay[a] = static_cast<int>(cover(p, a, q.tile[a]));
    q.windows *= q.lay[a];
  }
  const size_t per_plane = max_tiled::plane_bytes(p, q.tile, q.lanes, accum_size);
  const int64_t fit = std::min<int64_t>(static_cast<int64_t>(budget.bytes / per_plane),
                                        budget.elements / (int64_t{q.positions} * q.lanes));
  q.planes = static_cast<int>(std::clamp<int64_t>(fit, 1, outer));
  q.bytes = per_plane * q.planes;
  // Bands: a thread scans the windows covering its band (longer bands share more of them), and
  // a block's gather takes about its busiest thread's scan times max(bands, 0.6 x threads): the
  // scans are bound by instruction issue with many busy threads, by each thread's chain of
  // dependent shared-memory adds with few (fitted on the H200, SPP k5/k13 and SPPF 40x40 rows:
  // 19x19 k13 gained 1.2x from three-row bands, 40x40 k5 lost 1.5x from whole-row ones).
  // On a tie the first considered: rows of the tile's width, fewest rows first.
  int64_t best_cost = -1;
  const auto consider = [&](int rows, int width) {
    const int64_t groups = (q.tile[1] + rows - 1) / rows, segments = (q.tile[2] + width - 1) / width;
    const int64_t units = int64_t{q.planes} * q.lanes * q.tile[0] * groups * segments;
    const int64_t work = cover(p, 0, 1) * cover(p, 1, rows) * cover(p, 2, width);
    const int64_t cost = work * std::max<int64_t>(units, q.threads * 6 / 10);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      q.band_rows = rows;
      q.band_width = width;
      q.row_groups = static_cast<int>(groups);
      q.segments = static_cast<int>(segments);
    }
  };
  for (int rows = 1; rows <= q.tile[1]; rows = rows < 4 ? rows + 1 : rows * 2)
    consider(static_cast<int>(even_piece(q.tile[1], rows)), q.tile[2]);
  for (int width = q.tile[2] / 2; width >= 1; width /= 2) consider(1, static_cast<int>(even_piece(q.tile[2], width)));
  q.by_lanes = Divider<int32_t>(q.lanes);
  for (int a = 0; a < kAxes; ++a) {
    q.by_lay[a] = Divider<int32_t>(q.lay[a]);
    q.by_tile[a] = Divider<int32_t>(q.tile[a]);
  }
  q.by_segments = Divider<int32_t>(q.segments);
  q.by_row_groups = Divider<int32_t>(q.row_groups);
  q.by_bands = Divider<int32_t>(int64_t{q.tile[0]} * q.row_groups * q.segments);
  *plan = q;
  return true;
}

// The work of one block on one tile, as phases for plan.threads cooperating threads; every
// thread finishes a phase before any starts the next (a barrier on the GPU, phase-major order on
// the CPU). A0 is the first axis that is not trivially 1 (1 for 1D and 2D problems, whose
// slots then skip D's arithmetic); kLanes: channels-last (lanes split off every slot index).
template <class T, class Idx, int A0, bool kLanes>
struct MaxTiledBlock {
  using Value = T;
  using Index = Idx;
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  MaxTilePlan plan;
  TileGrid<Idx> grid;
  bool plain;  // plane-format indices and no dilation: decode()'s short path
  const T* dy;
  const void* indices;
  T* dx;

  // Where a tile lies and how shared memory is carved; each thread computes its own copy.
  struct Frame {
    Idx outer0, c0;  // first plane and lane of the tile
    Idx i0[kAxes];   // first dx position
    Idx o0[kAxes];   // first window laid out (the first that can cover the tile)
    A* grad;         // per laid-out window and lane: dy where it names a tile position
    A* sum;          // per tile position and lane: dx being summed
    int* named;      // per laid-out window and lane: the sum slot it names, or -1
  };

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    const int window_slots = plan.planes * plan.windows * plan.lanes;
    f.grad = reinterpret_cast<A*>(smem);
    f.sum = f.grad + window_slots;
    f.named = reinterpret_cast<int*>(f.sum + plan.planes * plan.positions * plan.lanes);
    f.outer0 = grid.locate(tile_id, plan.lanes, plan.tile, &f.c0, f.i0) * plan.planes;
    for (int a = 0; a < kAxes; ++a) {
      Idx lo, unused;
      covering(g, a, f.i0[a], &lo, &unused);
      f.o0[a] = lo;
    }
    return f;
  }

  // Before the first tile: every sum is zero (each tile's write leaves it so for the next).
  PG_HD void zero(const Frame& f, int tid) const {
    for (int i = tid; i < plan.planes * plan.positions * plan.lanes; i += plan.threads) f.sum[i] = A(0);
  }

  // Threads take columns (W position and lane: consecutive columns are consecutive addresses)
  // and walk rows (plane, D, H) of a box [rows][cols], so a column's constants are computed once;
  // with fewer columns than threads, several threads share a column, taking every step-th row.
  // Calls f(first_row, row_step, col) per column of this thread.
  template <class F>
  PG_HD void each_column(int cols, int tid, F&& f) const {
    if (cols >= plan.threads) {
      for (int col = tid; col < cols; col += plan.threads) f(0, 1, col);
      return;
    }
    const int step = plan.threads / cols, row = tid / cols;
    if (row < step) f(row, step, tid - row * cols);
  }

  // Column col of a box whose columns are (W position, lane): its W position, and its lane.
  PG_HD int split_column(int col, int* lane) const {
    if constexpr (!kLanes) {
      *lane = 0;
      return col;
    }
    const int x = plan.by_lanes.div(col);
    *lane = col - x * plan.lanes;
    return x;
  }

  // Row r of a box whose rows are (plane, D, H) with extents (-, e0, e1): its coordinates.
  PG_HD void split_row(int r, int e0, const Divider<int32_t>& by_e1, const Divider<int32_t>& by_e0, int* plane, int* z,
                       int* y) const {
    const int rest = by_e1.div(r);
    *y = r - rest * static_cast<int>(by_e1.divisor);
    if constexpr (A0 == 0) {
      *plane = by_e0.div(rest);
      *z = rest - *plane * e0;
    } else {
      *plane = rest;
      *z = 0;
    }
  }

  // Phase 1: per laid-out window and lane, the tile position its stored index names (-1: none,
  // outside the tile, or the window, plane or lane outside the tensor) and then its dy. A thread
  // reads kLoadBatch slots' index and dy before it decodes any: the phase is bound by memory
  // latency, and one slot at a time (index, then dy) left a tile's load at ~2 round trips per slot.
  PG_HD void load(const Frame& f, int tid) const {
    const int L = kLanes ? plan.lanes : 1;
    const int cols = plan.lay[2] * L, rows = plan.planes * plan.lay[0] * plan.lay[1];
    each_column(cols, tid, [&](int first_row, int row_step, int col) {
      int lane;
      const Idx ox = f.o0[2] + split_column(col, &lane), c = f.c0 + lane;
      const bool col_in = ox < g.out[2] && (!kLanes || c < grid.lanes_total);
      for (int r = first_row; r < rows; r += kLoadBatch * row_step) {
        Idx o[kLoadBatch][kAxes], q[kLoadBatch];
        bool in[kLoadBatch];
        int64_t stored[kLoadBatch];
        A grad[kLoadBatch];
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
          const int rj = r + j * row_step;
          int plane, z, y;
          split_row(rj, plan.lay[0], plan.by_lay[1], plan.by_lay[0], &plane, &z, &y);
          o[j][0] = f.o0[0] + z;
          o[j][1] = f.o0[1] + y;
          o[j][2] = ox;
          q[j] = f.outer0 + plane;
          in[j] = col_in && rj < rows && q[j] < grid.outer && o[j][1] < g.out[1] && (A0 > 0 || o[j][0] < g.out[0]);
          stored[j] = -1;
          grad[j] = A(0);
          if (in[j]) {
            const Idx at = (q[j] * g.out_plane + out_lin(g, o[j])) * grid.lanes_total + c;
            load_indices<1>(indices, g.index_type, at, &stored[j]);
            grad[j] = static_cast<A>(to_float(dy[at]));
          }
        }
#pragma unroll
        for (int j = 0; j < kLoadBatch; ++j) {
          const int rj = r + j * row_step;
          if (rj >= rows) break;
          int named = -1;
          Idx pos[kAxes];
          if (in[j] && decode(stored[j], kLanes ? q[j] * g.c + c : q[j], o[j], pos)) {
            int local = 0;
            bool inside = true;
#pragma unroll
            for (int a = A0; a < kAxes; ++a) {
              const Idx t = pos[a] - f.i0[a];
              inside = inside && t >= 0 && t < plan.tile[a];
              local = local * plan.tile[a] + static_cast<int>(t);
            }
            // The slot of that position's sum: what the gather compares and adds to.
            if (inside) named = (static_cast<int>(q[j] - f.outer0) * plan.positions + local) * L + lane;
          }
          const int slot = rj * cols + col;
          f.named[slot] = named;
          f.grad[slot] = grad[j];  // read only where named is a band position
        }
      }
    });
  }

  // decode_index_at, with plane-format indices of undilated windows (the common case) on a short
  // path: ~25 instructions of the general one's ~85.
  PG_HD bool decode(int64_t v, Idx nc, const Idx* o, Idx* pos) const {
    if (!plain) return decode_index_at<A0>(g, v, nc, o, pos);
    if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(g.in_plane)) return false;
    Idx r = static_cast<Idx>(v);
    pos[0] = 0;
#pragma unroll
    for (int a = kAxes - 1; a > A0; --a) {
      const Idx next = g.in_div[a].div(r);
      pos[a] = r - next * g.in[a];
      r = next;
    }
    pos[A0] = r;
    bool ok = true;
#pragma unroll
    for (int a = A0; a < kAxes; ++a)
      ok = ok && static_cast<uint64_t>(pos[a] - (o[a] * g.s[a] - g.pb[a])) <= static_cast<uint64_t>(g.reach[a]);
    return ok;
  }

  // Phase 2: per band and lane, one thread sums into its own positions every laid-out window
  // that names one, visiting the windows that cover the band in row-major order.
  PG_HD void gather(const Frame& f, int tid) const {
    const int L = kLanes ? plan.lanes : 1;
    const int units = plan.planes * static_cast<int>(plan.by_bands.divisor) * L;
    for (int u = tid; u < units; u += plan.threads) {
      int rest = plan.by_lanes.div(u);
      const int lane = u - rest * L;
      const int plane = plan.by_bands.div(rest);
      const int band = rest - plane * static_cast<int>(plan.by_bands.divisor);
      const int slice_row = plan.by_segments.div(band);  // (z, row group)
      const int z = plan.by_row_groups.div(slice_row);
      const int y0 = (slice_row - z * plan.row_groups) * plan.band_rows;
      const int x0 = (band - slice_row * plan.segments) * plan.band_width;
      // The band's positions inside the tensor: rows from y0, positions from x0 along W.
      const Idx iz = f.i0[0] + z, iy0 = f.i0[1] + y0, ix0 = f.i0[2] + x0;
      if (iz >= g.in[0] || iy0 >= g.in[1] || ix0 >= g.in[2]) continue;
      const int rows = static_cast<int>(min_of<Idx>(min_of<Idx>(plan.band_rows, plan.tile[1] - y0), g.in[1] - iy0));
      const int width = static_cast<int>(min_of<Idx>(min_of<Idx>(plan.band_width, plan.tile[2] - x0), g.in[2] - ix0));
      const int first = (z * plan.tile[1] + y0) * plan.tile[2] + x0;
      const unsigned span = static_cast<unsigned>((rows - 1) * plan.tile[2] + width);
      Idx lo[kAxes], hi[kAxes], unused;
      covering(g, 0, iz, &lo[0], &hi[0]);
      covering(g, 1, iy0, &lo[1], &unused);
      covering(g, 1, iy0 + rows - 1, &unused, &hi[1]);
      covering(g, 2, ix0, &lo[2], &unused);
      covering(g, 2, ix0 + width - 1, &unused, &hi[2]);
      const int first_slot = (plane * plan.positions + first) * L + lane;
      const unsigned slot_span = span * static_cast<unsigned>(L);
      const int w_first = static_cast<int>(lo[2] - f.o0[2]), w_count = static_cast<int>(hi[2] - lo[2]) + 1;
      for (Idx oz = lo[0]; oz <= hi[0]; ++oz) {
        if (tap_along(g, 0, iz, oz) < 0) continue;
        for (Idx oy = lo[1]; oy <= hi[1]; ++oy) {
          if (rows == 1 && tap_along(g, 1, iy0, oy) < 0) continue;
          const int row = ((plane * plan.lay[0] + static_cast<int>(oz - f.o0[0])) * plan.lay[1] +
                           static_cast<int>(oy - f.o0[1])) * plan.lay[2] + w_first;
          const int* named = f.named + row * L + lane;
          const A* grad = f.grad + row * L + lane;
          // Every window adds, a miss 0 to the band's first position: in a warp some thread
          // nearly always hits, and a branch made the whole warp take both paths. A lane's
          // windows name only that lane's slots, L apart.
          for (int j = 0; j < w_count; ++j) {
            const int at = named[j * L];
            const bool hit = static_cast<unsigned>(at - first_slot) < slot_span;
            const A add = grad[j * L];
            f.sum[hit ? at : first_slot] += hit ? add : A(0);
          }
        }
      }
    }
  }

  // Phase 3: the tile's sums to dx, coalesced, each left zero for the next tile.
  PG_HD void write(const Frame& f, int tid) const {
    if (!kLanes && plan.whole_planes) {
      const int n = plan.planes * plan.positions;
      const Idx planes_left = grid.outer - f.outer0;
      const int in_tensor = planes_left < plan.planes ? static_cast<int>(planes_left) * plan.positions : n;
      T* run = dx + f.outer0 * g.in_plane;
      for (int s = tid; s < n; s += plan.threads) {
        if (s < in_tensor) run[s] = from_accum<T>(f.sum[s]);
        f.sum[s] = A(0);
      }
      return;
    }
    const int L = kLanes ? plan.lanes : 1;
    const int cols = plan.tile[2] * L, rows = plan.planes * plan.tile[0] * plan.tile[1];
    each_column(cols, tid, [&](int first_row, int row_step, int col) {
      int lane;
      Idx i[kAxes] = {0, 0, f.i0[2] + split_column(col, &lane)};
      const Idx c = f.c0 + lane;
      const bool col_in = i[2] < g.in[2] && (!kLanes || c < grid.lanes_total);
      for (int r = first_row; r < rows; r += row_step) {
        int plane, z, y;
        split_row(r, plan.tile[0], plan.by_tile[1], plan.by_tile[0], &plane, &z, &y);
        i[0] = f.i0[0] + z;
        i[1] = f.i0[1] + y;
        const Idx q = f.outer0 + plane;
        const int slot = r * cols + col;
        if (col_in && q < grid.outer && i[1] < g.in[1] && (A0 > 0 || i[0] < g.in[0]))
          dx[(q * g.in_plane + in_lin(g, i)) * grid.lanes_total + c] = from_accum<T>(f.sum[slot]);
        f.sum[slot] = A(0);
      }
    });
  }

 private:
  template <class I>
  PG_HD static I min_of(I a, I b) {
    return a < b ? a : b;
  }
};

template <class Block>
Block make_max_tiled_block(const Problem& p, const MaxTilePlan& plan, const BwdBuffers& b, int64_t* tiles) {
  using T = typename Block::Value;
  using Idx = typename Block::Index;
  Block blk;
  blk.g = make_max_geom<Idx>(p, 1);
  blk.plan = plan;
  blk.grid = make_tile_grid<Idx>(p, plan.planes, plan.lanes, plan.tile, tiles);
  blk.plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
  blk.dy = static_cast<const T*>(b.dy);
  blk.indices = b.indices;
  blk.dx = static_cast<T*>(b.dx);
  return blk;
}

// Tiles a CPU block runs in turn, as a GPU block runs tiles blockIdx.x, + gridDim.x, ...: its
// sums are zeroed once and each tile's write leaves them zero for the next, so that hand-over is
// fuzzed too (a GPU grid has one block per tile below 2^20 tiles).
inline constexpr int64_t kMaxTiledCpuTilesPerBlock = 3;

template <class Block>
struct MaxTiledOnCpu {
  Block block;
  typename Block::Index tiles, blocks;
  void operator()(typename Block::Index block_id) const {
    alignas(16) unsigned char smem[kMaxTiledSmemBytes];
    auto every_thread = [&](auto phase) {
      for (int t = 0; t < block.plan.threads; ++t) phase(t);
    };
    const auto first = block.frame(block_id, smem);
    every_thread([&](int t) { block.zero(first, t); });
    for (auto tile = block_id; tile < tiles; tile += blocks) {
      const auto f = block.frame(tile, smem);
      every_thread([&](int t) { block.load(f, t); });
      every_thread([&](int t) { block.gather(f, t); });
      every_thread([&](int t) { block.write(f, t); });
    }
  }
};

#if PG_GPU_COMPILER

template <class Block, class Idx>
__global__ void __launch_bounds__(kMaxTiledThreads) max_tiled_kernel(Block block, Idx tiles) {
  extern __shared__ double max_tile_smem[];
  const int tid = threadIdx.x;
  unsigned char* smem = reinterpret_cast<unsigned char*>(max_tile_smem);
  block.zero(block.frame(blockIdx.x, smem), tid);
  for (Idx t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto f = block.frame(t, smem);
    block.load(f, tid);
    __syncthreads();  // also orders the zeroing (or the last tile's write) before this tile's sums
    block.gather(f, tid);
    __syncthreads();
    block.write(f, tid);
    __syncthreads();  // the next tile's load overwrites what this tile's gather read
  }
}

#endif

struct MaxGatherTiled : MaxVariant<MaxGatherTiled> {
  static constexpr PoolTraits traits{
      .name = "max.gather.tiled", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every window, layout, dtype, index format and type whose one-position tile fits in shared
  // memory (supports()). Sizes for the fuzz: on the CPU backend's budget, several tiles with a
  // partial last one along every axis, several planes per tile, C split into lane tiles, bands
  // of several rows and bands of part of a row.
  static Domain domain() {
    Domain d;
    d.reach[0] = 8;
    d.reach[1] = 14;
    d.reach[2] = 60;
    d.max_channels = 12;
    return d;
  }

  static Support supports(const Problem& p) {
    MaxTilePlan plan;
    if (!plan_max_tiles(p, p.dtype == DType::f64 ? 8 : 4, MaxTileBudget{kMaxTiledSmemBytes, 1, 1, 1, 1}, &plan))
      return Support::no("window reach too large for a 48 KiB shared-memory tile");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      MaxTilePlan plan;
      const MaxTileBudget& budget = Exec::is_gpu ? kMaxTiledGpuBudget : kMaxTiledCpuBudget;
      if (!plan_max_tiles(p, sizeof(accum_t<T>), budget, &plan)) throw Error("max.gather.tiled: no tile fits");
      with_bit(p.layout == Layout::channels_last, [&]<int kLanes>() {
        int64_t tiles;
        const auto block = make_max_tiled_block<MaxTiledBlock<T, Idx, A0, kLanes == 1>>(p, plan, b, &tiles);
        if (tiles > 0) launch_tiles(ex, block, plan, tiles);
      });
    });
  }

 private:
  template <class Block>
  static void launch_tiles(const CpuExec& ex, const Block& block, const MaxTilePlan&, int64_t tiles) {
    using Idx = typename Block::Index;
    const int64_t blocks = (tiles + kMaxTiledCpuTilesPerBlock - 1) / kMaxTiledCpuTilesPerBlock;
    ex.template for_each<Idx>(blocks, MaxTiledOnCpu<Block>{block, static_cast<Idx>(tiles), static_cast<Idx>(blocks)});
  }
#if PG_GPU_COMPILER
  template <class Block>
  static void launch_tiles(const GpuExec& ex, const Block& block, const MaxTilePlan& plan, int64_t tiles) {
    using Idx = typename Block::Index;
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
    max_tiled_kernel<Block, Idx><<<grid, kMaxTiledThreads, plan.bytes, ex.stream>>>(block, static_cast<Idx>(tiles));
    PG_LAUNCH_CHECK("max_tiled_kernel");
  }
#endif
};

}  // namespace pg
