// max.gather.counted: max-pool backward from stored indices for every window (any kernel, stride,
// dilation, padding), both layouts, every index format and type, over shared-memory tiles, at a
// cost per dx element that does not grow with the window on real data.
//
// Why: max.gather.tiled's gather compares every window covering a band against every position of
// the band, ~6 warp instructions per dx element on YOLO's SPP (32-46% of the copy ceiling, issue
// bound). But max pooling concentrates its gradient: on real data 2-12% of the positions are named
// at all (a local maximum is named by most windows that hold it) and most of the rest by none
// (bench/results/2026-11-26_h100_max_counted.md has the counts). So a block, on the tiles and the
// window walk of max_tile_walk.hpp,
//   1. loads once the windows that cover the tile, keeps each one's named tile position and dy,
//      and counts per position the windows naming it (a shared-memory atomic add); the window
//      that finds a count of 0 keeps its slot, the one that finds 1 lists the position as shared;
//   2. for each listed position, one thread sums the dy of the windows that name it, visiting
//      the windows that cover it in row-major order (the threads share the list, so a position
//      named by 169 windows costs one thread 169 compares, not its warp's every thread);
//   3. writes dx once, coalesced: 0 where no window names the position, the window's dy where
//      one does, the sum where several do.
// Deterministic: counts and the one-window slot do not depend on the order of the atomic adds,
// and each sum runs in row-major window order in the accumulator type from zero, as the other
// deterministic variants sum (bitwise equal to max.gather.tiled); no atomics in global memory,
// each dx element written once. On data whose every position is named twice the listed sums
// cost what a per-element gather costs; the result is the same.
//
// 2026-11-27 (bench/results/2026-11-27_counted_lean.md, H100): a window's slot and dy side by
// side, no tap checks in the sums, 12 bytes a position, and whole-plane tiles of one load round:
// SPP k13 0.079 -> 0.072 ms, SPPF 0.127 -> 0.114, GoogLeNet's k3s1 0.124 -> 0.104. What bounds
// SPP now is a block's critical path: one thread scans a listed position's covering box while
// the block's other warps wait at the barrier.
//
// 2026-12-02 (bench/results/2026-12-02_h200_counted_quads.md, H200): channels-first window runs
// read by quads of four windows (MaxTileWalk::walk_window_quads, as max.scatter.tiled reads them),
// a quad stored with 16-byte stores and its run of windows naming one position counted once: SPP
// k5/k9/k13 55.2/63.8/70.6 -> 51.7/58.9/64.4 us, (16,1024,13,13) k9s1p4 39.4 -> 33.7. The windows
// kept as two arrays (slots, dy) instead of NamedDy were measured and dropped: the box scans'
// second load cost 3-8% on most rows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/exec.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// Shared memory beyond the per-window and per-position arrays: the count of listed positions.
inline constexpr size_t kCountedBlockBytes = 16;
// Window slots past the laid-out windows: up to 3 to round their count to a quad, 3 before the
// tile's first window and 3 past its last that its end quads store (MaxCountedBlock::load_quads),
// rounded up.
inline constexpr int kCountedQuadPad = 12;

// Per laid-out window: a NamedDy (the slot it names and its dy); per tile position: its count
// and listing (ints) and its dx (the dy of its one window, or the sum of its several).
inline bool plan_max_counted(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxTileShape* plan) {
  MaxTileBudget arrays = budget;
  arrays.bytes -= kCountedBlockBytes;
  const size_t window = accum_size == 8 ? sizeof(NamedDy<double>) : sizeof(NamedDy<float>);
  const size_t position = 2 * sizeof(int) + accum_size;
  if (!shape_max_tiles(p, MaxTileBytes{window, position}, arrays, plan)) return false;
  // Channels-first window runs are read by quads (MaxCountedBlock::by_quads), whose padding the
  // tile is shaped again to leave room for; other tiles keep every byte (a tile 96 bytes smaller
  // for all plans cost the resnet50 stem's box tiles 2%, H200, 2026-12-02).
  size_t extra = kCountedBlockBytes;
  if (plan->window_run && p.layout == Layout::channels_first) {
    arrays.bytes -= kCountedQuadPad * window;
    extra += kCountedQuadPad * window;
    if (!shape_max_tiles(p, MaxTileBytes{window, position}, arrays, plan)) return false;
  }
  cap_planes_to_one_round(budget, plan);
  plan->bytes += extra;
  return true;
}

