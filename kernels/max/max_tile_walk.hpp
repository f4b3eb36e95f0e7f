// The layer under the max-pool variants that work over shared-memory tiles of dx
// (max.gather.tiled, max.gather.counted): how a tile is shaped within a shared-memory budget, where a tile lies, and
// the walk that loads, decodes and checks once every window that can cover a tile. What a
// variant keeps per window and per position, and how it sums, is its own.
//
// The tile is a box [planes][D][H][W][lanes] of the tensor seen as [outer][D][H][W][lanes]:
// outer = N * C and one lane in channels-first, outer = N and lanes = channels in channels-last.
// A block's phases run on the GPU with a barrier after each, and on the CPU backend with emulated
// threads in phase-major order (run_max_tiles_on_cpu), so their index logic is fuzzed in CI.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common/divider.hpp"
#include "kernels/common/even_piece.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/tile_grid.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "src/model/dtype.hpp"
#include "src/model/variant.hpp"

namespace pg {

inline constexpr int kMaxTiledThreads = 256;
// Windows a thread reads before it decodes them. 8 and 12 were slower on every overlapping row
// (H100, 2026-11-26: SPP k5 0.068 -> 0.075 / 0.093 ms, I3D 1x3x3 0.81 -> 1.19 / 1.23 ms).
inline constexpr int kLoadBatch = 4;
// The same for walk_window_run, whose flat walk keeps fewer registers per window: a thread of a
// tile of five 19x19 planes (YOLO's SPP) reads its seven windows in one round trip.
inline constexpr int kRunLoadBatch = 8;

inline constexpr size_t kMaxTiledSmemBytes = 48 * 1024;  // no opt-in: four blocks share a multiprocessor

// How a tile may grow: shared-memory bytes, dx elements (positions times lanes, all planes),
// channels per channels-last tile, W positions per tile, and the threads that share it.
struct MaxTileBudget {
  size_t bytes;
  int64_t elements;
  int lanes, width, threads;
};
// On a GPU: as much as 48 KiB holds; 32 lanes (128 bytes of f32 channels per position). Smaller
// tiles (36 or 24 KiB, or several planes within 44 KiB so that five blocks share a
// multiprocessor) were faster on some overlapping rows and slower on others, by as much
// (H100, 2026-11-26: bench/results/2026-11-26_h100_max_experiments.md).
inline constexpr MaxTileBudget kMaxTiledGpuBudget{kMaxTiledSmemBytes, int64_t{1} << 20, 32, 2048, kMaxTiledThreads};
// On the CPU backend the same bytes (so it runs every problem the GPU does) but few elements:
// fuzz-sized problems span several tiles along every axis and C. Two lanes: at four, channels-
// last planes small enough to be one tile were too rare for the fuzz to reach their run walk
// with a partial last lane tile (0.5% of the draws; tests/tiled_reach_test.cpp).
inline constexpr MaxTileBudget kMaxTiledCpuBudget{kMaxTiledSmemBytes, 96, 2, 24, 28};

// A variant's shared memory: bytes per laid-out window and per tile position, each per lane and
// plane.
struct MaxTileBytes {
  size_t window, position;
};

// Tile shape and extents, the same on the host and in the kernel.
struct MaxTileShape {
  int planes, lanes;  // outer planes and lanes per tile
  int tile[kAxes];    // dx positions per tile along D, H, W
  int lay[kAxes];     // windows laid out per tile (a bound on those covering it)
  int positions;      // tile[0] * tile[1] * tile[2]
  int windows;        // lay[0] * lay[1] * lay[2]
  int threads;
  bool whole_planes;  // tiles of whole planes: a tile's positions (times its lanes) are one run of dx
  bool window_run;    // whole planes laid out from window 0 to the last: a tile's windows are one run of dy
  Divider<int32_t> by_lanes, by_lay[kAxes], by_tile[kAxes];
  size_t bytes;  // shared memory of a block
};

// The bytes of a global-memory sector, and the fewest lanes (a power of two) whose `bytes` each
// fill one.
inline constexpr int64_t kSectorBytes = 32;
inline int64_t lanes_filling_a_sector(int64_t bytes) {
  int64_t lanes = 1;
  while (lanes * bytes < kSectorBytes) lanes *= 2;
  return lanes;
}

namespace max_tiled {

// At most how many windows cover n consecutive positions along axis a.
inline int64_t cover(const Problem& p, int a, int64_t n) {
  const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
  return std::max<int64_t>(1, std::min<int64_t>((n - 1 + reach) / p.stride[a] + 1, p.out[a]));
}

// Shared memory of one plane of `lanes` lanes. 0 when a count is beyond int arithmetic.
inline size_t plane_bytes(const Problem& p, const int* tile, int64_t lanes, const MaxTileBytes& per) {
  int64_t windows = 1, positions = 1;
  for (int a = 0; a < kAxes; ++a) {
    windows *= cover(p, a, tile[a]);
    positions *= tile[a];
    if (windows > (int64_t{1} << 24)) return 0;
  }
  return static_cast<size_t>(lanes * (windows * static_cast<int64_t>(per.window) + positions * static_cast<int64_t>(per.position)));
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
inline bool shape_tile(const Problem& p, int64_t lanes, const MaxTileBytes& per, const MaxTileBudget& budget, int* tile) {
  tile[0] = static_cast<int>(p.in[0]);
  tile[1] = static_cast<int>(p.in[1]);
  tile[2] = static_cast<int>(even_piece(p.in[2], std::max<int64_t>(1, budget.width / lanes)));
  for (;;) {
    const size_t bytes = plane_bytes(p, tile, lanes, per);
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

// The tile shape within `budget`; false when not even a one-position tile of one lane fits (a
// window reach too long).
inline bool shape_max_tiles(const Problem& p, const MaxTileBytes& per, const MaxTileBudget& budget, MaxTileShape* shape) {
  using max_tiled::cover;
  const bool cl = p.layout == Layout::channels_last;
  const int64_t outer = std::max<int64_t>(cl ? p.n : p.n * p.c, 1);
  MaxTileShape q{};
  q.threads = budget.threads;
  // Lanes: the widest lane tile whose tile keeps the most positions per laid-out window, among
  // those whose channels of a window's dy and index fill a 32-byte sector (fewer lanes, if none
  // of those fits). Fewer lanes keep more positions per window but use a few bytes of each
  // sector they read. H100, 2026-11-27 (bench/results/2026-11-27_h100_tile_lanes.md), channels-
  // last stride-1 rows where the ratio alone chose 1 or 2 lanes, ms at those -> at 4 lanes:
  // max.gather.counted k3 f16 (32,128,56,56) 0.430 -> 0.190, k5 3D bf16 0.049 -> 0.047, but k7
  // f32 (16,96,33,33) 0.039 -> 0.042; max.gather.tiled 0.425 -> 0.195, 0.088 -> 0.050, but 0.049
  // -> 0.060 on k7 (small enough for L2, where the halo costs more than the wasted bytes).
  const int64_t sector_lanes = std::min<int64_t>(
      {lanes_filling_a_sector(dtype_size(p.dtype) + index_type_size(p.index_type)), budget.lanes, std::max<int64_t>(p.c, 1)});
  double best_ratio = -1;
  for (const int64_t floor : {cl ? sector_lanes : 1, int64_t{1}}) {
    for (int64_t want = cl ? budget.lanes : 1; want >= floor; want /= 2) {
      const int64_t lanes = cl ? even_piece(p.c, want) : 1;
      int tile[kAxes];
      if (!max_tiled::shape_tile(p, lanes, per, budget, tile)) continue;
      const double ratio = max_tiled::positions_per_window(p, tile);
      if (ratio > best_ratio + 1e-9) {
        best_ratio = ratio;
        q.lanes = static_cast<int>(lanes);
        for (int a = 0; a < kAxes; ++a) q.tile[a] = tile[a];
      }
    }
    if (best_ratio >= 0) break;
  }
  if (best_ratio < 0) return false;
  q.positions = q.tile[0] * q.tile[1] * q.tile[2];
  q.whole_planes = q.positions == p.in_plane();
  q.windows = 1;
  for (int a = 0; a < kAxes; ++a) {
    q.lay[a] = static_cast<int>(cover(p, a, q.tile[a]));
    q.windows *= q.lay[a];
  }
  // The layout starts at the first window covering position 0, which is window 0 unless the
  // first windows lie wholly in the padding; it may hold windows past the last one.
  q.window_run = q.whole_planes && q.windows == p.out_plane();
  for (int a = 0; a < kAxes; ++a) q.window_run = q.window_run && p.pad_begin[a] <= p.dilation[a] * (p.kernel[a] - 1);
  const size_t per_plane = max_tiled::plane_bytes(p, q.tile, q.lanes, per);
  const int64_t fit = std::min<int64_t>(static_cast<int64_t>(budget.bytes / per_plane),
                                        budget.elements / (int64_t{q.positions} * q.lanes));
  q.planes = static_cast<int>(std::clamp<int64_t>(fit, 1, outer));
  q.bytes = per_plane * q.planes;
  q.by_lanes = Divider<int32_t>(q.lanes);
  for (int a = 0; a < kAxes; ++a) {
    q.by_lay[a] = Divider<int32_t>(q.lay[a]);
    q.by_tile[a] = Divider<int32_t>(q.tile[a]);
  }
  *shape = q;
  return true;
}

// A tile read as one run of windows holds no more planes than its threads read in one round trip:
// more planes would only wait for a second round in the same block, where a second block could run
// them (H100, 2026-11-27: YOLO SPP k13 0.078 -> 0.072 ms, k9 0.072 -> 0.066, GoogLeNet's k3s1 0.111
// -> 0.104; bench/results/2026-11-27_counted_lean.md).
inline void cap_planes_to_one_round(const MaxTileBudget& budget, MaxTileShape* plan) {
  if (!plan->window_run) return;
  const int fit = std::max(1, budget.threads * kRunLoadBatch / (plan->windows * plan->lanes));
  if (fit < plan->planes) {
    plan->bytes = plan->bytes / plan->planes * fit;
    plan->planes = fit;
  }
}

// Where a tile lies: its first plane, lane and dx position, and its first laid-out window (the
// first that can cover the tile).
template <class Idx>
struct MaxTileOrigin {
  Idx outer0, c0;
  Idx i0[kAxes];
  Idx o0[kAxes];
};

// Per laid-out window in shared memory: the slot of the position its index names (-1: none) and
// its dy, side by side so that a lookup is one shared-memory load.
template <class A>
struct NamedDy {
  int32_t named;
  A grad;
};

// How a run's decode learns whether indices take the short plane-format path (MaxTileWalk::named_at).
enum class PlainDecode { runtime, yes, no };

// What every tiled max block holds and the steps they share. Plan derives from MaxTileShape. A0
// is the first axis that is not trivially 1 (1 for 1D and 2D problems, whose slots then skip D's
// arithmetic); kLanes: channels-last (lanes split off every slot index); kLanePacks: channels-last
// window runs of 1D and 2D problems may read their lanes in packs (walk_lane_packs_as). Not 3D:
// its bodies went from 48 to 64 registers with the packs' code, and max.gather.tiled lost 3-8% on
// the 3D channels-last rows, whose planes are rarely small enough to be read as one run anyway.
template <class T, class Idx, int A0, bool kLanes, class Plan, bool kLanePacks = false>
struct MaxTileWalk {
  static constexpr bool kReadsLanePacks = kLanes && kLanePacks && A0 == 1;
  using Value = T;
  using Index = Idx;
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  Plan plan;
  TileGrid<Idx> grid;
  bool plain;  // plane-format indices and no dilation: decode()'s short path
  // Channels-last window runs: the lanes a thread reads together (max_tile_lane_pack, where the
  // block reads packs); 1: one lane at a time.
  int lane_pack;
  Idx plane_o0[kAxes];  // the first window covering position 0: every whole-plane tile's o0
  const T* dy;
  const void* indices;
  T* dx;

  PG_HD MaxTileOrigin<Idx> origin(Idx tile_id) const {
    MaxTileOrigin<Idx> t;
    if (plan.whole_planes) {
      // Every tile starts at position 0 of its planes: none of locate's and covering's divisions
      // (about 150 instructions a warp on a tile of YOLO SPP's five 19x19 planes).
      if constexpr (kLanes) {
        t.c0 = grid.lane_tiles.mod(tile_id) * plan.lanes;
        t.outer0 = grid.lane_tiles.div(tile_id) * plan.planes;
      } else {
        t.outer0 = tile_id * plan.planes;
        t.c0 = 0;
      }
      for (int a = 0; a < kAxes; ++a) {
        t.i0[a] = 0;
        t.o0[a] = plane_o0[a];
      }
      return t;
    }
    t.outer0 = grid.locate(tile_id, plan.lanes, plan.tile, &t.c0, t.i0) * plan.planes;
    for (int a = 0; a < kAxes; ++a) {
      Idx lo, unused;
      covering(g, a, t.i0[a], &lo, &unused);
      t.o0[a] = lo;
    }
    return t;
  }

  // How many of the planes of the tile at t lie in the tensor: plan.planes, fewer in the last tile.
  PG_HD int planes_in_tensor(const MaxTileOrigin<Idx>& t) const {
    const Idx left = grid.outer - t.outer0;
    return left < plan.planes ? static_cast<int>(left) : plan.planes;
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

  // Element i of a sequence of (item, lane) pairs, lanes fastest (a box's column of W position
  // and lane; a run's window or position and lane): its item, and its lane.
  PG_HD int split_lane(int i, int* lane) const {
    if constexpr (!kLanes) {
      *lane = 0;
      return i;
    }
    const int item = plan.by_lanes.div(i);
    *lane = i - item * plan.lanes;
    return item;
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

  // Every laid-out window and lane of the tile at t: visit(slot, named, grad) with slot its place
  // in the layout [planes][lay D][lay H][lay W][lanes], named the tile position and lane its
  // stored index names ((plane * positions + position) * lanes + lane; -1: none, outside the
  // tile, or the window, plane or lane outside the tensor), grad its dy. A thread reads
  // kLoadBatch windows' index and dy before it decodes any: the walk is bound by memory latency,
  // and one window at a time (index, then dy) left a tile's load at ~2 round trips per window.
  template <class Visit>
  PG_HD void walk_windows(const MaxTileOrigin<Idx>& t, int tid, Visit&& visit) const {
    if (plan.window_run) return walk_window_run(t, tid, visit);
    const int L = kLanes ? plan.lanes : 1;
    const int cols = plan.lay[2] * L, rows = plan.planes * plan.lay[0] * plan.lay[1];
    each_column(cols, tid, [&](int first_row, int row_step, int col) {
      int lane;
      const Idx ox = t.o0[2] + split_lane(col, &lane), c = t.c0 + lane;
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
          o[j][0] = t.o0[0] + z;
          o[j][1] = t.o0[1] + y;
          o[j][2] = ox;
          q[j] = t.outer0 + plane;
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
              const Idx d = pos[a] - t.i0[a];
              inside = inside && d >= 0 && d < plan.tile[a];
              local = local * plan.tile[a] + static_cast<int>(d);
            }
            if (inside) named = (static_cast<int>(q[j] - t.outer0) * plan.positions + local) * L + lane;
          }
          visit(rj * cols + col, named, grad[j]);
        }
      }
    });
  }

  // walk_windows when the tile's windows are one run of dy and of the indices (plan.window_run):
  // slot s is the run's s-th window (channels-last: the s / lanes-th window's lane s % lanes),
  // read flat (consecutive threads, consecutive windows or lanes), with none of the box walk's
  // row and column arithmetic: about a third of its instructions per window (YOLO's SPP and
  // SPPF, GoogLeNet's k3s1, the dilated and 1D rows take this path). The stored index type is
  // switched on once per tile, not once per window.
  template <class Visit>
  PG_HD void walk_window_run(const MaxTileOrigin<Idx>& t, int tid, Visit& visit) const {
    switch (g.index_type) {
      case IndexType::i64: return walk_window_run_as<int64_t>(t, tid, visit);
      case IndexType::i32: return walk_window_run_as<int32_t>(t, tid, visit);
      default: return walk_window_run_as<uint8_t>(t, tid, visit);
    }
  }

  template <class I, class Visit>
  PG_HD void walk_window_run_as(const MaxTileOrigin<Idx>& t, int tid, Visit& visit) const {
    if constexpr (kReadsLanePacks) {
      if (lane_pack == 4) return walk_lane_packs_as<I, 4>(t, tid, visit);
      if (lane_pack == 2) return walk_lane_packs_as<I, 2>(t, tid, visit);
    }
    // Channels-last runs read half the batch: each window's lane is one more live value, and
    // eight of them spilled hundreds of bytes under max.gather.counted's 48-register cap.
    constexpr int kBatch = kLanes ? kRunLoadBatch / 2 : kRunLoadBatch;
    const int L = kLanes ? plan.lanes : 1;
    const int n = plan.planes * plan.windows * L;
    const Idx planes_left = grid.outer - t.outer0;
    // The run's windows in the tensor: n itself for channels-first whole groups, as one register
    // (a second one tipped max.gather.counted's body into more spills and 4-6% slower rows).
    const int in_tensor = planes_left < plan.planes ? static_cast<int>(planes_left) * plan.windows
                          : kLanes                  ? plan.planes * plan.windows
                                                    : n;
    // The run's first window (channels-last: its first lane), so that a window is one add away.
    const Idx first = kLanes ? t.outer0 * g.out_plane * grid.lanes_total + t.c0 : t.outer0 * g.out_plane;
    const I* run_indices = static_cast<const I*>(indices) + first;
    const T* run_dy = dy + first;
    for (int s0 = tid; s0 < n; s0 += kBatch * plan.threads) {
      I stored[kBatch];
      A grad[kBatch];
      int lane[kBatch];  // channels-last: slot s's lane; -1 where its window or lane lies outside the tensor
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int s = s0 + j * plan.threads;
        stored[j] = 0;
        grad[j] = A(0);
        Idx at = s;
        bool in = s < in_tensor;
        if constexpr (kLanes) {
          const int w = split_lane(s, &lane[j]);
          in = w < in_tensor && t.c0 + lane[j] < grid.lanes_total;
          at = w * grid.lanes_total + lane[j];
          if (!in) lane[j] = -1;
        }
        if (in) {
          stored[j] = run_indices[at];
          grad[j] = static_cast<A>(to_float(run_dy[at]));
        }
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int s = s0 + j * plan.threads;
        if (s >= n) break;
        int named = -1;
        if constexpr (kLanes) {
          if (lane[j] >= 0) {
            // The window again, not kept from the load: one more live value per load spilled.
            const int position = named_in_run(t, plan.by_lanes.div(s), static_cast<int64_t>(stored[j]), lane[j]);
            if (position >= 0) named = position * L + lane[j];
          }
        } else {
          named = s < in_tensor ? named_in_run(t, s, static_cast<int64_t>(stored[j]), 0) : -1;
        }
        visit(s, named, grad[j]);
      }
    }
  }

  // walk_window_run_as for channels-last runs whose lanes come in packs of V (lane_pack): a thread
  // reads one window's V lanes with one load of dy and one or two of the indices (16 bytes at
  // most each), and decodes the window once for them (the pack's lanes share named_in_run's window coordinates). One lane per
  // access spent ~126 instructions per window and lane on YOLOv5's SPPF in f16 (four lanes a
  // tile), most of them addresses and window coordinates computed again for every lane.
  // max.gather.tiled reads packs: 1.04-1.12x on small channels-last f16 planes (H200,
  // 2026-11-29, bench/results/2026-11-29_h200_lane_packs.md). max.gather.counted does not: it
  // lost 9-21% there, its warps then visiting 32 consecutive windows at a time (8 before), whose
  // shared-memory count atomics meet on the same positions far more often.
  // Slots as walk_window_run_as': slot s is the s / lanes-th window's lane s % lanes. Every lane
  // of a tile lies inside C (lane_pack requires the lane tile to divide C).
  template <class I, int V, class Visit>
  PG_HD void walk_lane_packs_as(const MaxTileOrigin<Idx>& t, int tid, Visit& visit) const {
    // The same loads in flight per thread as one lane at a time (kRunLoadBatch / 2 lanes): more
    // live values spilled under max.gather.counted's register cap.
    constexpr int kBatch = kRunLoadBatch / 2 / V > 0 ? kRunLoadBatch / 2 / V : 1;
    const int L = plan.lanes;
    const int packs = plan.planes * plan.windows * L / V;
    const int in_tensor = planes_in_tensor(t) * plan.windows;
    const Idx first = t.outer0 * g.out_plane * grid.lanes_total + t.c0;
    const I* run_indices = static_cast<const I*>(indices) + first;
    const T* run_dy = dy + first;
    for (int k0 = tid; k0 < packs; k0 += kBatch * plan.threads) {
      Pack<I, V> stored[kBatch];
      Pack<T, V> grad[kBatch];
      bool in[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int k = k0 + j * plan.threads;
        int lane;
        const int w = split_lane(k * V, &lane);
        in[j] = k < packs && w < in_tensor;
        // Zero, not left unset where no window is read: unset, nvcc kept every lane of every
        // pack alive on both paths (64-124 registers, or 208-280 bytes of spill under the cap).
        stored[j] = Pack<I, V>{};
        grad[j] = Pack<T, V>{};
        if (in[j]) {
          const Idx at = static_cast<Idx>(w) * grid.lanes_total + lane;
          stored[j] = load_pack<V>(run_indices, at);
          grad[j] = load_pack<V>(run_dy, at);
        }
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int k = k0 + j * plan.threads;
        if (k >= packs) break;
        int lane;
        const int w = split_lane(k * V, &lane);
        int named[V];
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const int position = in[j] ? named_in_run(t, w, static_cast<int64_t>(stored[j].v[v]), lane + v) : -1;
          named[v] = position >= 0 ? position * L + lane + v : -1;
        }
#pragma unroll
        for (int v = 0; v < V; ++v) visit(k * V + v, named[v], in[j] ? static_cast<A>(to_float(grad[j].v[v])) : A(0));
      }
    }
  }

