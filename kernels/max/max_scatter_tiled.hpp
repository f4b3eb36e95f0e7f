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
//      shared-memory atomic add; where consecutive windows along W often name one position
//      (combines_along_w), a warp first sums the dy of its lanes that name the same position;
//   2. writes the tile to dx once, coalesced, and leaves it zero for its next tile.
// Shared memory holds one accumulator per tile position and none per window, so a tile is all of
// a small plane at any window size. Not bitwise repeatable (the adds' order varies; the values
// summed and the oracle's bound do not), no atomics in global memory, each dx element written
// once, no zeroing pass over dx.
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kMaxTiledCpuBudget), so fuzz-sized problems span several tiles, planes and lane tiles. It has
// no warps and adds window by window: the combining runs on NVIDIA GPUs only, where the GPU fuzz
// and MaxKernels.ScatterTiledCombinesLanesNamingOnePosition reach it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// Accumulators past the end of a channels-first window run's tile: its quads of four positions
// start where dx's do, up to three slots before the tile's first position, and end up to three
// past its last (MaxScatterTiledBlock::write_quads).
inline constexpr int kScatterQuadPad = 8;

// Per tile position one accumulator; nothing per window. Every plan leaves room for the quads'
// padding, whether it takes it or not.
inline bool plan_max_scatter_tiled(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxTileShape* plan) {
  MaxTileBudget room = budget;
  room.bytes -= kScatterQuadPad * accum_size;
  if (!shape_max_tiles(p, MaxTileBytes{0, accum_size}, room, plan)) return false;
  cap_planes_to_one_round(budget, plan);
  if (plan->window_run && p.layout == Layout::channels_first) plan->bytes += kScatterQuadPad * accum_size;
  return true;
}

// Whether a block's warps combine the adds of consecutive lanes that name the same position
// before they add to shared memory. A shared-memory float add is a compare-and-swap loop that
// runs once per lane naming the slot. In channels-first tiles a warp's lanes read consecutive
// windows along W, and where at least five of them hold each position (undilated, kernel_w at
// least 5 * stride_w: YOLO's SPP and SPPF) their maxima come in runs of lanes: combined, SPP
// k5/k9/k13 went 56.0/82.6/111.4 -> 48.2/48.7/49.4 us and SPPF 104.5 -> 96.5 (H200, 2026-11-29).
// Elsewhere the combining (a shuffle, a vote and five shuffled adds per window) costs more than
// the loops it saves: k3 stride-1 rows 3-13% slower, AlexNet's k3s2 27%, channels-last rows
// (lanes are channels there, never combined) 1-15%.
inline bool combines_along_w(const Problem& p) {
  return p.layout == Layout::channels_first && p.dilation[2] == 1 && p.kernel[2] >= 5 * p.stride[2];
}

// The work of one block on one tile, as two phases for plan.threads cooperating threads.
// Channels-last window runs read one lane at a time: reading them in packs (MaxTileWalk's
// kLanePacks, as max.gather.tiled does) was measured and dropped, SPPF CL f16 47.2 -> 60.5 us,
// k3s1 CL f32 (32,192,28,28) 42.1 -> 57.8, k3s1 CL bf16 (32,256,14,14) 14.7 -> 17.8 (H200,
// 2026-12-02, bench/results/2026-12-02_h200_scatter_quads.md): a warp then adds 32 consecutive
// windows' lanes at once, which meet on the same positions' slots far more often.
template <class T, class Idx, int A0, bool kLanes>
struct MaxScatterTiledBlock : MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape> {
  using Walk = MaxTileWalk<T, Idx, A0, kLanes, MaxTileShape>;
  using typename Walk::A;
  using Walk::plan;
  using Walk::kQuad;
  static constexpr int kPhases = 2;
  // With 32-bit index arithmetic, registers capped at 48 so that five blocks of 256 threads fit
  // a multiprocessor (uncapped, the combining body took 64: four blocks). Measured only together
  // with combines_along_w, against an uncapped body that combined on every problem (H200,
  // 2026-11-29, bench/results/2026-11-29_h200_scatter_tiled.md): the SPP rows, which combine in
  // both, did not move; I3D's 1x3x3 gained 14%, two 3D channels-last rows lost 15-18%.
  static constexpr int kMinBlocksPerSm = sizeof(Idx) == 4 ? 5 : 0;
  bool combine = false;  // combines_along_w: lanes naming the same slot add once

