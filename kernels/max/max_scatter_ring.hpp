// max.scatter.ring: max-pool backward from stored indices, channels-last, for every window
// (kernel, stride, dilation, padding, ceil mode), dtype, index format and type. One thread per
// channel walks its box's windows in row-major order and adds each window's dy to the position
// its index names, in a private ring of accumulator rows; a row leaves for dx, written once,
// as soon as no later window can name it.
//
// Why: in channels-last the channels of one position are contiguous, so a warp of 32 channels
// reads each window's indices and dy as whole sectors (256 bytes of int64 indices, 64 of f16 dy)
// and writes dx the same way. The tiled gathers (max.gather.counted, .tiled) cut a channels-
// last tile into a few channels of a plane and share the positions among a block's threads, so
// on YOLO's SPPF k5 s1 (32,512,20,20) CL f16 they read a quarter of each dy sector per block and
// reached 26% of the copy ceiling (H100, 2026-11-27). A window names one position, so a thread
// that owns a channel needs no other thread: the sum of every position is the row-major order
// of the windows naming it, from zero, in the accumulator type, as every deterministic max
// variant sums (bitwise the same as max.gather.tiled). No atomics, no barrier, no zeroing pass.
//
// The swept axis is the first with a reach (dilation * (kernel - 1)) above 0; the axes before it
// have one tap per window, so an item holds one position along each. A window row along the
// swept axis names rows [o * stride - pad, + reach], so reach + 1 rows are live at a time: the
// ring. The axes after it are cut into tiles when a ring of whole rows does not fit the
// thread's shared memory, and the swept axis into bands when the grid has too few threads;
// either re-reads the windows covering the cut (the halo), from L2 when the neighbour runs
// beside it.
//
// The CPU backend runs the same item per thread with a small ring, few lanes and short bands, so
// fuzz-sized problems cut C, the swept axis and the inner axes into several pieces with a partial
// last one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/even_piece.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// How an item may grow: channels (threads) per item, shared-memory bytes of one item's rings,
// the threads a grid should reach before the swept axis is cut into bands, and the longest band.
struct MaxRingBudget {
  int lanes;
  size_t bytes;
  int64_t threads;
  int64_t band;
};
// GPU: a warp per item; 48 KiB holds one item's rings (no opt-in), so every plan launches.
inline constexpr MaxRingBudget kMaxRingGpuBudget{32, 48 * 1024, int64_t{1} << 17, int64_t{1} << 30};
// CPU: 4 channels, 48 f32 accumulators a thread, bands of at most 6 rows and a grid "short of
// threads" below 64: the fuzz's C, rows and planes come in several pieces.
inline constexpr MaxRingBudget kMaxRingCpuBudget{4, 4 * 48 * 4, 64, 6};
inline constexpr int kMaxRingCpuElems = 48;
// A band's windows re-read by its neighbours: bands are halved while the windows read along the
// swept axis stay within this factor of those one band reads.
inline constexpr double kMaxRingHalo = 1.5;
// Windows a thread reads before it adds any: the walk waits on memory once per batch. A batch keeps
// an index and a dy per window in registers; the cursors recompute the windows' coordinates.
inline constexpr int kMaxRingLoadBatch = 32;
// GPU block: up to this many items (warps) whose rings share 48 KiB.
inline constexpr int kMaxRingWarps = 8;

struct MaxRingPlan {
  int sweep;              // the swept axis
  int lanes;              // channels (threads) per item
  int ring;               // rows of the ring
  int tile[kAxes];        // an item's box: 1 before the swept axis, the band along it, a tile after
  int64_t count[kAxes];   // boxes along each axis
  int inner;              // positions of one ring row: the product of tile after the swept axis
  int ring_elems;         // ring * inner: a thread's accumulators
  int64_t groups;         // channel groups of `lanes`
  int64_t items;          // N * groups * boxes
  int warps;              // GPU: items per block
  size_t bytes;           // GPU: shared memory of a block
};

