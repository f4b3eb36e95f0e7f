// avg.gather.tiled: the average pool backward for every window (any kernel, stride, dilation,
// padding, divisor rule), both layouts, as separable sums over shared-memory tiles.
//
// The backward pass is separable: with s = dy / divisor (the divisor is per window), and A_a
// the 0/1 matrix "input i is a tap of window o along axis a",
//   dx = (A_0 (x) A_1 (x) A_2) s,
// because a position is a tap of a window iff it is one along every axis. A block owns a tile
// of dx, loads the dy windows that cover it once into shared memory, divides each once, and
// applies the per-axis sums there, W, then H, then D, writing dx once. A dx element costs
// kx + ky + kz additions instead of the kx * ky * kz taps a per-element gather reads and
// divides, and DRAM sees each dy value once plus the halo of the tile's edges.
//
// The tile is a box [planes][D][H][W][lanes] of the tensor seen as [outer][D][H][W][lanes]:
// outer = N * C and one lane in channels-first, outer = N and lanes = channels in channels-last.
// A thread owns columns (plane side by side, W position, lane), contiguous in memory across
// threads, and walks the rows (plane walked as rows, D, H) of each phase with no index division:
// per-column constants (its W taps, its divisor count along W, its addresses) are computed once
// per tile. Small planes sit side by side until about kTiledThreads columns keep every thread
// busy, further planes are walked as rows, and long rows are cut along W.
// An axis whose window is a copy (kernel 1, stride 1, no padding) needs no pass, so a 1D
// problem is one pass and a 2D one two.
//
// Sums run W, then H, then D, each in a fixed order: deterministic, no atomics, each dx element
// written once, no zeroing pass. Depth kz + ky + kx per element with one rounding per addition
// is inside the oracle's (terms) u bound. Running (sliding) sums would make the cost
// independent of the window, but their rounding error grows with the whole row's magnitude,
// not the window's terms, and would break that bound on rows with large values elsewhere.
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kTiledCpuBudget), so fuzz-sized problems span several tiles, planes, lanes and partial edges.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "src/model/backend.hpp"
#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/even_piece.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/tile_grid.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

inline constexpr int kTiledThreads = 256;             // threads per block on a GPU
inline constexpr size_t kTiledSmemBytes = 48 * 1024;  // shared memory a block may use without opt-in

// How a tile is sized: dx elements it grows to, columns that keep the block's threads busy,
// channels per channels-last tile, and the threads that walk it.
struct TileBudget {
  int64_t elements, columns, lanes;
  int threads;
};
// On a GPU: 16 elements per thread, enough to pay for a tile's setup and barriers while its two
// buffers stay within 48 KiB in f32; 32 lanes, a 128-byte row of f32 channels per position.
inline constexpr TileBudget kTiledGpuBudget{4096, kTiledThreads, 32, kTiledThreads};
// On the CPU backend, small: fuzz-sized problems span several tiles along every axis and C.
inline constexpr TileBudget kTiledCpuBudget{96, 12, 8, 7};

// Tile shape and shared-memory layout, the same on the host and in the kernel.
struct AvgTilePlan {
  int planes, lanes;    // outer planes and lanes per tile
  // Planes side by side as columns (col_planes), and those walked as rows: plane p of the tile
  // is row plane p / col_planes, column plane p % col_planes.
  int col_planes, row_planes;
  int tile[kAxes];      // dx positions per tile along D, H, W
  int lay[kAxes];       // windows laid out per tile (a bound on those covering it); tile[a] on a copy axis
  int tap_step[kAxes];  // window-index gap between consecutive windows sharing a tap
  bool sums[kAxes];     // the axis needs a pass (W always has one: it moves the loaded windows)
  int region[2];        // accumulator elements of the two buffers the passes alternate between
  int max_taps;         // the most windows any tile position is a tap of, along one summing axis
  int threads;          // threads per block
  Divider<int32_t> by_lanes, by_lay_w, by_tile_w;  // split a column index into (column plane, W, lane)
  size_t bytes;
};

