// max.gather.taps: max-pool backward from stored indices for stride-1 windows (any kernel,
// dilation and padding on every axis), channels-first, every index format and type, over
// shared-memory slabs of windows kept as the tap they name.
//
// Why: at stride 1 every window overlaps its neighbours, and the variants for any window pay for
// their generality there: max.gather.counted and .tiled decode each window into a tile slot and
// count or band it (about 90 thread instructions per window in the load alone, H200, 2026-11-29:
// bench/results/2026-11-29_h200_lane_packs.md), max.gather.fixed.cf reads every window of its
// box from global memory once per run that it covers (L1-bound on GoogLeNet's k3s1). At stride
// 1 the windows of a slab of dx, with their halo, are a dense grid: window o sits at grid cell
// o + reach - pad along each axis, and the windows that can name position q are the cells
// q + (k - 1 - t) * d for taps t, a fixed stencil. So a block
//   1. loads every window of its slab's grid once, coalesced, and keeps its stored index as the
//      window-local tap it names (the window format's value; -1 for a foreign index, a window
//      past an edge, or one wholly in the padding) beside its dy: one 8-byte cell;
//   2. gives each dx position one thread, which walks the stencil from the window of tap k - 1
//      (the cell at q's own grid coordinates) in row-major window order and adds the dy of each
//      cell whose tap is the stencil's, then writes dx once, coalesced.
// A position costs k^n compares of one shared-memory load each, whatever its data: 9 for a 3x3
// window, so this is the variant for small stride-1 windows; wide ones (YOLO's k9 and k13) keep
// max.gather.counted, whose cost does not grow with the window.
// Deterministic: each dx element is summed by one thread from zero in row-major window order, as
// every deterministic max variant sums (the agreement property compares them bitwise); no
// atomics, each dx element written once.
//
// Tiles: whole planes, several to a tile, when a plane's grid fits kMaxTapsPlaneBytes; else
// slabs along the plane's first non-trivial axis (D in 3D, H in 2D, W in 1D), each with its
// halo of reach rows, within kMaxTiledSmemBytes. The CPU backend runs the same phases with
// emulated threads, slabs of four rows and tiles of a few dozen positions, so fuzz-sized problems
// span several slabs with a partial last one, or hold several planes to a tile with a partial
// last group.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "kernels/max/max_tile_walk.hpp"
#include "src/model/variant.hpp"

