// max.scatter.tiled: max-pool backward from stored indices for every window (any kernel, stride,
// dilation, padding), both layouts, every index format and type, by atomic adds into a tile of dx
// in shared memory.
//
// Why: the deterministic tiled variants (max.gather.tiled, .counted) keep every window's named
// position and dy in shared memory and then sum each position's windows in row-major window
// order. That order costs a second pass: counted's listed sums are a serial chain per position
// (SPP k13 waits on them), tiled's bands compare every covering window. Where the order of the
// adds may vary, none of that is needed: a block owns a tile of dx (max_tile_walk.hpp's tiles,
// whole planes on small planes), and
//   1. walks the windows that cover the tile once, decoding and checking each stored index as
//      every variant does, and adds the window's dy to the position it names with a
//      shared-memory atomic add;
//   2. writes the tile to dx once, coalesced, and leaves it zero for its next tile.
// Shared memory holds one accumulator per tile position and none per window, so a tile is all of
// a small plane at any window size. Not bitwise repeatable (the adds' order varies; the values
// summed and the oracle's bound do not), no atomics in global memory, each dx element written
// once, no zeroing pass over dx.
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kMaxTiledCpuBudget), so fuzz-sized problems span several tiles, planes and lane tiles.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/common/exec.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// Per tile position one accumulator; nothing per window.
inline bool plan_max_scatter_tiled(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxTileShape* plan) {
  if (!shape_max_tiles(p, MaxTileBytes{0, accum_size}, budget, plan)) return false;
  // A tile read as one run of windows holds no more planes than its threads read in one round
  // trip, as max.gather.counted's: more planes would only wait for a second round in the same
  // block, where a second block could run it.
  if (plan->window_run) {
    const int fit = std::max(1, budget.threads * kRunLoadBatch / (plan->windows * plan->lanes));
    if (fit < plan->planes) {
      plan->bytes = plan->bytes / plan->planes * fit;
      plan->planes = fit;
    }
  }
  return true;
}

// The work of one block on one tile, as two phases for plan.threads cooperating threads.
template <class T, class Idx, int A0, bool kLanes>
struct MaxScatterTiledBlock : MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape> {
  using Walk = MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape>;
  using typename Walk::A;
  using Walk::plan;
  static constexpr int kPhases = 2;

  struct Frame : MaxTileOrigin<Idx> {
    A* sum;  // per tile position and lane (walk_windows' slots): the dy of the windows naming it
  };

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    static_cast<MaxTileOrigin<Idx>&>(f) = this->origin(tile_id);
    f.sum = reinterpret_cast<A*>(smem);
    return f;
  }

  // Before the first tile: every sum zero (each tile's write leaves it so).
  PG_HD void start(const Frame& f, int tid) const {
    for (int i = tid; i < plan.planes * plan.positions * plan.lanes; i += plan.threads) f.sum[i] = A(0);
  }

  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) {
      // Sums start from +0, as every variant's: a lone -0 dy gives +0.
      this->walk_windows(f, tid, [&](int, int named, A grad) {
        if (named >= 0) atomic_add(&f.sum[named], grad);
      });
    } else {
      this->write_tile(f, tid, [&](int slot) {
        const A v = f.sum[slot];
        f.sum[slot] = A(0);
        return v;
      });
    }
  }
};

struct MaxScatterTiled : MaxVariant<MaxScatterTiled> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.tiled", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = false};
  // Every window, layout, dtype, index format and type (a tile of one position always fits).
  // Sizes for the fuzz as max.gather.tiled's: on the CPU backend's budget, several tiles with a
  // partial last one along every axis, several planes per tile, C split into lane tiles, and
  // small planes read as one run of windows.
  static Domain domain() {
    Domain d;
    d.reach[0] = 8;
    d.reach[1] = 14;
    d.reach[2] = 60;
    d.max_channels = 12;
    return d;
  }

  static Support supports(const Problem& p) {
    MaxTileShape plan;
    if (!plan_max_scatter_tiled(p, p.dtype == DType::f64 ? 8 : 4, MaxTileBudget{kMaxTiledSmemBytes, 1, 1, 1, 1}, &plan))
      return Support::no("more than 2^24 windows cover one position");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      MaxTileShape plan;
      const MaxTileBudget& budget = Exec::is_gpu ? kMaxTiledGpuBudget : kMaxTiledCpuBudget;
      if (!plan_max_scatter_tiled(p, sizeof(accum_t<T>), budget, &plan)) throw Error("max.scatter.tiled: no tile fits");
      with_bit(p.layout == Layout::channels_last, [&]<int kLanes>() {
        int64_t tiles;
        const auto block = make_max_tile_block<MaxScatterTiledBlock<T, Idx, A0, kLanes == 1>>(p, plan, b, &tiles);
        if (tiles > 0) run_max_tiles(ex, block, tiles);
      });
    });
  }
};

}  // namespace pg