// The work of one block on one tile, as three phases for plan.threads cooperating threads.
template <class T, class Idx, int A0, bool kLanes>
struct MaxCountedBlock : MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape> {
  using Walk = MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape>;
  using typename Walk::A;
  using Walk::g;
  using Walk::plan;
  static constexpr int kPhases = 3;
  // With 32-bit index arithmetic, five blocks of 256 threads: registers capped at 48 (a few
  // bytes spill). Uncapped, nvcc gave the 2D f32 body 64 (four blocks) once the run walk
  // switched on the index type per tile, and SPP k13 lost 10%; capped, every row measured
  // gained 2-23% over the body of before (H200, 2026-11-28,
  // bench/results/2026-11-28_h200_counted_run_walk.md). The 64-bit bodies need 128-246
  // registers and would spill kilobytes under the cap, so they keep the thread bound only.
  static constexpr int kMinBlocksPerSm = sizeof(Idx) == 4 ? 5 : 0;

  // Where a tile lies and how shared memory is carved; each thread computes its own copy. Slots
  // of windows and of positions are walk_windows'.
  struct Frame : MaxTileOrigin<Idx> {
    NamedDy<A>* window;  // per laid-out window and lane: the position slot it names, or -1, and its dy
    A* one;              // per position: the dy of its one window, or the sum of its several
    int* count;          // per position: how many windows name it
    int* shared;         // the positions named by several windows, *listed of them
    int* listed;
  };

  // Channels-first window runs are read by quads (load_quads); plan_max_counted left room for
  // their padding.
  PG_HD bool by_quads() const { return !kLanes && plan.window_run; }