  // Where the run's w-th window lies: its plane in the tile and its window coordinates.
  struct RunWindow {
    Idx o[kAxes];
    Idx plane;
  };
  PG_HD RunWindow run_window(int w) const {
    RunWindow at;
    Idx r = w;
    at.o[0] = 0;
#pragma unroll
    for (int a = kAxes - 1; a >= A0; --a) {
      const Idx next = g.out_div[a].div(r);
      at.o[a] = r - next * g.out[a];
      r = next;
    }
    at.plane = r;
    return at;
  }

  // The run's next window: one step along W, carried into H, D and the plane; what run_window(w +
  // 1) gives, without its divisions.
  PG_HD void next_window(RunWindow& at) const {
#pragma unroll
    for (int a = kAxes - 1; a >= A0; --a) {
      if (++at.o[a] < g.out[a]) return;
      at.o[a] = 0;
    }
    ++at.plane;
  }

  // The tile position (plane * positions + its offset in the plane) that stored index v of the
  // run's w-th window (channels-last: in lane `lane`) names; -1: none.
  PG_HD int named_in_run(const MaxTileOrigin<Idx>& t, int w, int64_t v, int lane) const {
    return named_at(t, run_window(w), v, lane);
  }

  // named_in_run for the window at w. A plane-format index of an undilated window (`plain`) is its
  // position's offset in the plane, so the slot is the plane's first position plus v once v is
  // checked to be a tap: no position coordinates are put back together. kPlain: whether that short
  // path is taken, read from `plain` (runtime) or fixed for a loop specialised on it.
  template <PlainDecode kPlain = PlainDecode::runtime>
  PG_HD int named_at(const MaxTileOrigin<Idx>& t, const RunWindow& w, int64_t v, int lane) const {
    const bool short_path = kPlain == PlainDecode::runtime ? plain : kPlain == PlainDecode::yes;
    const int first = static_cast<int>(w.plane) * plan.positions;
    if (!short_path) {
      Idx pos[kAxes];
      const Idx nc = kLanes ? (t.outer0 + w.plane) * g.c + t.c0 + lane : t.outer0 + w.plane;
      return decode_index_at<A0>(g, v, nc, w.o, pos) ? first + static_cast<int>(in_lin(g, pos)) : -1;
    }
    if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(g.in_plane)) return -1;
    Idx rest = static_cast<Idx>(v);
    bool tap = true;
#pragma unroll
    for (int a = kAxes - 1; a >= A0; --a) {
      const Idx next = a > A0 ? g.in_div[a].div(rest) : Idx{0};
      const Idx q = rest - next * g.in[a];
      tap = tap && static_cast<uint64_t>(q - (w.o[a] * g.s[a] - g.pb[a])) <= static_cast<uint64_t>(g.reach[a]);
      rest = next;
    }
    return tap ? first + static_cast<int>(v) : -1;
  }