namespace max_ring {

// Windows along axis a that cover n positions (at most), as the tiled variants count them.
inline int64_t cover(const Problem& p, int a, int64_t n) { return max_tiled::cover(p, a, n); }

// Windows read along the swept axis when it is cut into bands of `band` rows.
inline int64_t reads(const Problem& p, int a, int64_t band) { return (p.in[a] + band - 1) / band * cover(p, a, band); }

}  // namespace max_ring

// The plan within `budget` for accumulators of accum_size bytes; false only for an empty
// problem's degenerate sizes (every problem has a plan: a one-row band of one position).
inline bool plan_max_ring(const Problem& p, size_t accum_size, const MaxRingBudget& budget, MaxRingPlan* plan) {
  MaxRingPlan q{};
  q.sweep = kAxes - 1;
  for (int a = 0; a < kAxes; ++a)
    if (p.dilation[a] * (p.kernel[a] - 1) > 0) {
      q.sweep = a;
      break;
    }
  const int s = q.sweep;
  const int64_t reach = p.dilation[s] * (p.kernel[s] - 1);
  int64_t tile[kAxes];
  for (int a = 0; a < kAxes; ++a) tile[a] = a < s ? 1 : std::max<int64_t>(p.in[a], 1);
  tile[s] = even_piece(std::max<int64_t>(p.in[s], 1), budget.band);
  const int64_t elems = static_cast<int64_t>(budget.bytes / (accum_size * static_cast<size_t>(budget.lanes)));
  const auto ring_of = [&](const int64_t* t) {
    int64_t n = std::min(reach + 1, t[s]);
    for (int a = s + 1; a < kAxes; ++a) n *= t[a];
    return n;
  };
  // Fit the ring: cut the inner axis whose cut keeps the most positions per window read, then
  // the band.
  while (ring_of(tile) > elems) {
    int best = -1;
    double best_ratio = -1;
    for (int a = s + 1; a < kAxes; ++a) {
      if (tile[a] == 1) continue;
      int t[kAxes] = {static_cast<int>(tile[0]), static_cast<int>(tile[1]), static_cast<int>(tile[2])};
      t[a] = static_cast<int>(even_piece(p.in[a], tile[a] / 2));
      const double ratio = max_tiled::positions_per_window(p, t);
      if (ratio > best_ratio) best_ratio = ratio, best = a;
    }
    if (best >= 0) tile[best] = even_piece(p.in[best], tile[best] / 2);
    else if (tile[s] > 1) tile[s] = even_piece(p.in[s], tile[s] / 2);
    else return false;
  }
  q.groups = (p.c + budget.lanes - 1) / budget.lanes;
  const auto items_of = [&](const int64_t* t) {
    int64_t n = p.n * q.groups;
    for (int a = 0; a < kAxes; ++a) n *= (std::max<int64_t>(p.in[a], 1) + t[a] - 1) / t[a];
    return n;
  };
  // Enough threads: halve the band while its halo stays small.
  const int64_t one_band = max_ring::cover(p, s, std::max<int64_t>(p.in[s], 1));
  while (items_of(tile) * budget.lanes < budget.threads && tile[s] > 1) {
    const int64_t half = even_piece(p.in[s], tile[s] / 2);
    if (static_cast<double>(max_ring::reads(p, s, half)) > kMaxRingHalo * static_cast<double>(one_band)) break;
    tile[s] = half;
  }
  q.lanes = budget.lanes;
  q.ring = static_cast<int>(std::min(reach + 1, tile[s]));
  q.inner = 1;
  for (int a = 0; a < kAxes; ++a) {
    q.tile[a] = static_cast<int>(tile[a]);
    q.count[a] = (std::max<int64_t>(p.in[a], 1) + tile[a] - 1) / tile[a];
    if (a > s) q.inner *= q.tile[a];
  }
  q.ring_elems = q.ring * q.inner;
  q.items = items_of(tile);
  const size_t warp_bytes = static_cast<size_t>(q.ring_elems) * accum_size * static_cast<size_t>(q.lanes);
  q.warps = static_cast<int>(std::clamp<size_t>(budget.bytes / warp_bytes, 1, kMaxRingWarps));
  q.bytes = warp_bytes * static_cast<size_t>(q.warps);
  *plan = q;
  return true;
}