  struct Frame : MaxTileOrigin<Idx> {
    A* sum;    // per tile position and lane (walk_windows' slots): the dy of the windows naming it
    int lead;  // quads: the tile's first position within its quad of dx; sum starts that far into shared memory
  };

  // Channels-first window runs go by quads (scatter_quads, write_quads).
  PG_HD bool by_quads() const { return !kLanes && plan.window_run; }

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    static_cast<MaxTileOrigin<Idx>&>(f) = this->origin(tile_id);
    f.lead = by_quads() ? static_cast<int>((f.outer0 * this->g.in_plane) % kQuad) : 0;
    f.sum = reinterpret_cast<A*>(smem) + f.lead;
    return f;
  }

  // Before the first tile: every sum zero, the quads' padding too (each tile's write leaves them
  // so).
  PG_HD void start(const Frame& f, int tid) const {
    A* slots = f.sum - f.lead;
    const int n = plan.planes * plan.positions * plan.lanes + (by_quads() ? kScatterQuadPad : 0);
    for (int i = tid; i < n; i += plan.threads) slots[i] = A(0);
  }

  // sum[named] += grad, atomically; named < 0: no add. With `combine`, on NVIDIA GPUs, the lanes
  // of a warp that name the same slot in consecutive lanes add once (see combines_along_w).
  PG_HD void add(A* sum, int named, A grad) const {
#if defined(__CUDA_ARCH__)
    // Channels-last bodies never combine (their lanes are channels) and are built without it.
    if (kLanes || !combine) {
      if (named >= 0) atomicAdd(sum + named, grad);
      return;
    }
    const unsigned active = __activemask();
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int before = __shfl_up_sync(active, named, 1);
    const bool head = lane == 0 || before != named || ((active >> (lane - 1)) & 1u) == 0;
    // A run ends at the next head or inactive lane: every lane's run is within the active ones.
    const unsigned heads = __ballot_sync(active, head) | ~active;
    if (heads != ~0u) {
      const unsigned after = heads & ~((2u << lane) - 1u);  // heads past this lane (lane 31: none)
      const int end = after != 0 ? __ffs(static_cast<int>(after)) - 1 : 32;
      // A segmented suffix sum: after the step of offset d a lane holds its run's next 2d values.
      for (int d = 1; d < 32; d *= 2) {
        const A next = __shfl_down_sync(active, grad, d);
        if (lane + d < end) grad += next;
      }
    }
    if (head && named >= 0) atomicAdd(sum + named, grad);
#else
    if (named >= 0) atomic_add(sum + named, grad);
#endif
  }

  // Channels-first window runs: quads of four consecutive windows a thread (scatter_quads),
  // and the tile written back in quads of four positions (write_quads).
  PG_HD void phase(int i, const Frame& f, int tid) const {
    const bool quads = by_quads();
    if (i == 0) {
      // Sums start from +0, as every variant's: a lone -0 dy gives +0.
      if (quads) return scatter_quads(f, tid);
      this->walk_windows(f, tid, [&](int, int named, A grad) { add(f.sum, named, grad); });
    } else {
      if (quads) return write_quads(f, tid);
      this->write_tile(f, tid, [&](int slot) {
        const A v = f.sum[slot];
        f.sum[slot] = A(0);
        return v;
      });
    }
  }

  // Channels-first window runs: quads of four consecutive windows a thread (MaxTileWalk's
  // walk_window_quads). A thread's four windows are consecutive along W, so where they name one
  // position (often, for a window five or more strides wide) they are summed in registers before
  // they add: each run of the quad adds once, at its last window; the quad's last run may go on
  // in the next lanes' quads, and the warps' combining sees it.
  PG_HD void scatter_quads(const Frame& f, int tid) const {
    this->walk_window_quads(f, tid, [&](int, int (&named)[kQuad], A (&sum)[kQuad]) {
#pragma unroll
      for (int v = 0; v + 1 < kQuad; ++v) {
        if (named[v] >= 0 && named[v] == named[v + 1]) {
          sum[v + 1] += sum[v];
          named[v] = -1;
        }
      }
#pragma unroll
      for (int v = 0; v + 1 < kQuad; ++v)
        if (named[v] >= 0) atomic_add(f.sum + named[v], sum[v]);
      add(f.sum, named[kQuad - 1], sum[kQuad - 1]);
    });
  }

  // The tile's positions [first, first + in_tensor) of dx, in the quads that hold them. Shared
  // memory holds them shifted by the tile's lead, so that a quad's four slots are one aligned
  // access too: one shared-memory read and one zeroing store a quad, where four slots a thread
  // four apart met in the same bank four ways (GoogLeNet's k3s1 3% and AlexNet's k3s2 14% slower
  // than one position a thread, H200, 2026-12-02). Every slot a quad holds is left zero for the
  // next tile: those of other tiles' positions and the padding were zero and get no adds here.
  PG_HD void write_quads(const Frame& f, int tid) const {
    const int in_tensor = this->planes_in_tensor(f) * plan.positions;
    const Idx first = f.outer0 * this->g.in_plane;
    const Idx q0 = first / kQuad;
    const int quads = this->quad_count(first, in_tensor);
    A* slots = f.sum - f.lead;  // slot kQuad * k + v: the tile's position kQuad * k + v - lead
    for (int k = tid; k < quads; k += plan.threads) {
      const Idx at = (q0 + k) * kQuad;
      const int s0 = static_cast<int>(at - first);
      const Pack<A, kQuad> sum = load_pack<kQuad>(slots, kQuad * k);
      store_pack<kQuad>(slots, kQuad * k, Pack<A, kQuad>{});
      Pack<T, kQuad> out;
#pragma unroll
      for (int v = 0; v < kQuad; ++v) out.v[v] = from_accum<T>(sum.v[v]);
      if (this->quad_access && s0 >= 0 && s0 + kQuad <= in_tensor) {
        store_pack<kQuad>(this->dx, at, out);
      } else {
#pragma unroll
        for (int v = 0; v < kQuad; ++v)
          if (s0 + v >= 0 && s0 + v < in_tensor) this->dx[at + v] = out.v[v];
      }
    }
  }
};

struct MaxScatterTiled : MaxVariant<MaxScatterTiled> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.tiled", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = false};
  // Every window, layout, dtype, index format and type (a tile of one position always fits).
  // Sizes for the fuzz as max.gather.tiled's: on the CPU backend's budget, several tiles with a
  // partial last one along every axis, several planes per tile, C split into lane tiles, and
  // small planes read as one run of windows; one free axis in three a wide kernel, so that the
  // warps' combining (combines_along_w) comes up in a few percent of the GPU fuzz's cases.
  static Domain domain() {
    Domain d = max_tile_domain();
    d.wide_kernel_one_in = 3;
    return d;
  }

  static Support supports(const Problem& p) {
    return max_tile_support<MaxTileShape>(p, plan_max_scatter_tiled, "more than 2^24 windows cover one position");
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    launch_max_tiles<MaxScatterTiledBlock>(ex, p, b, width, traits.name, plan_max_scatter_tiled,
                                           [&](auto& block) { block.combine = combines_along_w(p); });
  }
};

}  // namespace pg