inline bool avg_copy_axis(const Problem& p, int a) {
  return p.kernel[a] == 1 && p.stride[a] == 1 && p.pad_begin[a] == 0 && p.pad_end[a] == 0;
}

// Fills the layout of a plan whose tile, planes and lanes are chosen; false when a window span
// is beyond int arithmetic.
inline bool lay_out_avg_tile(const Problem& p, size_t accum_size, AvgTilePlan* q) {
  q->max_taps = 1;
  for (int a = 0; a < kAxes; ++a) {
    q->sums[a] = a == 2 || !avg_copy_axis(p, a);
    const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
    const int64_t w = q->sums[a] ? (q->tile[a] - 1 + reach) / p.stride[a] + 1 : q->tile[a];
    if (w > (int64_t{1} << 20)) return false;
    q->lay[a] = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(w, p.out[a])));
    const int64_t tap_step = p.dilation[a] / std::gcd(p.stride[a], p.dilation[a]);
    if (tap_step > INT32_MAX) return false;  // the tile's int arithmetic would truncate it
    q->tap_step[a] = static_cast<int>(tap_step);
    // Windows sharing a tap start s * tap_step apart, inside one window's reach.
    if (q->sums[a]) q->max_taps = static_cast<int>(std::max<int64_t>(q->max_taps, std::min(p.kernel[a], reach / (p.stride[a] * tap_step) + 1)));
  }
  q->row_planes = (q->planes + q->col_planes - 1) / q->col_planes;
  q->planes = q->row_planes * q->col_planes;
  const int64_t plane_lanes = int64_t{q->planes} * q->lanes;
  const int64_t loaded = plane_lanes * q->lay[0] * q->lay[1] * q->lay[2];
  if (loaded > (int64_t{1} << 24)) return false;
  // Pass k (in the order W, H, D of the summing axes) reads region k % 2 and writes region
  // (k + 1) % 2, or dx when it is the last; after the pass of axis a its extent is the tile's.
  int64_t region[2] = {loaded, 0};
  int64_t extent[kAxes] = {q->lay[0], q->lay[1], q->lay[2]};
  int passes = 0, k = 0;
  for (int a = 0; a < kAxes; ++a) passes += q->sums[a];
  for (int a = kAxes - 1; a >= 0; --a) {
    if (!q->sums[a]) continue;
    extent[a] = q->tile[a];
    if (++k < passes) region[k % 2] = std::max(region[k % 2], plane_lanes * extent[0] * extent[1] * extent[2]);
  }
  int64_t tables = 0;
  for (int a = 0; a < kAxes; ++a)
    if (q->sums[a]) tables += 2 * q->tile[a];
  q->region[0] = static_cast<int>(region[0]);
  q->region[1] = static_cast<int>(region[1]);
  q->bytes = static_cast<size_t>((region[0] + region[1]) * static_cast<int64_t>(accum_size) + tables * 4);
  q->by_lanes = Divider<int32_t>(q->lanes);
  q->by_lay_w = Divider<int32_t>(q->lay[2]);
  q->by_tile_w = Divider<int32_t>(q->tile[2]);
  return true;
}