namespace pg {

// A tile of whole planes stays within this many bytes of cells, so that up to eight blocks share
// a multiprocessor; a slab may take up to kMaxTiledSmemBytes.
inline constexpr size_t kMaxTapsPlaneBytes = 24 * 1024;

// Cells a thread reads before decoding them (phase 1 of MaxTapsBlock).
inline constexpr int kTapsLoadBatch = 4;

// One laid-out window: its dy (in the accumulator type) and the window-local tap its stored
// index names, or -1. Side by side and aligned, so a stencil step is one shared-memory load.
template <class A>
struct alignas(2 * sizeof(A)) TapCell {
  A grad;
  int32_t tap;
};

// The slab plan, the same on the host and in the kernel. Axes before `lead` are trivial (one
// position, one window, one tap); the slab runs along `lead`; the axes after it are whole.
struct MaxTapsPlan {
  int threads;
  size_t bytes;
  int lead;                // the slab axis
  int slab, slabs;         // dx positions per tile along lead, and tiles per plane along it
  int planes;              // planes per tile: 1 unless a tile is whole planes
  int cells[kAxes];        // grid cells per tile plane along each axis (lead: slab + reach)
  int pitch[kAxes];        // cell strides along each axis
  int plane_cells;         // cells per tile plane
  int64_t row_positions;   // dx positions per step along lead (the product of the whole axes)
  int64_t plane_groups;    // tiles along the planes
  Divider<int32_t> by_cells[kAxes], by_plane_cells, by_slab_positions;
};

// Rows per slab along the lead axis, dx positions per tile (all its planes) and threads per
// block; the bytes are the constants above.
struct MaxTapsBudget {
  int64_t rows, positions;
  int threads;
};
inline constexpr MaxTapsBudget kMaxTapsGpuBudget{int64_t{1} << 30, int64_t{1} << 30, kMaxTiledThreads};
// CPU: slabs of four rows and tiles of a few dozen positions, so that fuzz-sized problems are
// cut into slabs along D, H or W with a partial last one, or hold several planes to a tile.
inline constexpr MaxTapsBudget kMaxTapsCpuBudget{4, 40, 28};

// False when not even a one-position slab with its halo fits kMaxTiledSmemBytes.
inline bool plan_max_taps(const Problem& p, size_t accum_size, const MaxTapsBudget& budget, MaxTapsPlan* plan) {
  MaxTapsPlan q{};
  q.threads = budget.threads;
  q.lead = 0;
  while (q.lead < kAxes - 1 && axis_trivial(p, q.lead)) ++q.lead;
  const size_t cell = 2 * accum_size;
  const int64_t limit = static_cast<int64_t>(kMaxTiledSmemBytes / cell);  // cells
  int64_t inner_cells = 1, inner_positions = 1;
  for (int a = q.lead + 1; a < kAxes; ++a) {
    inner_cells *= p.in[a] + p.effective_kernel(a) - 1;
    inner_positions *= p.in[a];
    if (inner_cells > limit) return false;  // before any product could overflow
  }
  const int64_t reach = p.effective_kernel(q.lead) - 1, len = p.in[q.lead];
  const int64_t fit_rows = limit / inner_cells - reach;
  if (fit_rows < 1 || len < 1) return false;
  int64_t slab = std::min({len, fit_rows, budget.rows});
  // Slabs of even length: the last is not a sliver with a full halo.
  const int64_t slabs = (len + slab - 1) / slab;
  slab = (len + slabs - 1) / slabs;
  q.slab = static_cast<int>(slab);
  q.slabs = static_cast<int>(slabs);
  for (int a = 0; a < kAxes; ++a)
    q.cells[a] = a < q.lead    ? 1
                 : a == q.lead ? static_cast<int>(slab + reach)
                               : static_cast<int>(p.in[a] + p.effective_kernel(a) - 1);
  q.pitch[kAxes - 1] = 1;
  for (int a = kAxes - 2; a >= 0; --a) q.pitch[a] = q.pitch[a + 1] * q.cells[a + 1];
  q.plane_cells = q.pitch[0] * q.cells[0];
  const int64_t plane_bytes = static_cast<int64_t>(q.plane_cells) * static_cast<int64_t>(cell);
  const int64_t plane_positions = slab * inner_positions;
  q.planes = 1;
  if (slabs == 1) {
    const int64_t by_bytes = static_cast<int64_t>(kMaxTapsPlaneBytes) / plane_bytes;
    const int64_t by_positions = budget.positions / plane_positions;
    q.planes = static_cast<int>(std::max<int64_t>(1, std::min({by_bytes, by_positions, p.n * p.c})));
  }
  q.bytes = static_cast<size_t>(plane_bytes) * static_cast<size_t>(q.planes);
  q.row_positions = inner_positions;
  q.plane_groups = (p.n * p.c + q.planes - 1) / q.planes;
  for (int a = 0; a < kAxes; ++a) q.by_cells[a] = Divider<int32_t>(q.cells[a]);
  q.by_plane_cells = Divider<int32_t>(q.plane_cells);
  q.by_slab_positions = Divider<int32_t>(static_cast<int32_t>(plane_positions));
  *plan = q;
  return true;
}

// L: the lead axis (plan.lead), fixed at compile time so that the per-element coordinate loops
// unroll; the axes before it are trivial, so L plays the part of dispatch_max's A0.
template <class T, class Idx, int L>
struct MaxTapsBlock {
  using Value = T;
  using Index = Idx;
  using A = accum_t<T>;
  using Cell = TapCell<A>;
  static constexpr int kPhases = 2;

  MaxGeom<Idx> g;
  MaxTapsPlan plan;
  const T* dy;
  const void* indices;
  T* dx;
  Idx planes;  // N * C

  // A tile: its first plane, how many planes, its slab's first position along lead and length.
  struct Frame {
    Cell* cells;
    Idx plane0, start;
    int planes, rows;
  };

  PG_HD Frame frame(Idx tile, unsigned char* smem) const {
    Frame f;
    f.cells = reinterpret_cast<Cell*>(smem);
    const Idx group = tile / plan.slabs, slab = tile - group * plan.slabs;
    f.plane0 = group * plan.planes;
    f.planes = static_cast<int>(planes - f.plane0 < plan.planes ? planes - f.plane0 : plan.planes);
    f.start = slab * plan.slab;
    const Idx len = g.in[L];
    f.rows = static_cast<int>(len - f.start < plan.slab ? len - f.start : plan.slab);
    return f;
  }

  PG_HD void start(const Frame&, int) const {}