  // Quads: the tensor's elements [4q, 4q + 4) of dy and the indices (window quads) or of dx
  // (position quads), counted from the tensor's start so that each is one aligned access
  // (quad_access) where the buffers allow. A tile's run starts and ends where its planes do, mid-
  // quad in general: the quads at its two ends are read by both tiles that share them, each
  // taking its own windows, and written by both, each storing its own positions one at a time.
  // Why: the one-window-a-thread walk (walk_window_run_as) spent ~170 thread instructions per
  // window in max.scatter.tiled on YOLO's SPP k5 (ncu, H200, 2026-12-02): a scalar load of the
  // index and one of dy, each with 64-bit address arithmetic, and the two divisions back to the
  // window's coordinates, which a quad's later windows step to instead.
  static constexpr int kQuad = 4;
  static constexpr int kQuadBatch = 2;  // quads a thread reads before it decodes them: 8 windows in flight
  bool quad_access = false;             // dy, the indices and dx aligned for one access a quad (window_quad_access)

  // Quad `at` (its first element) of a buffer of `total` elements: one access where the quad
  // lies in the buffer and quad_access holds, else element by element (0 past the end).
  template <class E>
  PG_HD Pack<E, kQuad> load_quad(const E* base, Idx at, Idx total) const {
    // As differences: at + kQuad may pass Idx's range at a tensor's end.
    if (quad_access && total - at >= kQuad) return load_pack<kQuad>(base, at);
    Pack<E, kQuad> q{};
#pragma unroll
    for (int v = 0; v < kQuad; ++v)
      if (v < total - at) q.v[v] = base[at + v];
    return q;
  }

