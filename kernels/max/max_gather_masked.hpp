// max.gather.masked: max-pool backward from stored indices for every window (any kernel, stride,
// dilation, padding) whose covering box holds at most 256 windows, both layouts, every index
// format and type, over shared-memory tiles, at a cost per dx element that follows the windows
// naming it, not the windows covering it.
//
// Why: max.gather.counted finds the windows naming a shared position by comparing every window
// of the position's covering box (169 compares a position on YOLO's SPP k13, one thread each,
// while the block's other warps wait at the barrier: bench/results/2026-12-02_h200_counted_quads.md).
// But a window that names a position knows where it stands in that position's box: along each
// axis it is the off-th window covering the position, off = (reach - u) / stride with u the
// named tap's offset in the window's span. So a block, on the tiles and window walk of
// max_tile_walk.hpp,
//   1. loads once the windows that cover the tile, keeps each one's dy, and sets bit off (row-
//      major over the box) of the position it names in that position's mask: a shared-memory
//      atomic OR, whose result does not depend on the order the windows arrive in;
//   2. writes dx once, coalesced: per position, the dy of the windows whose bits are set, summed
//      in ascending bit order, which is row-major window order. A position no window names costs
//      one load of its mask; one named by m windows costs m adds, not a scan of its box.
// Deterministic and bitwise equal to the other deterministic variants: each sum runs in row-major
// window order in the accumulator type from zero. No atomics in global memory, each dx element
// written once, two barriers a tile (counted has three).
//
// Not yet timed on a GPU (2026-12-05: no device was lent). What the counts predict
// (bench/probes/masked_work.py, bench/results/2026-12-05_cpu_masked.md): a warp's write runs as
// many iterations as the most-named of its 32 positions, 0.5-0.9 per dx element on YOLO's SPP
// against 0.08-0.18 for counted's compacted box scans, so masked should lose to counted there;
// its smaller arrays (a window 4 bytes, a position 4 bytes a mask word; counted's 8 and 12) give
// 3D k3 tiles less halo. Keep it only if a GPU measurement finds a row it wins.
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kMaxTiledCpuBudget), so fuzz-sized problems span several tiles, planes and lane tiles, with
// boxes of one to eight mask words.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/common/exec.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// The most windows a position's covering box may hold: its mask is this many bits at most (eight
// 32-bit words), and a block keeps one window offset per bit.
inline constexpr int kMaskedMaxBits = 256;
inline constexpr int kMaskWordBits = 32;

// A tile shape, and the box of windows that can cover one position: box[a] windows along axis a
// (reach / stride + 1), bits = their product, words per position mask.
struct MaxMaskedShape : MaxTileShape {
  int box[kAxes];
  int bits, words;
  size_t rel_bytes;  // the per-bit window offsets at the front of shared memory
};

// The covering box of p, or false when it holds more than kMaskedMaxBits windows.
inline bool masked_box(const Problem& p, int* box, int* bits) {
  int64_t n = 1;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t along = p.dilation[a] * (p.kernel[a] - 1) / p.stride[a] + 1;
    n *= along;
    if (n > kMaskedMaxBits) return false;
    box[a] = static_cast<int>(along);
  }
  *bits = static_cast<int>(n);
  return true;
}

// Per laid-out window its dy; per tile position `words` mask words; before them the window offset
// of every bit of the box.
inline bool plan_max_masked(const Problem& p, size_t accum_size, const MaxTileBudget& budget, MaxMaskedShape* plan) {
  MaxMaskedShape q{};
  if (!masked_box(p, q.box, &q.bits)) return false;
  q.words = (q.bits + kMaskWordBits - 1) / kMaskWordBits;
  q.rel_bytes = static_cast<size_t>((q.bits * static_cast<int>(sizeof(int)) + 15) / 16 * 16);
  MaxTileBudget arrays = budget;
  arrays.bytes -= q.rel_bytes;
  if (!shape_max_tiles(p, MaxTileBytes{accum_size, q.words * sizeof(uint32_t)}, arrays, &q)) return false;
  cap_planes_to_one_round(budget, &q);
  q.bytes += q.rel_bytes;
  *plan = q;
  return true;
}

// The lowest set bit of a non-zero word.
PG_HD int lowest_bit(uint32_t m) {
#if PG_DEVICE_PASS
  return __ffs(static_cast<int>(m)) - 1;
#else
  return std::countr_zero(m);
#endif
}

// The work of one block on one tile, as two phases for plan.threads cooperating threads.
template <class T, class Idx, int A0, bool kLanes>
struct MaxMaskedBlock : MaxTileWalk<T, Idx, A0, kLanes, MaxMaskedShape> {
  using Walk = MaxTileWalk<T, Idx, A0, kLanes, MaxMaskedShape>;
  using typename Walk::A;
  using Walk::g;
  using Walk::plan;
  static constexpr int kPhases = 2;
  // As max.gather.counted's bound: five blocks of 256 threads with 32-bit index arithmetic.
  static constexpr int kMinBlocksPerSm = sizeof(Idx) == 4 ? 5 : 0;

  struct Frame : MaxTileOrigin<Idx> {
    const int* rel;  // per bit of the box: the window's slot offset from the box's first window
    A* grad;         // per laid-out window and lane: its dy
    uint32_t* mask;  // per mask word, per tile position and lane: the bits of the windows naming it
  };