// S: the swept axis (plan.sweep), a template argument so that every per-axis array is indexed by
// constants and stays in registers (a runtime axis put them in local memory: 3-10x slower).
template <class T, class Idx, int A0, int S>
struct MaxRingItem {
  using Value = T;
  using Index = Idx;
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  MaxRingPlan plan;
  Divider<Idx> by_groups, by_count[kAxes];
  Divider<int32_t> by_ring;
  bool plain;  // plane-format indices and no dilation: the short decode
  const T* dy;
  const void* indices;
  T* dx;

  // Item `item`, channel `lane` of its group; this thread's accumulator i is ring[i * stride].
  PG_HD void operator()(Idx item, int lane, A* ring, int stride) const {
    if (g.index_type == IndexType::i64) run<int64_t>(item, lane, ring, stride);
    else if (g.index_type == IndexType::i32) run<int32_t>(item, lane, ring, stride);
    else run<uint8_t>(item, lane, ring, stride);
  }

  // Whether stored index v of window o names one of its taps, and where (decode_index_at, with
  // plane-format indices of undilated windows on a short path).
  PG_HD bool decode(int64_t v, Idx nc, const Idx* o, Idx* q) const {
    if (!plain) return decode_index_at<A0>(g, v, nc, o, q);
    if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(g.in_plane)) return false;
    Idx r = static_cast<Idx>(v);
    q[0] = 0;
#pragma unroll
    for (int a = kAxes - 1; a > A0; --a) {
      const Idx next = g.in_div[a].div(r);
      q[a] = r - next * g.in[a];
      r = next;
    }
    q[A0] = r;
    bool ok = true;
#pragma unroll
    for (int a = A0; a < kAxes; ++a)
      ok = ok && static_cast<uint64_t>(q[a] - (o[a] * g.s[a] - g.pb[a])) <= static_cast<uint64_t>(g.reach[a]);
    return ok;
  }

  template <class Stored>
  PG_HD void run(Idx item, int lane, A* ring, int stride) const {
    Idx box[kAxes], rest = item;
    for (int a = kAxes - 1; a >= 0; --a) {
      const Idx next = by_count[a].div(rest);
      box[a] = rest - next * static_cast<Idx>(plan.count[a]);
      rest = next;
    }
    const Idx n = by_groups.div(rest);
    const Idx c = (rest - n * static_cast<Idx>(plan.groups)) * plan.lanes + lane;
    if (c >= g.c) return;
    const Idx nc = n * g.c + c;
    // The box [lo, hi) and the windows covering it [wlo, whi] along each axis.
    Idx lo[kAxes], hi[kAxes], wlo[kAxes], whi[kAxes];
    bool any = true;
    for (int a = 0; a < kAxes; ++a) {
      lo[a] = box[a] * plan.tile[a];
      hi[a] = lo[a] + plan.tile[a] < g.in[a] ? lo[a] + plan.tile[a] : g.in[a];
      Idx unused;
      covering(g, a, lo[a], &wlo[a], &unused);
      covering(g, a, hi[a] - 1, &unused, &whi[a]);
      any = any && wlo[a] <= whi[a];
    }
    const Idx in_base = n * g.in_plane, out_base = n * g.out_plane;
    // Rows of the swept axis: those below `flushed` are in dx, those below `opened` in the ring.
    Idx flushed = lo[S], opened = lo[S];
    const auto ring_row = [&](Idx r) { return by_ring.mod(static_cast<int32_t>(r - lo[S])) * plan.inner; };
    // Row r of the box to dx: from the ring when opened, zeros when no window could name it.
    const auto flush = [&](Idx r) {
      const bool named = r < opened;
      int at = named ? ring_row(r) : 0;
      Idx q[kAxes];
      q[S] = r;
      for (int a = 0; a < S; ++a) q[a] = lo[a];
      const Idx q1_end = S < 1 ? hi[1] : q[1] + 1, q2_end = S < 2 ? hi[2] : q[2] + 1;
      for (q[1] = S < 1 ? lo[1] : q[1]; q[1] < q1_end; ++q[1]) {
        int row_at = at;
        for (q[2] = S < 2 ? lo[2] : q[2]; q[2] < q2_end; ++q[2], ++row_at)
          dx[(in_base + in_lin(g, q)) * g.c + c] = from_accum<T>(named ? ring[row_at * stride] : A(0));
        if (S < 2) at += plan.tile[2];
      }
    };
    const auto open = [&](Idx r) {
      const int at = ring_row(r);
      for (int i = 0; i < plan.inner; ++i) ring[(at + i) * stride] = A(0);
    };
    // Flush every row below `to`; open every row below `upto` (rows a window row may name).
    const auto advance = [&](Idx to, Idx upto) {
      for (; flushed < to; ++flushed) flush(flushed);
      if (opened < flushed) opened = flushed;
      for (; opened < upto; ++opened) open(opened);
    };
    if (any) {
      Idx count = 1;
      for (int a = S; a < kAxes; ++a) count *= whi[a] - wlo[a] + 1;
      // Two cursors walk the same windows row-major: one loads a batch, the other adds it.
      Idx o[kAxes], ob[kAxes], row = wlo[S] - 1;
      for (int a = 0; a < kAxes; ++a) o[a] = ob[a] = wlo[a];
      const auto step = [&](Idx* at) {
#pragma unroll
        for (int a = kAxes - 1; a >= S; --a) {
          if (++at[a] <= whi[a] || a == S) break;
          at[a] = wlo[a];
        }
      };
      int first = 0, slot_first = 0;  // the window row's first live row in the box, and its ring row
      const Stored* stored_at = static_cast<const Stored*>(indices);
      for (Idx left = count; left > 0; left -= kMaxRingLoadBatch) {
        Stored stored[kMaxRingLoadBatch] = {};
        A grad[kMaxRingLoadBatch] = {};
#pragma unroll
        for (int j = 0; j < kMaxRingLoadBatch; ++j) {
          if (j < left) {
            const Idx at = (out_base + out_lin(g, o)) * g.c + c;
            stored[j] = stored_at[at];
            grad[j] = static_cast<A>(to_float(dy[at]));
            step(o);
          }
        }
#pragma unroll
        for (int j = 0; j < kMaxRingLoadBatch; ++j) {
          if (j >= left) break;
          if (ob[S] != row) {  // a new window row: rows before its first tap are final
            row = ob[S];
            const Idx start = row * g.s[S] - g.pb[S];
            advance(start < hi[S] ? start : hi[S], start + g.reach[S] + 1 < hi[S] ? start + g.reach[S] + 1 : hi[S]);
            first = static_cast<int>((start > lo[S] ? start : lo[S]) - lo[S]);
            slot_first = by_ring.mod(first);
          }
          Idx q[kAxes];
          const bool named = decode(static_cast<int64_t>(stored[j]), nc, ob, q);
          step(ob);
          if (!named) continue;
          bool inside = true;
          int local = 0;
#pragma unroll
          for (int a = 0; a < kAxes; ++a) {
            if (a < S) continue;
            inside = inside && static_cast<uint64_t>(q[a] - lo[a]) < static_cast<uint64_t>(hi[a] - lo[a]);
            if (a > S) local = local * plan.tile[a] + static_cast<int>(q[a] - lo[a]);
          }
          if (!inside) continue;
          int slot = slot_first + static_cast<int>(q[S] - lo[S]) - first;
          if (slot >= plan.ring) slot -= plan.ring;
          ring[(slot * plan.inner + local) * stride] += grad[j];
        }
      }
    }
    advance(hi[S], hi[S]);
  }
};

