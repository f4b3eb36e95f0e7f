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
// Tiles, their shape and the window walk are max_tile_walk.hpp's. The CPU backend runs the same
// phases with emulated threads and a small budget (kMaxTiledCpuBudget), so fuzz-sized problems
// span several tiles, planes, lanes and bands.
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
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// Tile shape and bands, the same on the host and in the kernel.
struct MaxTilePlan : MaxTileShape {
  // A band is band_rows rows of one D slice, each the whole tile width, or (band_rows == 1)
  // band_width positions of one row: positions contiguous in the tile either way.
  int band_rows, band_width;
  int row_groups, segments;  // bands per D slice along H, and along W
  Divider<int32_t> by_segments, by_row_groups, by_bands;
};

// The plan for tiles within `budget`: per laid-out window its named slot (int) and dy, per
// position its sum; false when not even a one-position tile of one lane fits.
inline bool plan_max_tiles(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxTilePlan* plan) {
  using max_tiled::cover;
  MaxTilePlan q{};
  if (!shape_max_tiles(p, MaxTileBytes{4 + accum_size, accum_size}, budget, &q)) return false;
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
  q.by_segments = Divider<int32_t>(q.segments);
  q.by_row_groups = Divider<int32_t>(q.row_groups);
  q.by_bands = Divider<int32_t>(int64_t{q.tile[0]} * q.row_groups * q.segments);
  *plan = q;
  return true;
}

// The work of one block on one tile, as three phases for plan.threads cooperating threads.
template <class T, class Idx, int A0, bool kLanes>
struct MaxTiledBlock : MaxTileWalk<T, Idx, A0, kLanes, MaxTilePlan, true> {
  using Walk = MaxTileWalk<T, Idx, A0, kLanes, MaxTilePlan, true>;
  using typename Walk::A;
  using Walk::g;
  using Walk::plan;
  using Walk::grid;
  static constexpr int kPhases = 3;

  // Where a tile lies and how shared memory is carved; each thread computes its own copy.
  struct Frame : MaxTileOrigin<Idx> {
    A* grad;    // per laid-out window and lane: dy where it names a tile position
    A* sum;     // per tile position and lane: dx being summed
    int* named; // per laid-out window and lane: the sum slot it names, or -1
  };

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    static_cast<MaxTileOrigin<Idx>&>(f) = this->origin(tile_id);
    const int window_slots = plan.planes * plan.windows * plan.lanes;
    f.grad = reinterpret_cast<A*>(smem);
    f.sum = f.grad + window_slots;
    f.named = reinterpret_cast<int*>(f.sum + plan.planes * plan.positions * plan.lanes);
    return f;
  }

  // Before the first tile: every sum is zero (each tile's write leaves it so for the next).
  PG_HD void start(const Frame& f, int tid) const {
    for (int i = tid; i < plan.planes * plan.positions * plan.lanes; i += plan.threads) f.sum[i] = A(0);
  }

  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) load(f, tid);
    else if (i == 1) gather(f, tid);
    else write(f, tid);
  }

  // Phase 1: per laid-out window and lane, the slot of the sum its stored index names (what the
  // gather compares and adds to), and its dy.
  PG_HD void load(const Frame& f, int tid) const {
    this->walk_windows(f, tid, [&](int slot, int named, A grad) {
      f.named[slot] = named;
      f.grad[slot] = grad;  // read only where named is a band position
    });
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
      // Where a miss adds its 0: one of the band's own slots, a different one per thread of a
      // warp. All at first_slot, a warp's misses hit one bank whenever the tile's rows are a
      // multiple of 32 wide (bands 32 apart): k7s1p3 on 32x32 planes ran at 4% of copy, L1-bound
      // on 32-way conflicts (H200, 2026-11-28, bench/results/2026-11-28_h200_counted_run_walk.md).
      const int miss_slot = first_slot + static_cast<int>(static_cast<unsigned>(tid % 32) % span) * L;
      const int w_first = static_cast<int>(lo[2] - f.o0[2]), w_count = static_cast<int>(hi[2] - lo[2]) + 1;
      for (Idx oz = lo[0]; oz <= hi[0]; ++oz) {
        if (tap_along(g, 0, iz, oz) < 0) continue;
        for (Idx oy = lo[1]; oy <= hi[1]; ++oy) {
          if (rows == 1 && tap_along(g, 1, iy0, oy) < 0) continue;
          const int row = ((plane * plan.lay[0] + static_cast<int>(oz - f.o0[0])) * plan.lay[1] +
                           static_cast<int>(oy - f.o0[1])) * plan.lay[2] + w_first;
          const int* named = f.named + row * L + lane;
          const A* grad = f.grad + row * L + lane;
          // Every window adds, a miss 0 to one of the band's own positions (no sum is -0, so
          // +0 changes none): in a warp some thread nearly always hits, and a branch made the
          // whole warp take both paths. A lane's windows name only that lane's slots, L apart.
          for (int j = 0; j < w_count; ++j) {
            const int at = named[j * L];
            const bool hit = static_cast<unsigned>(at - first_slot) < slot_span;
            const A add = grad[j * L];
            f.sum[hit ? at : miss_slot] += hit ? add : A(0);
          }
        }
      }
    }
  }

  // Phase 3: the tile's sums to dx, coalesced, each left zero for the next tile.
  PG_HD void write(const Frame& f, int tid) const {
    this->write_tile(f, tid, [&](int slot) {
      const A v = f.sum[slot];
      f.sum[slot] = A(0);
      return v;
    });
  }

 private:
  template <class I>
  PG_HD static I min_of(I a, I b) {
    return a < b ? a : b;
  }
};

struct MaxGatherTiled : MaxVariant<MaxGatherTiled> {
  static constexpr PoolTraits traits{
      .name = "max.gather.tiled", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every window, layout, dtype, index format and type whose one-position tile fits in shared
  // memory (supports()). Sizes for the fuzz: on the CPU backend's budget, several tiles with a
  // partial last one along every axis, several planes per tile, C split into lane tiles, bands
  // of several rows and bands of part of a row.
  static Domain domain() { return max_tile_domain(); }

  static Support supports(const Problem& p) {
    return max_tile_support<MaxTilePlan>(p, plan_max_tiles, "window reach too large for a 48 KiB shared-memory tile");
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    launch_max_tiles<MaxTiledBlock>(ex, p, b, width, traits.name, plan_max_tiles, [](auto&) {});
  }
};

}  // namespace pg