  // The windows start 16-byte aligned, for quads padded and shifted by the tile's lead, so that a
  // quad's four slots are aligned 16-byte stores.
  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    static_cast<MaxTileOrigin<Idx>&>(f) = this->origin(tile_id);
    const int windows = plan.planes * plan.windows * plan.lanes, positions = plan.planes * plan.positions * plan.lanes;
    const bool quads = by_quads();
    const int room = quads ? (windows + Walk::kQuad - 1) / Walk::kQuad * Walk::kQuad + kCountedQuadPad - Walk::kQuad : windows;
    const int lead = quads ? this->quad_lead(f) : 0;
    NamedDy<A>* window = reinterpret_cast<NamedDy<A>*>(smem);
    f.window = window + lead;
    f.one = reinterpret_cast<A*>(window + room);
    f.count = reinterpret_cast<int*>(f.one + positions);
    f.shared = f.count + positions;
    f.listed = f.shared + positions;
    return f;
  }

  // Before the first tile: no position counted, none listed (each tile's write leaves it so).
  PG_HD void start(const Frame& f, int tid) const {
    for (int i = tid; i < plan.planes * plan.positions * plan.lanes; i += plan.threads) f.count[i] = 0;
    if (tid == 0) *f.listed = 0;
  }

  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) load(f, tid);
    else if (i == 1) sum_shared(f, tid);
    else write(f, tid);
  }

  // Phase 1: per laid-out window and lane, the position it names and its dy; per position, the
  // count of windows naming it, the dy of its one window where one names it (from zero, as every
  // sum starts: a -0 dy gives +0), and the list of shared ones.
  PG_HD void load(const Frame& f, int tid) const {
    if (by_quads()) return load_quads(f, tid);
    this->walk_windows(f, tid, [&](int slot, int named, A grad) {
      f.window[slot] = NamedDy<A>{named, grad};
      if (named >= 0) count(f, named, 1, grad);
    });
  }

  // m more windows name position `named`; grad: the dy of the one where m is 1. The window that
  // finds a count of 0 keeps its dy; the first to bring the count to 2 or more lists the position.
  // Which does depends on the order of the adds, what they leave does not.
  PG_HD void count(const Frame& f, int named, int m, A grad) const {
    const int before = atomic_fetch_add(&f.count[named], m);
    if (before == 0 && m == 1) f.one[named] = A(0) + grad;
    if (before < 2 && before + m >= 2) f.shared[atomic_fetch_add(f.listed, 1)] = named;
  }

  // load for channels-first window runs, a quad of four windows a thread (walk_window_quads: one
  // access of dy and one or two of the indices a quad, three windows of four located without
  // divisions), each quad stored with 16-byte stores. The windows of a quad that name one
  // position (consecutive along W: most of them on YOLO's SPP) count once.
  // Slots outside the tile's windows (its end quads' other windows, -1) are padding or windows of
  // no tensor's plane, which no sum reads.
  PG_HD void load_quads(const Frame& f, int tid) const {
    constexpr int Q = Walk::kQuad;
    this->walk_window_quads(f, tid, [&](int s0, int (&named)[Q], A (&grad)[Q]) {
      Pack<NamedDy<A>, Q> quad;
#pragma unroll
      for (int v = 0; v < Q; ++v) quad.v[v] = NamedDy<A>{named[v], grad[v]};
      store_pack<Q>(f.window, s0, quad);
      int run = 1;
#pragma unroll
      for (int v = 0; v < Q; ++v) {
        if (named[v] < 0) continue;
        if (v + 1 < Q && named[v + 1] == named[v]) {
          ++run;
          continue;
        }
        count(f, named[v], run, grad[v]);
        run = 1;
      }
    });
  }

  // Phase 2: per listed position, the dy of the windows naming it, summed in row-major window
  // order over the windows that cover it. A window names a position only if the position is one
  // of its taps (the walk checks), so the sum need not check taps: it compares every window of
  // the covering box, but skips a dilated D or H row of which the position is no tap (a division
  // saves a row of compares).
  PG_HD void sum_shared(const Frame& f, int tid) const {
    const int L = kLanes ? plan.lanes : 1;
    const int n = *f.listed;
    for (int k = tid; k < n; k += plan.threads) {
      const int at = f.shared[k];
      int rest = at, lane = 0;
      if constexpr (kLanes) {
        rest = plan.by_lanes.div(at);
        lane = at - rest * L;
      }
      int local[kAxes];
      for (int a = kAxes - 1; a >= 0; --a) {
        const int next = plan.by_tile[a].div(rest);
        local[a] = rest - next * plan.tile[a];
        rest = next;
      }
      const int plane = rest;
      Idx lo[kAxes], hi[kAxes], i[kAxes];
      for (int a = 0; a < kAxes; ++a) {
        i[a] = f.i0[a] + local[a];
        covering(g, a, i[a], &lo[a], &hi[a]);
      }
      const bool dense[2] = {g.d[0] == 1, g.d[1] == 1};
      const auto holds = [&](int a, Idx o) { return dense[a] || tap_along(g, a, i[a], o) >= 0; };
      // The box's rows are laid-out rows plan.lay[2] * L slots apart, its D slices
      // plan.lay[1] rows apart: a pointer steps from one to the next.
      const int row_slots = plan.lay[2] * L, slice_slots = plan.lay[1] * row_slots;
      const int across = static_cast<int>(hi[2] - lo[2]) + 1;
      const int first_row = (plane * plan.lay[0] + static_cast<int>(lo[0] - f.o0[0])) * plan.lay[1] + static_cast<int>(lo[1] - f.o0[1]);
      const NamedDy<A>* slice = f.window + first_row * row_slots + static_cast<int>(lo[2] - f.o0[2]) * L + lane;
      A acc = A(0);
      for (Idx oz = lo[0]; oz <= hi[0]; ++oz, slice += slice_slots) {
        if (!holds(0, oz)) continue;
        const NamedDy<A>* row = slice;
        for (Idx oy = lo[1]; oy <= hi[1]; ++oy, row += row_slots) {
          if (!holds(1, oy)) continue;
          const NamedDy<A>* w = row;
          for (int x = 0; x < across; ++x, w += L)
            if (w->named == at) acc += w->grad;
        }
      }
      f.one[at] = acc;
    }
  }

  // Phase 3: dx of the tile, coalesced; every count left zero and the list empty for the next.
  PG_HD void write(const Frame& f, int tid) const {
    this->write_tile(f, tid, [&](int slot) {
      const int n = f.count[slot];
      f.count[slot] = 0;
      return n == 0 ? A(0) : f.one[slot];
    });
    if (tid == 0) *f.listed = 0;
  }
};

struct MaxGatherCounted : MaxVariant<MaxGatherCounted> {
  static constexpr PoolTraits traits{
      .name = "max.gather.counted", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every window, layout, dtype, index format and type whose one-position tile fits in shared
  // memory (supports()). Sizes for the fuzz as max.gather.tiled's: on the CPU backend's budget,
  // several tiles with a partial last one along every axis, several planes per tile, C split
  // into lane tiles.
  static Domain domain() { return max_tile_domain(); }

  static Support supports(const Problem& p) {
    return max_tile_support<MaxTileShape>(p, plan_max_counted, "window reach too large for a 48 KiB shared-memory tile");
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    launch_max_tiles<MaxCountedBlock>(ex, p, b, width, traits.name, plan_max_counted, [](auto&) {});
  }
};

}  // namespace pg