template <class Item>
struct MaxRingOnCpu {
  Item item;
  void operator()(typename Item::Index e) const {
    typename Item::A ring[kMaxRingCpuElems];
    const int lanes = item.plan.lanes;
    item(e / lanes, static_cast<int>(e % lanes), ring, 1);
  }
};

template <class Item>
void run_max_ring(const CpuExec& ex, const Item& item) {
  ex.template for_each<typename Item::Index>(item.plan.items * item.plan.lanes, MaxRingOnCpu<Item>{item});
}

#if PG_GPU_COMPILER

inline constexpr int kMaxRingGpuLanes = kMaxRingGpuBudget.lanes;

template <class Item, class Idx>
__global__ void __launch_bounds__(kMaxRingGpuLanes * kMaxRingWarps) max_ring_kernel(Item item, Idx items) {
  extern __shared__ double max_ring_smem[];
  using A = typename Item::A;
  const int warp = static_cast<int>(threadIdx.x) / kMaxRingGpuLanes, lane = static_cast<int>(threadIdx.x) % kMaxRingGpuLanes;
  A* ring = reinterpret_cast<A*>(max_ring_smem) + static_cast<size_t>(warp) * item.plan.ring_elems * kMaxRingGpuLanes + lane;
  const Idx warps = static_cast<Idx>(blockDim.x) / kMaxRingGpuLanes;
  for (Idx e = static_cast<Idx>(blockIdx.x) * warps + warp; e < items; e += static_cast<Idx>(gridDim.x) * warps)
    item(e, lane, ring, kMaxRingGpuLanes);
}