  PG_HD int positions() const { return plan.planes * plan.positions * (kLanes ? plan.lanes : 1); }

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    static_cast<MaxTileOrigin<Idx>&>(f) = this->origin(tile_id);
    f.rel = reinterpret_cast<const int*>(smem);
    f.grad = reinterpret_cast<A*>(smem + plan.rel_bytes);
    f.mask = reinterpret_cast<uint32_t*>(f.grad + plan.planes * plan.windows * (kLanes ? plan.lanes : 1));
    return f;
  }

  // Before the first tile: the window offset of every bit, and every mask clear (each tile's
  // write leaves them so).
  PG_HD void start(const Frame& f, int tid) const {
    const int L = kLanes ? plan.lanes : 1;
    int* rel = const_cast<int*>(f.rel);
    for (int b = tid; b < plan.bits; b += plan.threads) {
      const int x = b % plan.box[2], rest = b / plan.box[2];
      const int y = rest % plan.box[1], z = rest / plan.box[1];
      rel[b] = ((z * plan.lay[1] + y) * plan.lay[2] + x) * L;
    }
    const int n = plan.words * positions();
    for (int i = tid; i < n; i += plan.threads) f.mask[i] = 0;
  }

  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) load(f, tid);
    else write(f, tid);
  }

  // Laid-out slot s (or tile position slot s, with `by` the tile's dividers): its plane, its
  // coordinates along each axis from A0 (relative to the tile's first window or position), its lane.
  PG_HD int split_slot(int s, const int* extent, const Divider<int32_t>* by, int* at, int* lane) const {
    int rest = this->split_lane(s, lane);
    for (int a = kAxes - 1; a >= A0; --a) {
      const int next = by[a].div(rest);
      at[a] = rest - next * extent[a];
      rest = next;
    }
    return rest;
  }

  // Phase 1: per laid-out window and lane its dy; per named position the window's bit.
  PG_HD void load(const Frame& f, int tid) const {
    const int n = positions();
    this->walk_windows(f, tid, [&](int slot, int named, A grad) {
      f.grad[slot] = grad;
      if (named < 0) return;
      int w[kAxes] = {0, 0, 0}, l[kAxes] = {0, 0, 0}, lane;
      split_slot(slot, plan.lay, plan.by_lay, w, &lane);
      split_slot(named, plan.tile, plan.by_tile, l, &lane);
      int bit = 0;
#pragma unroll
      for (int a = A0; a < kAxes; ++a) {
        // The named tap's offset in the window's span, and so the window's place among those
        // covering the position.
        const Idx u = (f.i0[a] + l[a]) + g.pb[a] - (f.o0[a] + w[a]) * g.s[a];
        bit = bit * plan.box[a] + static_cast<int>(g.s_div[a].div(g.reach[a] - u));
      }
      atomic_or(&f.mask[(bit / kMaskWordBits) * n + named], uint32_t{1} << (bit % kMaskWordBits));
    });
  }

  // The laid-out slot of the first window of position `slot`'s covering box (it may lie outside
  // the layout: only slots of windows that named the position are read from it).
  PG_HD int box_origin(const Frame& f, int slot) const {
    int l[kAxes] = {0, 0, 0}, lane;
    const int plane = split_slot(slot, plan.tile, plan.by_tile, l, &lane);
    int at = plane;
#pragma unroll
    for (int a = 0; a < kAxes; ++a) {
      int first = 0;
      if (a >= A0) {
        // The first window whose span reaches the position: ceil((i + pad - reach) / stride).
        const Idx x = f.i0[a] + l[a] + g.pb[a] - g.reach[a];
        const Idx o = x >= 0 ? g.s_div[a].div(x + g.s[a] - 1) : -g.s_div[a].div(-x);
        first = static_cast<int>(o - f.o0[a]);
      }
      at = at * plan.lay[a] + first;
    }
    return at * (kLanes ? plan.lanes : 1) + lane;
  }

  // Phase 2: dx of the tile, coalesced; every mask left clear for the next.
  PG_HD void write(const Frame& f, int tid) const {
    const int n = positions();
    this->write_tile(f, tid, [&](int slot) {
      A acc = A(0);
      int origin = 0;
      bool located = false;
      for (int w = 0; w < plan.words; ++w) {
        uint32_t m = f.mask[w * n + slot];
        if (m == 0) continue;
        f.mask[w * n + slot] = 0;
        if (!located) {
          origin = box_origin(f, slot);
          located = true;
        }
        const int* rel = f.rel + w * kMaskWordBits;
        while (m != 0) {
          acc += f.grad[origin + rel[lowest_bit(m)]];
          m &= m - 1;
        }
      }
      return acc;
    });
  }
};

struct MaxGatherMasked : MaxVariant<MaxGatherMasked> {
  static constexpr PoolTraits traits{
      .name = "max.gather.masked", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every window, layout, dtype, index format and type whose covering box holds at most 256
  // windows and whose one-position tile fits in shared memory (supports()). Sizes for the fuzz
  // as max.gather.counted's: several tiles with a partial last one along every axis, several
  // planes per tile, C split into lane tiles; a wide kernel on one axis in three draws, so that
  // boxes of several mask words come up (1% of the draws at the default one in ten).
  static Domain domain() {
    Domain d = max_tile_domain();
    d.wide_kernel_one_in = 3;
    return d;
  }

  static Support supports(const Problem& p) {
    int box[kAxes], bits;
    if (!masked_box(p, box, &bits)) return Support::no("window: a position's covering box holds more than 256 windows");
    return max_tile_support<MaxMaskedShape>(p, plan_max_masked, "window reach too large for a 48 KiB shared-memory tile");
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    launch_max_tiles<MaxMaskedBlock>(ex, p, b, width, traits.name, plan_max_masked, [](auto&) {});
  }
};

}  // namespace pg