// The plan for tiles within `budget`, shrunk until its shared memory fits; false when not even
// a one-position tile of one lane fits (a window reach too long).
inline bool plan_avg_tiles(const Problem& p, size_t accum_size, const TileBudget& budget, AvgTilePlan* plan) {
  const bool cl = p.layout == Layout::channels_last;
  const int64_t outer = cl ? p.n : p.n * p.c;
  AvgTilePlan q{};
  q.threads = budget.threads;
  q.lanes = static_cast<int>(cl ? even_piece(p.c, budget.lanes) : 1);
  // Columns first: rows (D, H) multiply a tile's halo, so a tile with rows to walk is about
  // `columns` wide, and a 1D tile as long as the budget.
  const bool rows = !avg_copy_axis(p, 0) || !avg_copy_axis(p, 1);
  const int64_t width = rows ? budget.columns : budget.elements;
  q.tile[2] = static_cast<int>(even_piece(p.in[2], std::max<int64_t>(1, width / q.lanes)));
  const int64_t cols = int64_t{q.tile[2]} * q.lanes;
  q.planes = static_cast<int>(std::clamp<int64_t>(budget.columns / cols, 1, std::max<int64_t>(outer, 1)));
  const int64_t room = std::max<int64_t>(1, budget.elements / (cols * q.planes));
  q.tile[1] = static_cast<int>(even_piece(p.in[1], room));
  q.tile[0] = static_cast<int>(even_piece(p.in[0], std::max<int64_t>(1, room / q.tile[1])));
  if (q.tile[0] == p.in[0] && q.tile[1] == p.in[1] && q.tile[2] == p.in[2]) {
    const int64_t plane = p.in[0] * p.in[1] * p.in[2] * q.lanes;
    q.planes = static_cast<int>(std::clamp<int64_t>(budget.elements / plane, q.planes, std::max<int64_t>(outer, 1)));
  }
  // As many planes side by side as it takes to give the block `columns` columns; the others
  // are walked as rows.
  q.col_planes = static_cast<int>(std::clamp<int64_t>(budget.columns / cols, 1, q.planes));
  for (;;) {
    if (lay_out_avg_tile(p, accum_size, &q) && q.bytes <= kTiledSmemBytes) {
      *plan = q;
      return true;
    }
    // Shrink what costs the least: planes, then rows (D, then H), then W, then lanes.
    if (q.planes > 1) {
      q.planes = (q.planes + 1) / 2;
      q.col_planes = std::min(q.col_planes, q.planes);
      continue;
    }
    int a = 0;
    while (a < kAxes && q.tile[a] == 1) ++a;
    if (a < kAxes) {
      q.tile[a] = static_cast<int>(even_piece(p.in[a], q.tile[a] / 2));
      continue;
    }
    if (q.lanes > 1) {
      q.lanes = static_cast<int>(even_piece(p.c, q.lanes / 2));
      continue;
    }
    return false;
  }
}

// The work of one block on one tile, as phases for plan.threads cooperating threads; every
// thread finishes a phase before any starts the next (a barrier on the GPU, phase-major order on
// the CPU).
template <class T, class Idx>
struct AvgTiledBlock {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  AvgTilePlan plan;
  TileGrid<Idx> grid;
  const T* dy;
  T* dx;

  // Where a tile lies and how shared memory is carved; each thread computes its own copy.
  struct Frame {
    Idx outer0, c0;      // first plane and lane of the tile
    Idx i0[kAxes];       // first dx position
    Idx o0[kAxes];       // first window laid out (the first covering the tile; i0 on a copy axis)
    A* region0;
    A* region1;
    int* first[kAxes];   // per tile position: its first covering window, tile-local
    int* taps[kAxes];    // per tile position: how many windows have it as a tap
  };

  PG_HD Frame frame(Idx tile_id, unsigned char* smem) const {
    Frame f;
    f.region0 = reinterpret_cast<A*>(smem);
    f.region1 = f.region0 + plan.region[0];
    int* ints = reinterpret_cast<int*>(f.region1 + plan.region[1]);
    for (int a = 0; a < kAxes; ++a) {
      f.first[a] = ints;
      f.taps[a] = ints + plan.tile[a];
      if (plan.sums[a]) ints += 2 * plan.tile[a];
    }
    f.outer0 = grid.locate(tile_id, plan.lanes, plan.tile, &f.c0, f.i0) * plan.planes;
    for (int a = 0; a < kAxes; ++a) {
      Idx lo, unused;
      g.axis[a].covering(f.i0[a], &lo, &unused);
      f.o0[a] = plan.sums[a] ? lo : f.i0[a];
    }
    return f;
  }