template <class Item>
void run_max_ring(const GpuExec& ex, const Item& item) {
  using Idx = typename Item::Index;
  const int64_t blocks = std::min<int64_t>((item.plan.items + item.plan.warps - 1) / item.plan.warps, int64_t{1} << 30);
  max_ring_kernel<Item, Idx><<<static_cast<unsigned>(blocks), kMaxRingGpuLanes * item.plan.warps, item.plan.bytes, ex.stream>>>(
      item, static_cast<Idx>(item.plan.items));
  PG_LAUNCH_CHECK("max_ring_kernel");
}

#endif

struct MaxScatterRing : MaxVariant<MaxScatterRing> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.ring", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Channels-last, every window, dtype, index format and type. Sizes for the fuzz: on the CPU
  // budget, C in several lane groups with a partial last, several bands and inner tiles.
  static Domain domain() {
    Domain d;
    d.layouts = {Layout::channels_last};
    d.reach[0] = 8;
    d.reach[1] = 14;
    d.reach[2] = 30;
    d.max_channels = 10;
    return d;
  }

  static Support supports(const Problem& p) {
    if (p.layout != Layout::channels_last) return Support::no("layout: channels-last only (a thread per channel)");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxScatterRing>(p);
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      MaxRingPlan plan;
      const MaxRingBudget& budget = Exec::is_gpu ? kMaxRingGpuBudget : kMaxRingCpuBudget;
      if (!plan_max_ring(p, sizeof(accum_t<T>), budget, &plan)) throw Error("max.scatter.ring: no ring fits");
      if (plan.items == 0) return;
      // A trivial leading axis (A0 = 1) has no reach, so it is never the swept one.
      if (plan.sweep == 0) {
        if constexpr (A0 == 0) launch_item<MaxRingItem<T, Idx, A0, 0>>(ex, p, b, plan);
      } else if (plan.sweep == 1) {
        launch_item<MaxRingItem<T, Idx, A0, 1>>(ex, p, b, plan);
      } else {
        launch_item<MaxRingItem<T, Idx, A0, 2>>(ex, p, b, plan);
      }
    });
  }

  template <class Item, class Exec>
  static void launch_item(const Exec& ex, const Problem& p, const BwdBuffers& b, const MaxRingPlan& plan) {
    using T = typename Item::Value;
    using Idx = typename Item::Index;
    Item item;
    item.plan = plan;
    item.g = make_max_geom<Idx>(p, 1);
    item.by_groups = Divider<Idx>(item.plan.groups);
    for (int a = 0; a < kAxes; ++a) item.by_count[a] = Divider<Idx>(item.plan.count[a]);
    item.by_ring = Divider<int32_t>(item.plan.ring);
    item.plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
    item.dy = static_cast<const T*>(b.dy);
    item.indices = b.indices;
    item.dx = static_cast<T*>(b.dx);
    run_max_ring(ex, item);
  }
};

}  // namespace pg