  // How many quads hold the elements [first, first + n) (in 64 bits: first + n + 3 may pass Idx's).
  PG_HD static int quad_count(Idx first, int n) {
    const int64_t begin = static_cast<int64_t>(first) / kQuad;
    return static_cast<int>((static_cast<int64_t>(first) + n + kQuad - 1) / kQuad - begin);
  }

  // The tile's first run window within its quad: the windows of the tile at t are the tensor's
  // [first, first + planes_in_tensor * windows), and its quads start `lead` windows before first.
  PG_HD int quad_lead(const MaxTileOrigin<Idx>& t) const {
    return static_cast<int>((t.outer0 * g.out_plane) % kQuad);
  }

  // walk_windows for channels-first window runs (plan.window_run, !kLanes), a quad a thread:
  // visit(s0, named, grad) per quad, with s0 the run slot of its first window (-lead for the
  // tile's first quad), named[v] and grad[v] window s0 + v's (named -1 for windows of other tiles
  // or of no tensor's plane: slots outside [0, planes_in_tensor * windows)). named and grad are
  // the visit's to change.
  template <class Visit>
  PG_HD void walk_window_quads(const MaxTileOrigin<Idx>& t, int tid, Visit&& visit) const {
    constexpr PlainDecode yes = PlainDecode::yes, no = PlainDecode::no;
    switch (g.index_type) {
      case IndexType::i64: return plain ? walk_window_quads_as<int64_t, yes>(t, tid, visit) : walk_window_quads_as<int64_t, no>(t, tid, visit);
      case IndexType::i32: return plain ? walk_window_quads_as<int32_t, yes>(t, tid, visit) : walk_window_quads_as<int32_t, no>(t, tid, visit);
      default: return walk_window_quads_as<uint8_t, no>(t, tid, visit);  // u8 indices are window-format, never plain
    }
  }