  // Each phase is switched once per tile on what the loop bodies would otherwise switch on per
  // element: the stored index type, and the stencil's H x W extent (3 x 3 and 5 x 5 unrolled, W
  // undilated or not; any other, and 1D, runs loops). H200, 2026-11-29: bodies generic in these
  // and in the lead axis issued ~330-440 thread instructions per dx position on GoogLeNet's k3s1
  // (ncu), most of them in loops over axes with runtime bounds.
  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) {
      if (g.index_type == IndexType::i64) load(f, tid, static_cast<const int64_t*>(indices));
      else if (g.index_type == IndexType::i32) load(f, tid, static_cast<const int32_t*>(indices));
      else load(f, tid, static_cast<const uint8_t*>(indices));
      return;
    }
    if constexpr (L < 2) {
      const bool square = g.k[1] == g.k[2], dense = g.d[2] == 1;
      if (square && g.k[2] == 3 && dense) return gather<3, true>(f, tid);
      if (square && g.k[2] == 3) return gather<3, false>(f, tid);
      if (square && g.k[2] == 5 && dense) return gather<5, true>(f, tid);
    }
    gather<0, false>(f, tid);
  }

  // Phase 1: every cell of the tile's grid, the window there read once (coalesced along W) and
  // kept as the tap its index names, -1 where there is no window or it names no tap. A thread
  // reads kTapsLoadBatch cells' index and dy before decoding any: one round trip to memory for
  // them all (H200, 2026-11-29: one cell at a time, with dy read once its index decoded, the load
  // waited on two round trips a cell, about 60% of GoogLeNet k3s1's time).
  template <class I>
  PG_HD void load(const Frame& f, int tid, const I* stored_at) const {
    const int n = f.planes * plan.plane_cells;
    for (int first = tid; first < n; first += kTapsLoadBatch * plan.threads) {
      Idx o[kTapsLoadBatch][kAxes], nc[kTapsLoadBatch];
      bool inside[kTapsLoadBatch];
      int64_t stored[kTapsLoadBatch];
      A grad[kTapsLoadBatch];
#pragma unroll
      for (int b = 0; b < kTapsLoadBatch; ++b) {
        const int i = first + b * plan.threads;
        const int pl = plan.by_plane_cells.div(i);
        int rest = i - pl * plan.plane_cells;
        inside[b] = i < n;
#pragma unroll
        for (int a = 0; a < kAxes; ++a) o[b][a] = 0;
#pragma unroll
        for (int a = kAxes - 1; a >= L; --a) {
          int cell = rest;
          if (a > L) {
            const int next = plan.by_cells[a].div(rest);
            cell = rest - next * plan.cells[a];
            rest = next;
          }
          o[b][a] = static_cast<Idx>(cell) - g.reach[a] + g.pb[a] + (a == L ? f.start : Idx{0});
          inside[b] = inside[b] && o[b][a] >= 0 && o[b][a] < g.out[a];
        }
        nc[b] = f.plane0 + pl;
        stored[b] = -1;
        grad[b] = A(0);
        if (inside[b]) {
          const Idx at = nc[b] * g.out_plane + out_lin(g, o[b]);
          stored[b] = static_cast<int64_t>(stored_at[at]);
          grad[b] = to_float(dy[at]);
        }
      }
#pragma unroll
      for (int b = 0; b < kTapsLoadBatch; ++b) {
        const int i = first + b * plan.threads;
        if (i >= n) break;
        const int32_t tap = inside[b] ? static_cast<int32_t>(tap_named(stored[b], nc[b], o[b])) : -1;
        f.cells[i] = Cell{tap >= 0 ? grad[b] : A(0), tap};
      }
    }
  }

  // The window-local tap (row-major over the window's taps: the window format's value) that
  // stored index v of window o names, or -1 when it names none of the window's taps inside the
  // input. Row-major formats are decoded here with one division per axis past L (the window
  // and column-major formats take decode_index_at).
  PG_HD Idx tap_named(int64_t v, Idx nc, const Idx* o) const {
    if (g.format == IndexFormat::window || g.format == IndexFormat::global_col) {
      Idx q[kAxes];
      if (!decode_index_at<L>(g, v, nc, o, q)) return -1;
      if (g.format == IndexFormat::window) return static_cast<Idx>(v);
      Idx tap = 0;
      for (int a = L; a < kAxes; ++a) {
        Idx t = q[a] + g.pb[a] - o[a];
        if (g.d[a] != 1) t = g.d_div[a].div(t);
        tap = tap * g.k[a] + t;
      }
      return tap;
    }
    const int64_t local = g.format == IndexFormat::plane ? v : v - static_cast<int64_t>(nc) * g.in_plane;
    if (static_cast<uint64_t>(local) >= static_cast<uint64_t>(g.in_plane)) return -1;
    using U = std::make_unsigned_t<Idx>;
    Idx r = static_cast<Idx>(local), tap = 0, scale = 1;
#pragma unroll
    for (int a = kAxes - 1; a >= L; --a) {
      Idx q = r;
      if (a > L) {
        const Idx next = g.in_div[a].div(r);
        q = r - next * g.in[a];
        r = next;
      }
      Idx t = q + g.pb[a] - o[a];  // the tap times the dilation
      if (static_cast<U>(t) > static_cast<U>(g.reach[a])) return -1;
      if (g.d[a] != 1) {
        const Idx k = g.d_div[a].div(t);
        if (k * g.d[a] != t) return -1;
        t = k;
      }
      tap += t * scale;
      scale *= g.k[a];
    }
    return tap;
  }

  // Phase 2: each dx position of the tile sums the cells of its stencil that name it, in
  // row-major window order, and writes dx. K: the H and W extents of the stencil when both are
  // that (0: g.k[1] and g.k[2]); kDense: W undilated, so a W step is the next cell.
  template <int K, bool kDense>
  PG_HD void gather(const Frame& f, int tid) const {
    const int per_plane = f.rows * static_cast<int>(plan.row_positions);
    const int n = f.planes * per_plane;
    const int step0 = static_cast<int>(g.d[0]) * plan.pitch[0], step1 = static_cast<int>(g.d[1]) * plan.pitch[1];
    const int step2 = kDense ? 1 : static_cast<int>(g.d[2]);
    const int k0 = L == 0 ? static_cast<int>(g.k[0]) : 1;
    const int last_tap = static_cast<int>(g.taps) - 1;
    for (int j = tid; j < n; j += plan.threads) {
      const int pl = plan.by_slab_positions.div(j);
      const int local = j - pl * per_plane;
      int rest = local, at = pl * plan.plane_cells;
#pragma unroll
      for (int a = kAxes - 1; a > L; --a) {
        const int next = static_cast<int>(g.in_div[a].div(rest));
        at += (rest - next * static_cast<int>(g.in[a])) * plan.pitch[a];
        rest = next;
      }
      at += rest * plan.pitch[L];
      // The cell at q's own grid coordinates holds the window of tap k - 1 along every axis,
      // the first in row-major window order; each step along an axis is one window further.
      const Cell* z = f.cells + at;
      A acc = A(0);
      int tap = last_tap;
      for (int i0 = 0; i0 < k0; ++i0, z += step0) {
        if constexpr (K > 0) {
#pragma unroll
          for (int i1 = 0; i1 < K; ++i1) {
#pragma unroll
            for (int i2 = 0; i2 < K; ++i2) {
              const Cell c = z[i1 * step1 + i2 * step2];
              if (c.tap == tap - i1 * K - i2) acc += c.grad;
            }
          }
          tap -= K * K;
        } else {
          const Cell* y = z;
          for (int i1 = 0; i1 < static_cast<int>(g.k[1]); ++i1, y += step1)
            for (int i2 = 0; i2 < static_cast<int>(g.k[2]); ++i2, --tap) {
              const Cell c = y[i2 * step2];
              if (c.tap == tap) acc += c.grad;
            }
        }
      }
      const Idx nc = f.plane0 + pl;
      dx[nc * g.in_plane + f.start * static_cast<Idx>(plan.row_positions) + local] = from_accum<T>(acc);
    }
  }
};