  // Phase 1, part 1: per summing axis and tile position, its first covering window (tile-local)
  // and how many windows have it as a tap.
  PG_HD void tables(const Frame& f, int tid) const {
    for (int a = 0; a < kAxes; ++a) {
      if (!plan.sums[a]) continue;
      const AvgAxis<Idx>& ax = g.axis[a];
      for (int j = tid; j < plan.tile[a]; j += plan.threads) {
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
    }
  }

  // Phase 1, part 2: dy / divisor for every window laid out, zero where the window, plane or
  // lane is outside the tensor. Shared memory holds a box as [rows][columns]: rows are (row
  // plane, D, H), columns (column plane, W, lane), so a thread's column is one address apart
  // from its neighbours' and its rows one row apart. kRows: 0 no row axis sums (1D), 1 H sums
  // and D does not, 2 D sums.
  template <int kRows>
  PG_HD void load(const Frame& f, int tid) const {
    tables(f, tid);
    const int L = plan.lanes, Pc = plan.col_planes, E0 = plan.lay[0], E1 = plan.lay[1];
    const int cols = Pc * plan.lay[2] * L, rows = plan.row_planes * E0 * E1;
    const Idx OD = g.axis[0].out, OH = g.axis[1].out, OW = g.axis[2].out;
    const bool plain = g.small_windows && !g.has_override;
    const Idx row_step = OW * grid.lanes_total;
    for (int col = tid; col < cols; col += plan.threads) {
      const int rest = plan.by_lanes.div(col);
      const int l = col - rest * L;
      const int pc = plan.by_lay_w.div(rest);
      const Idx lane = f.c0 + l, ox = f.o0[2] + (rest - pc * plan.lay[2]);
      const bool col_in = lane < grid.lanes_total && ox < OW;
      const Idx cx = col_in ? g.window_count(2, ox) : Idx{1};
      const Idx col_at = ox * grid.lanes_total + lane;
      A* s = f.region0 + col;
      // Row (pr, z, y) and its dy offset, stepped along H and recomputed when D or the plane
      // moves on; `in` says whether the row is in the tensor.
      int pr = 0, z = 0, y = 0;
      Idx q = f.outer0 + pc, oz = f.o0[0], oy = f.o0[1];
      bool in = q < grid.outer && oz < OD;
      Idx at = in ? ((q * OD + oz) * OH + oy) * row_step + col_at : Idx{0};
      for (int r = 0; r < rows; ++r, s += cols) {
        A v = A(0);
        if (col_in && in && oy < OH) {
          const Idx cz = kRows == 2 ? g.window_count(0, oz) : Idx{1}, cy = kRows >= 1 ? g.window_count(1, oy) : Idx{1};
          // Small windows multiply their counts exactly in A, as AvgShape::divisor does.
          const A divisor = plain ? static_cast<A>(cz) * static_cast<A>(cy) * static_cast<A>(cx)
                                  : g.template divisor<A>(cz, cy, cx);
          v = static_cast<A>(to_float(dy[at])) / divisor;
        }
        *s = v;
        if (++y < E1) {
          ++oy;
          at += row_step;
          continue;
        }
        y = 0;
        if (++z == E0) {
          z = 0;
          ++pr;
        }
        q = f.outer0 + pr * Pc + pc;
        oz = f.o0[0] + z;
        oy = f.o0[1];
        in = q < grid.outer && oz < OD;
        at = in ? ((q * OD + oz) * OH + oy) * row_step + col_at : Idx{0};
      }
    }
  }

  // The pass of axis a: per tile position along a, the sum of the windows that have it as a tap,
  // from the box before the pass to the box after it, or into dx when it is the last pass.
  // Columns are (column plane, dx position along W, lane); rows are (row plane, D, H) of the box
  // after the pass.
  template <int a, int kTaps>
  PG_HD void sum(const Frame& f, int tid) const {
    const int pass = a == 2 ? 0 : a == 1 ? 1 : (plan.sums[1] ? 2 : 1);
    const bool last = a == 0 || (a == 1 && !plan.sums[0]) || (a == 2 && !plan.sums[1] && !plan.sums[0]);
    const A* src = pass % 2 ? f.region1 : f.region0;
    A* dst = pass % 2 ? f.region0 : f.region1;
    const int L = plan.lanes, Pc = plan.col_planes, T2 = plan.tile[2];
    // Extents along D, H, W before (in) and after (out) the pass.
    const int in0 = plan.lay[0], in1 = a == 0 ? plan.tile[1] : plan.lay[1], in2 = a == 2 ? plan.lay[2] : T2;
    const int out0 = a == 0 ? plan.tile[0] : plan.lay[0], out1 = a == 2 ? plan.lay[1] : plan.tile[1];
    const int src_cols = Pc * in2 * L, cols = Pc * T2 * L, rows = plan.row_planes * out0 * out1;
    // Between consecutive taps: columns (W), rows (H) or planes of rows (D) of the source.
    const int step = plan.tap_step[a] * (a == 2 ? L : a == 1 ? src_cols : in1 * src_cols);
    const Idx D = g.axis[0].in, H = g.axis[1].in, W = g.axis[2].in;
    for (int col = tid; col < cols; col += plan.threads) {
      const int rest = plan.by_lanes.div(col);
      const int l = col - rest * L;
      const int pc = plan.by_tile_w.div(rest);
      const int x = rest - pc * T2;
      const Idx lane = f.c0 + l, ix = f.i0[2] + x;
      const bool col_in = lane < grid.lanes_total && ix < W;
      const Idx col_at = ix * grid.lanes_total + lane;
      // The column's own taps along W (the W pass), else its place in the source's columns.
      const int col_taps = a == 2 ? f.taps[2][x] : 1;
      const A* s_col = src + (pc * in2 + (a == 2 ? f.first[2][x] : x)) * L + l;
      A* d = dst + col;
      // Row (pr, z, y) as in load(); when this pass is the last, `at` is its dx offset.
      const Idx row_step = W * grid.lanes_total;
      int pr = 0, z = 0, y = 0;
      Idx q = f.outer0 + pc, iz = f.i0[0], iy = f.i0[1];
      bool in = last && col_in && q < grid.outer && iz < D;
      Idx at = in ? ((q * D + iz) * H + iy) * row_step + col_at : Idx{0};
      for (int r = 0; r < rows; ++r, d += cols) {
        int n = col_taps, src_row = (pr * in0 + z) * in1 + y;
        if (a == 1) {
          n = f.taps[1][y];
          src_row += f.first[1][y] - y;
        } else if (a == 0) {
          n = f.taps[0][z];
          src_row += (f.first[0][z] - z) * in1;
        }
        const A acc = sum_taps<kTaps>(s_col + src_row * src_cols, n, step);
        if (!last) *d = acc;
        else if (in && iy < H) dx[at] = from_accum<T>(acc);
        if (++y < out1) {
          ++iy;
          at += row_step;
          continue;
        }
        y = 0;
        if (++z == out0) {
          z = 0;
          ++pr;
        }
        q = f.outer0 + pr * Pc + pc;
        iz = f.i0[0] + z;
        iy = f.i0[1];
        in = last && col_in && q < grid.outer && iz < D;
        at = in ? ((q * D + iz) * H + iy) * row_step + col_at : Idx{0};
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
  blk.grid = make_tile_grid<Idx>(p, plan.planes, plan.lanes, plan.tile, tiles);
  blk.dy = static_cast<const T*>(b.dy);
  blk.dx = static_cast<T*>(b.dx);
  return blk;
}

// Windows summed per tap loop, unrolled, when no tile position is a tap of more.
inline constexpr int kTiledUnrolledTaps = 4;

template <class T, class Idx, int kTaps, int kRows>
struct AvgTiledOnCpu {
  AvgTiledBlock<T, Idx> block;
  void operator()(Idx tile_id) const {
    alignas(16) unsigned char smem[kTiledSmemBytes];
    const auto f = block.frame(tile_id, smem);
    auto every_thread = [&](auto phase) {
      for (int t = 0; t < block.plan.threads; ++t) phase(t);
    };
    every_thread([&](int t) { block.template load<kRows>(f, t); });
    every_thread([&](int t) { block.template sum<2, kTaps>(f, t); });
    if (block.plan.sums[1]) every_thread([&](int t) { block.template sum<1, kTaps>(f, t); });
    if (block.plan.sums[0]) every_thread([&](int t) { block.template sum<0, kTaps>(f, t); });
  }
};

#if PG_GPU_COMPILER

template <class T, class Idx, int kTaps, int kRows>
__global__ void __launch_bounds__(kTiledThreads) avg_tiled_kernel(AvgTiledBlock<T, Idx> block, Idx tiles) {
  extern __shared__ double avg_tile_smem[];
  const int tid = threadIdx.x;
  for (Idx t = blockIdx.x; t < tiles; t += gridDim.x) {
    const auto f = block.frame(t, reinterpret_cast<unsigned char*>(avg_tile_smem));
    block.template load<kRows>(f, tid);
    __syncthreads();
    block.template sum<2, kTaps>(f, tid);
    __syncthreads();
    if (block.plan.sums[1]) {
      block.template sum<1, kTaps>(f, tid);
      __syncthreads();
    }
    if (block.plan.sums[0]) {
      block.template sum<0, kTaps>(f, tid);
      __syncthreads();
    }
    // Each barrier above also keeps the next tile's load off a buffer the last pass still reads.
  }
}

#endif

struct AvgGatherTiled : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.tiled", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Every window and layout whose one-position tile fits in shared memory (supports()). Sizes for
  // the fuzz: on the CPU backend's budget, several tiles with a partial last one along every
  // axis (1D rows past 96 elements), several planes per tile, and C split into lane tiles.
  static Domain domain() { return {.windows = WindowRule::any, .shapes = {}, .reach = {5, 14, 100}, .max_channels = 12}; }

  static Support supports(const Problem& p) {
    AvgTilePlan plan;
    if (!plan_avg_tiles(p, p.dtype == DType::f64 ? 8 : 4, TileBudget{1, 1, 1, 1}, &plan))
      return Support::no("window reach too large for a 48 KiB shared-memory tile");
    return Support::yes();
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      AvgTilePlan plan;
      const TileBudget& budget = Exec::is_gpu ? kTiledGpuBudget : kTiledCpuBudget;
      if (!plan_avg_tiles(p, sizeof(accum_t<T>), budget, &plan)) throw Error("avg.gather.tiled: no tile fits");
      int64_t tiles;
      const auto block = make_avg_tiled_block<T, Idx>(p, plan, b, &tiles);
      if (tiles == 0) return;
      const int rows = plan.sums[0] ? 2 : plan.sums[1] ? 1 : 0;
      with_tap_loop(plan, [&]<int kTaps>() {
        if (rows == 2) launch_tiles<kTaps, 2>(ex, block, plan, tiles);
        else if (rows == 1) launch_tiles<kTaps, 1>(ex, block, plan, tiles);
        else launch_tiles<kTaps, 0>(ex, block, plan, tiles);
      });
    });
  }

 private:
  // f.template operator()<kTaps>() with the unrolled tap loop when every position's taps fit it.
  template <class F>
  static void with_tap_loop(const AvgTilePlan& plan, F&& f) {
    if (plan.max_taps <= kTiledUnrolledTaps) f.template operator()<kTiledUnrolledTaps>();
    else f.template operator()<0>();
  }

  template <int kTaps, int kRows, class T, class Idx>
  static void launch_tiles(const CpuExec& ex, const AvgTiledBlock<T, Idx>& block, const AvgTilePlan&, int64_t tiles) {
    ex.template for_each<Idx>(tiles, AvgTiledOnCpu<T, Idx, kTaps, kRows>{block});
  }
#if PG_GPU_COMPILER
  template <int kTaps, int kRows, class T, class Idx>
  static void launch_tiles(const GpuExec& ex, const AvgTiledBlock<T, Idx>& block, const AvgTilePlan& plan, int64_t tiles) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
    avg_tiled_kernel<T, Idx, kTaps, kRows><<<grid, kTiledThreads, plan.bytes, ex.stream>>>(block, static_cast<Idx>(tiles));
    PG_LAUNCH_CHECK("avg_tiled_kernel");
  }
#endif
};

}  // namespace pg