  // kPlain fixed per loop: the decode of the other format is no code in it (its constants took
  // registers and reloads under max.scatter.tiled's 48-register cap).
  template <class I, PlainDecode kPlain, class Visit>
  PG_HD void walk_window_quads_as(const MaxTileOrigin<Idx>& t, int tid, Visit& visit) const {
    const int in_tensor = planes_in_tensor(t) * plan.windows;
    const Idx first = t.outer0 * g.out_plane, total = grid.outer * g.out_plane;
    const Idx q0 = first / kQuad;
    const int quads = quad_count(first, in_tensor);
    const I* stored_at = static_cast<const I*>(indices);
    for (int k0 = tid; k0 < quads; k0 += kQuadBatch * plan.threads) {
      Pack<I, kQuad> stored[kQuadBatch];
      Pack<T, kQuad> grad[kQuadBatch];
#pragma unroll
      for (int j = 0; j < kQuadBatch; ++j) {
        const int k = k0 + j * plan.threads;
        stored[j] = Pack<I, kQuad>{};
        grad[j] = Pack<T, kQuad>{};
        if (k < quads) {
          const Idx at = (q0 + k) * kQuad;
          stored[j] = load_quad(stored_at, at, total);
          grad[j] = load_quad(dy, at, total);
        }
      }
#pragma unroll
      for (int j = 0; j < kQuadBatch; ++j) {
        const int k = k0 + j * plan.threads;
        if (k >= quads) break;
        // Window v of the quad is the run's window s. The quad's first window in the tile is
        // located once and the next ones stepped to: three windows of four without the two
        // divisions of their coordinates.
        const int s0 = static_cast<int>((q0 + k) * kQuad - first);
        auto at = run_window(s0 > 0 ? s0 : 0);
        int named[kQuad];
        A sum[kQuad];
#pragma unroll
        for (int v = 0; v < kQuad; ++v) {
          const int s = s0 + v;
          named[v] = s >= 0 && s < in_tensor ? named_at<kPlain>(t, at, static_cast<int64_t>(stored[j].v[v]), 0) : -1;
          sum[v] = static_cast<A>(to_float(grad[j].v[v]));
          if (s >= 0 && v + 1 < kQuad) next_window(at);
        }
        visit(s0, named, sum);
      }
    }
  }