struct MaxGatherTaps : MaxVariant<MaxGatherTaps> {
  static constexpr PoolTraits traits{
      .name = "max.gather.taps", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Stride 1 on every axis, channels-first; every kernel, dilation, padding, dtype, index format
  // and type. Sizes for the fuzz: on the CPU budget, several slabs with a partial last one, and
  // small planes several to a tile with a partial last group.
  static Domain domain() {
    Domain d;
    d.windows = WindowRule::unit_stride;
    d.layouts = {Layout::channels_first};
    d.reach[0] = 8;
    d.reach[1] = 10;
    d.reach[2] = 24;
    d.max_channels = 9;
    return d;
  }

  static Support supports(const Problem& p) {
    MaxTapsPlan plan;
    if (!plan_max_taps(p, p.dtype == DType::f64 ? 8 : 4, kMaxTapsGpuBudget, &plan))
      return Support::no(
          "window reach too large: one slab row of windows with its halo exceeds 48 KiB of shared memory");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxGatherTaps>(p);
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      MaxTapsPlan plan;
      if (!plan_max_taps(p, sizeof(accum_t<T>), Exec::is_gpu ? kMaxTapsGpuBudget : kMaxTapsCpuBudget, &plan))
        throw Error("max.gather.taps: no slab fits");
      const auto run = [&]<int L>() {
        MaxTapsBlock<T, Idx, L> block;
        block.plan = plan;
        block.g = make_max_geom<Idx>(p, 1);
        block.dy = static_cast<const T*>(b.dy);
        block.indices = b.indices;
        block.dx = static_cast<T*>(b.dx);
        block.planes = static_cast<Idx>(p.n * p.c);
        const int64_t tiles = plan.plane_groups * plan.slabs;
        if (tiles > 0) run_max_tiles(ex, block, tiles);
      };
      if (plan.lead == 0) run.template operator()<0>();
      else if (plan.lead == 1) run.template operator()<1>();
      else run.template operator()<2>();
    });
  }
};

}  // namespace pg