  // The tile's positions to dx, coalesced: value(slot) is the position's dx in the accumulator
  // type (slots as walk_windows' named) and leaves the slot ready for the next tile. Called for
  // every slot of the tile, positions outside the tensor included.
  template <class Value>
  PG_HD void write_tile(const MaxTileOrigin<Idx>& t, int tid, Value&& value) const {
    if (plan.whole_planes) {
      // Slot s is the run's s-th position (channels-last: the s / lanes-th position's lane s %
      // lanes).
      const int L = kLanes ? plan.lanes : 1;
      const int n = plan.planes * plan.positions * L;
      const int in_tensor = planes_in_tensor(t) * plan.positions;
      T* run = dx + (kLanes ? t.outer0 * g.in_plane * grid.lanes_total + t.c0 : t.outer0 * g.in_plane);
      for (int s = tid; s < n; s += plan.threads) {
        const A v = value(s);
        int lane;
        const int at = split_lane(s, &lane);
        if (at < in_tensor && (!kLanes || t.c0 + lane < grid.lanes_total))
          run[kLanes ? at * grid.lanes_total + lane : at] = from_accum<T>(v);
      }
      return;
    }
    const int L = kLanes ? plan.lanes : 1;
    const int cols = plan.tile[2] * L, rows = plan.planes * plan.tile[0] * plan.tile[1];
    each_column(cols, tid, [&](int first_row, int row_step, int col) {
      int lane;
      Idx i[kAxes] = {0, 0, t.i0[2] + split_lane(col, &lane)};
      const Idx c = t.c0 + lane;
      const bool col_in = i[2] < g.in[2] && (!kLanes || c < grid.lanes_total);
      for (int r = first_row; r < rows; r += row_step) {
        int plane, z, y;
        split_row(r, plan.tile[0], plan.by_tile[1], plan.by_tile[0], &plane, &z, &y);
        i[0] = t.i0[0] + z;
        i[1] = t.i0[1] + y;
        const Idx q = t.outer0 + plane;
        const A v = value(r * cols + col);
        if (col_in && q < grid.outer && i[1] < g.in[1] && (A0 > 0 || i[0] < g.in[0]))
          dx[(q * g.in_plane + in_lin(g, i)) * grid.lanes_total + c] = from_accum<T>(v);
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
};

// The widest lane pack of kLanePacks a channels-last window run of `plan` can read (walk_lane_packs_as):
// the problem is 1D or 2D (MaxTileWalk::kReadsLanePacks), the pack divides the lane tile, the
// lane tile divides C (no pack is partly past C), and dy and the indices are aligned for a pack's
// access. 1 otherwise (one lane at a time).
inline constexpr int kLanePacks[] = {4, 2};

// Whether ptr is aligned for one Pack of `bytes` (a Pack's alignment: its size, at most 16): the
// lane packs here and max.scatter.tiled's quads.
inline bool aligned_to(const void* ptr, size_t bytes) {
  return reinterpret_cast<uintptr_t>(ptr) % (bytes < 16 ? bytes : 16) == 0;
}
inline int max_tile_lane_pack(const Problem& p, const MaxTileShape& plan, const BwdBuffers& b) {
  if (p.layout != Layout::channels_last || !plan.window_run || !leading_axis_trivial(p) || p.c % plan.lanes != 0) return 1;
  for (const int v : kLanePacks)
    if (plan.lanes % v == 0 && aligned_to(b.dy, v * dtype_size(p.dtype)) && aligned_to(b.indices, v * index_type_size(p.index_type)))
      return v;
  return 1;
}

// Whether dy, the indices and dx of p lie aligned for one access per quad of a channels-first
// window run (MaxTileWalk::quad_access).
inline bool window_quad_access(const Problem& p, const BwdBuffers& b) {
  const size_t quad = 4;
  return aligned_to(b.dy, quad * dtype_size(p.dtype)) && aligned_to(b.dx, quad * dtype_size(p.dtype)) &&
         aligned_to(b.indices, quad * index_type_size(p.index_type));
}

// The walk's fields of a Block deriving from MaxTileWalk, for problem p and plan; *tiles: how
// many tiles the grid has.
template <class Block>
Block make_max_tile_block(const Problem& p, const decltype(Block::plan)& plan, const BwdBuffers& b, int64_t* tiles) {
  using T = typename Block::Value;
  using Idx = typename Block::Index;
  Block blk;
  blk.g = make_max_geom<Idx>(p, 1);
  blk.plan = plan;
  blk.grid = make_tile_grid<Idx>(p, plan.planes, plan.lanes, plan.tile, tiles);
  blk.plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
  blk.lane_pack = Block::kReadsLanePacks ? max_tile_lane_pack(p, plan, b) : 1;
  blk.quad_access = window_quad_access(p, b);
  for (int a = 0; a < kAxes; ++a) {
    Idx unused;
    covering(blk.g, a, Idx{0}, &blk.plane_o0[a], &unused);
  }
  blk.dy = static_cast<const T*>(b.dy);
  blk.indices = b.indices;
  blk.dx = static_cast<T*>(b.dx);
  return blk;
}

// Tiles a CPU block runs in turn, as a GPU block runs tiles blockIdx.x, + gridDim.x, ...: what a
// block leaves in shared memory for its next tile is fuzzed too (a GPU grid has one block per
// tile below 2^20 tiles).
inline constexpr int64_t kMaxTiledCpuTilesPerBlock = 3;

// A Block has frame(tile, smem), start(frame, tid) (once, before its first tile) and kPhases
// phases phase(i, frame, tid); every thread finishes a phase before any starts the next.
template <class Block>
struct MaxTilesOnCpu {
  Block block;
  typename Block::Index tiles, blocks;
  void operator()(typename Block::Index block_id) const {
    alignas(16) unsigned char smem[kMaxTiledSmemBytes];
    auto every_thread = [&](auto phase) {
      for (int t = 0; t < block.plan.threads; ++t) phase(t);
    };
    const auto first = block.frame(block_id, smem);
    every_thread([&](int t) { block.start(first, t); });
    for (auto tile = block_id; tile < tiles; tile += blocks) {
      const auto f = block.frame(tile, smem);
      for (int i = 0; i < Block::kPhases; ++i) every_thread([&](int t) { block.phase(i, f, t); });
    }
  }
};

template <class Block>
void run_max_tiles(const CpuExec& ex, const Block& block, int64_t tiles) {
  using Idx = typename Block::Index;
  const int64_t blocks = (tiles + kMaxTiledCpuTilesPerBlock - 1) / kMaxTiledCpuTilesPerBlock;
  ex.template for_each<Idx>(blocks, MaxTilesOnCpu<Block>{block, static_cast<Idx>(tiles), static_cast<Idx>(blocks)});
}

#if PG_GPU_COMPILER

// The blocks a multiprocessor must hold, registers capped to fit them: a Block's
// kMinBlocksPerSm where it has one, else 0 (the thread bound only).
template <class Block>
constexpr int min_blocks_per_sm() {
  if constexpr (requires { Block::kMinBlocksPerSm; }) return Block::kMinBlocksPerSm;
  return 0;
}

template <class Block, class Idx>
__global__ void PG_LAUNCH_BOUNDS(kMaxTiledThreads, min_blocks_per_sm<Block>()) max_tiles_kernel(Block block, Idx tiles) {
  extern __shared__ double max_tile_smem[];
  const int tid = threadIdx.x;
  unsigned char* smem = reinterpret_cast<unsigned char*>(max_tile_smem);
  block.start(block.frame(blockIdx.x, smem), tid);
  __syncthreads();  // start() before the first tile's first phase, which may use what it sets
  for (Idx t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto f = block.frame(t, smem);
    // The last barrier orders the next tile's first phase after this tile's reads.
#pragma unroll
    for (int i = 0; i < Block::kPhases; ++i) {
      block.phase(i, f, tid);
      __syncthreads();
    }
  }
}

template <class Block>
void run_max_tiles(const GpuExec& ex, const Block& block, int64_t tiles) {
  using Idx = typename Block::Index;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
  max_tiles_kernel<Block, Idx><<<grid, kMaxTiledThreads, block.plan.bytes, ex.stream>>>(block, static_cast<Idx>(tiles));
  PG_LAUNCH_CHECK("max_tiles_kernel");
}

#endif

// The fuzz sizes every tiled variant draws on the CPU backend's budget: several tiles with a
// partial last one along every axis, several planes per tile, C split into lane tiles.
inline Domain max_tile_domain() {
  Domain d;
  d.reach[0] = 8;
  d.reach[1] = 14;
  d.reach[2] = 60;
  d.max_channels = 12;
  return d;
}

// supports() of a tiled variant: whether plan_for (the variant's plan function) finds a tile within
// the GPU's shared memory; `why` says what rules the problem out when it does not.
template <class Plan, class PlanFor>
Support max_tile_support(const Problem& p, PlanFor plan_for, const char* why) {
  Plan plan;
  if (!plan_for(p, p.dtype == DType::f64 ? 8 : 4, MaxTileBudget{kMaxTiledSmemBytes, 1, 1, 1, 1}, &plan)) return Support::no(why);
  return Support::yes();
}

// launch_with of a tiled variant named `name`: Block<T, Idx, A0, kLanes> over the tiles plan_for
// shapes within the backend's budget, after setup(block) sets what the variant adds to the walk's
// fields.
template <template <class, class, int, bool> class Block, class Exec, class PlanFor, class Setup>
void launch_max_tiles(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width, const char* name,
                      PlanFor plan_for, Setup setup) {
  dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
    decltype(Block<T, Idx, A0, false>::plan) plan;
    const MaxTileBudget& budget = Exec::is_gpu ? kMaxTiledGpuBudget : kMaxTiledCpuBudget;
    if (!plan_for(p, sizeof(accum_t<T>), budget, &plan)) throw Error(std::string(name) + ": no tile fits");
    with_bit(p.layout == Layout::channels_last, [&]<int kLanes>() {
      int64_t tiles;
      auto block = make_max_tile_block<Block<T, Idx, A0, kLanes == 1>>(p, plan, b, &tiles);
      setup(block);
      if (tiles > 0) run_max_tiles(ex, block, tiles);
    });
  });
}

}  // namespace pg
