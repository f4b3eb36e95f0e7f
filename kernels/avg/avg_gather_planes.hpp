// avg.gather.planes: the average pool backward for every window (any kernel, stride, dilation,
// padding, divisor rule) in channels-first, when a plane's dy fits in shared memory, as a gather
// over whole planes.
//
// Why: overlapping windows on small planes (Inception's k3s1p1 on 35x35 and 17x17, Conformer's
// 1D k3s1 on 1000-long rows) left avg.gather.tiled at 26-33% of the copy ceiling. Its tiles cut
// rows short of the plane (halo rows loaded twice), a thread walks one column down the tile's
// rows (one load in flight at a time, and a warp's loads span several planes' row pieces), and
// box3 and k3s2 need W a whole number of 16-byte packs. In channels-first a run of consecutive
// planes is one contiguous range of dy and one of dx, so here a block owns whole planes:
//   1. per-axis window tables (tap count and first window of each position, as
//      avg.gather.tiled's) and, where windows differ in divisor, each window's reciprocal divisor;
//   2. s = dy / divisor of its planes, read flat (consecutive threads, consecutive dy, several
//      loads in flight per thread, every value once, no halo), each window row stored between
//      zero margins;
//   3. dx, each element written once: with stride 1, no dilation and a W kernel up to 8, a work
//      item is kPlanesRun consecutive dx of a row that reads the windows covering them once per
//      window row and sums in registers (the margins hold the zeros of missing windows: no
//      bounds checks); else per element from the tables.
// Sums run D, then H, then W windows, each in a fixed order: deterministic, no atomics, no zeroing
// pass. A term is dy times the window's reciprocal divisor (two roundings, inside the oracle's
// (terms + 2) u), or dy / divisor where no position is a tap of two windows, so that planes agrees
// bitwise with every other avg variant there.
// H100, 2026-11-26 (bench/results/2026-11-26_h100_avg_planes.md): Inception Mixed_5b 0.0749 ->
// 0.0301 ms (67% of copy), Conformer 0.131 -> 0.053 (82%), against avg.gather.tiled.
// Tried and dropped (H100, 2026-11-27, bench/results/2026-11-27_planes_experiments.md): blocks
// resident for the whole launch, looping over groups with the tables built once, and a register
// prefetch of the next group's dy. Only the count_include_pad=false rows gained (9-16%: their
// set-up divides once per window); the rest lost 4-14% (a fixed share of groups per block leaves
// a ragged last round; 48-58 registers, fewer blocks), the prefetch 22% on Mixed_5b.
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kPlanesCpuBudget), so fuzz-sized problems span several blocks with several planes each and a
// partial last block.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "src/model/backend.hpp"
#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

inline constexpr int kPlanesThreads = 256;             // threads per block on a GPU
inline constexpr size_t kPlanesSmemBytes = 48 * 1024;  // shared memory a block may use without opt-in

// Planes per block: until the block has `elements` dx elements (16 per thread on a GPU: enough
// to pay for the tables and the barrier; 16 KiB of f32 dy on a square plane, so several blocks
// share a multiprocessor), run by `threads` threads.
struct PlanesBudget {
  int64_t elements;
  int threads;
};
inline constexpr PlanesBudget kPlanesGpuBudget{4096, kPlanesThreads};
// On the CPU backend, small: fuzz-sized problems span several blocks.
inline constexpr PlanesBudget kPlanesCpuBudget{40, 7};

// dx per work item of sum_runs(); the W kernel it unrolls exactly (the common 3), and the widest
// it takes, with the taps past the kernel predicated off.
inline constexpr int kPlanesRun = 5;
inline constexpr int kPlanesExactRunW = 3;
inline constexpr int kPlanesMaxRunW = 8;
// dy values each thread loads before it uses any.
inline constexpr int kPlanesLoadBatch = 8;

// How planes are grouped and shared memory carved, the same on the host and in the kernel.
struct AvgPlanesPlan {
  int planes;             // outer planes per block (the last block may have fewer)
  int in_vol, out_vol;    // dx and dy elements of one plane
  int table_axes;         // axes with tables: D, H and W, or D and H when sum_runs() runs
  int table_at[kAxes];    // where axis a's tables start: first windows, then tap counts
  int tap_step[kAxes];    // window-index gap between consecutive windows sharing a tap
  int max_taps_w;         // the most windows any position is a tap of along W
  // W has stride 1, no dilation and a kernel of exactly kPlanesExactRunW or at most
  // kPlanesMaxRunW: run_w is that bound and sum_runs() runs; else 0 and sum() runs.
  int run_w;
  int run_rows, runs_per_row;  // dx rows (D x H) per plane, and kPlanesRun-wide runs per row
  Divider<int32_t> by_runs;
  // s holds each window row (D x H of dy) at `pitch` apart, after `margin_lo` zeros and before
  // `margin_hi` zeros, so that sum_runs() reads a run's windows without bounds checks.
  int margin_lo, margin_hi, pitch, plane_pitch, out_rows;
  Divider<int32_t> by_margins;
  // A thread's next dy value is plan.threads on: step_rows window rows and step_cols columns.
  int step_rows, step_cols;
  // When windows differ in divisor: the reciprocal divisor of each window of a plane (out_vol of
  // them, else none) at byte recip_at; a thread's next dy value is step_window windows on in it.
  int recips, step_window;
  Divider<int32_t> by_out_vol;
  size_t recip_at;
  int threads;
  bool uniform;           // every window has the same divisor: `divisor`
  // No position a tap of two windows (disjoint windows, one window per plane): dx is one
  // dy / divisor, divided as every other variant divides (the avg variants agree bitwise there),
  // and the table holds divisors. Else a reciprocal multiplies.
  bool divide;
  double divisor;
  Divider<int32_t> by_in[kAxes], by_out[kAxes];
  size_t bytes;           // s of `planes` planes, then the tables
};

// The plan for blocks of about `budget` dx elements, fewer planes until shared memory fits; false
// when one plane does not fit or its offsets pass int32.
inline bool plan_avg_planes(const Problem& p, size_t accum_size, const PlanesBudget& budget, AvgPlanesPlan* plan) {
  if (p.layout != Layout::channels_first) return false;
  AvgPlanesPlan q{};
  const int64_t in_vol = p.in[0] * p.in[1] * p.in[2], out_vol = p.out[0] * p.out[1] * p.out[2];
  if (in_vol < 1 || out_vol < 1 || in_vol >= (int64_t{1} << 30) || out_vol >= (int64_t{1} << 30)) return false;
  q.in_vol = static_cast<int>(in_vol);
  q.out_vol = static_cast<int>(out_vol);
  q.threads = budget.threads;
  // Window-index gap between consecutive windows sharing a tap along axis a, and the most windows
  // a position is a tap of: no more than the axis has (a 2^40 kernel on 4 inputs: 5).
  auto tap_step = [&](int a) { return p.dilation[a] / std::gcd(p.stride[a], p.dilation[a]); };
  auto max_taps = [&](int a) {
    const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
    return std::min({p.kernel[a], reach / (p.stride[a] * tap_step(a)) + 1, p.out[a]});
  };
  q.max_taps_w = static_cast<int>(max_taps(2));
  const bool unit_w = p.stride[2] == 1 && p.dilation[2] == 1;
  q.run_w = !unit_w || p.kernel[2] > kPlanesMaxRunW ? 0 : p.kernel[2] == kPlanesExactRunW ? kPlanesExactRunW : kPlanesMaxRunW;
  q.run_rows = static_cast<int>(p.in[0] * p.in[1]);
  q.runs_per_row = static_cast<int>((p.in[2] + kPlanesRun - 1) / kPlanesRun);
  q.by_runs = Divider<int32_t>(q.runs_per_row);
  // Runs find their W windows without tables: a long 1D row (TCN's 4,096) then fits.
  q.table_axes = q.run_w > 0 ? kAxes - 1 : kAxes;
  int64_t table = 0;
  for (int a = 0; a < kAxes; ++a) {
    q.table_at[a] = static_cast<int>(table);
    if (a < q.table_axes) table += 2 * p.in[a];
    q.tap_step[a] = static_cast<int>(tap_step(a));
    q.by_in[a] = Divider<int32_t>(p.in[a]);
    q.by_out[a] = Divider<int32_t>(p.out[a]);
  }
  // A run reads windows x0 + pad - (run_w - 1) .. x0 + kPlanesRun - 1 + pad: at most run_w - 1
  // before the row, and (the last run may pass W) run_w + kPlanesRun - 2 after its last window.
  q.margin_lo = q.run_w > 0 ? q.run_w - 1 : 0;
  q.margin_hi = q.run_w > 0 ? q.run_w + kPlanesRun - 2 : 0;
  q.by_margins = Divider<int32_t>(std::max(1, q.margin_lo + q.margin_hi));
  const int64_t pitch = p.out[2] + q.margin_lo + q.margin_hi, plane_pitch = p.out[0] * p.out[1] * pitch;
  if (plane_pitch >= (int64_t{1} << 30)) return false;
  q.pitch = static_cast<int>(pitch);
  q.plane_pitch = static_cast<int>(plane_pitch);
  q.out_rows = static_cast<int>(p.out[0] * p.out[1]);
  q.step_rows = static_cast<int>(budget.threads / p.out[2]);
  q.step_cols = static_cast<int>(budget.threads % p.out[2]);
  q.uniform = avg_uniform_divisor(p, &q.divisor);
  q.divide = max_taps(0) <= 1 && max_taps(1) <= 1 && max_taps(2) <= 1;  // no position a tap of two windows
  const int64_t recips = q.uniform ? 0 : out_vol;
  q.recips = static_cast<int>(recips);
  q.step_window = static_cast<int>(budget.threads % out_vol);
  q.by_out_vol = Divider<int32_t>(out_vol);
  const int64_t outer = std::max<int64_t>(1, p.n * p.c);
  int64_t planes = std::clamp<int64_t>(budget.elements / in_vol, 1, outer);
  // Of half to all of those planes, the count whose last round of phase-3 work items keeps the
  // most threads busy: a block waits for its slowest thread. (Runs of 7 on Inception's 35 x 35
  // gave 525 items to 256 threads, a third round for 13 of them: 12% slower than runs of 5, 735
  // items in 2.87 rounds; H100, 2026-11-26.)
  const int64_t items = q.run_w > 0 ? int64_t{q.run_rows} * q.runs_per_row : in_vol;
  double best = 0;
  for (int64_t c = std::max<int64_t>(1, planes / 2), top = planes; c <= top; ++c) {
    const int64_t work = c * items, rounds = (work + budget.threads - 1) / budget.threads;
    const double busy = static_cast<double>(work) / static_cast<double>(rounds * budget.threads);
    if (busy >= best) {
      best = busy;
      planes = c;
    }
  }
  for (;;) {
    // s, the int tables, then (8-byte aligned) the reciprocals.
    const int64_t recip_at = (planes * plane_pitch * static_cast<int64_t>(accum_size) + table * 4 + 7) / 8 * 8;
    const int64_t bytes = recip_at + recips * static_cast<int64_t>(accum_size);
    if (bytes <= static_cast<int64_t>(kPlanesSmemBytes)) {
      q.planes = static_cast<int>(planes);
      q.recip_at = static_cast<size_t>(recip_at);
      q.bytes = static_cast<size_t>(bytes);
      break;
    }
    if (planes == 1) return false;
    planes = (planes + 1) / 2;
  }
  *plan = q;
  return true;
}

// The work of one block on its planes, as phases for plan.threads cooperating threads; every
// thread finishes a phase before any starts the next (a barrier on the GPU, phase-major order on
// the CPU).
template <class T, class Idx>
struct AvgPlanesBlock {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  AvgPlanesPlan plan;
  Idx outer;  // N * C planes
  const T* dy;
  T* dx;

  struct Frame {
    Idx outer0;  // first plane of the block
    int planes;  // planes of this block
    A* s;
    int* first[kAxes];  // per position along axis a: its first covering window that has it as a tap
    int* taps[kAxes];   // per position along axis a: how many windows have it as a tap
    A* recip;           // per window of a plane, 1 / divisor (the divisor when plan.divide)
  };

  PG_HD Frame frame(Idx block_id, unsigned char* smem) const {
    Frame f;
    f.outer0 = block_id * plan.planes;
    const Idx left = outer - f.outer0;
    f.planes = left < plan.planes ? static_cast<int>(left) : plan.planes;
    f.s = reinterpret_cast<A*>(smem);
    int* ints = reinterpret_cast<int*>(smem + static_cast<size_t>(plan.planes) * plan.plane_pitch * sizeof(A));
    for (int a = 0; a < kAxes; ++a) {
      f.first[a] = a < plan.table_axes ? ints + plan.table_at[a] : nullptr;
      f.taps[a] = a < plan.table_axes ? f.first[a] + g.axis[a].in : nullptr;
    }
    f.recip = reinterpret_cast<A*>(smem + plan.recip_at);
    return f;
  }

  // Plane, D and H position of dx row r, counted over the block's planes. kRows: 0 a 1D problem
  // (D and H one position), 1 2D, 2 3D.
  template <int kRows>
  PG_HD void split_row(int r, int* pl, int* z, int* y) const {
    *pl = r;
    *z = *y = 0;
    if constexpr (kRows >= 1) {
      *pl = plan.by_in[1].div(r);
      *y = r - *pl * static_cast<int>(g.axis[1].in);
    }
    if constexpr (kRows == 2) {
      const int r2 = *pl;
      *pl = plan.by_in[0].div(r2);
      *z = r2 - *pl * static_cast<int>(g.axis[0].in);
    }
  }

  // Phase 1: the window tables of every axis, and (when windows differ in divisor) the table of
  // reciprocal divisors.
  PG_HD void tables(const Frame& f, int tid) const {
    // Unrolled over every axis, so that a is a constant in each copy: with a runtime bound the
    // frame's table pointers went to the stack (72 bytes, every rows' lookup a local load: Inception
    // Mixed_5b 0.0308 -> 0.0411 ms, H100).
#pragma unroll
    for (int a = 0; a < kAxes; ++a) {
      if (a >= plan.table_axes) continue;
      const AvgAxis<Idx>& ax = g.axis[a];
      for (int i = tid; i < static_cast<int>(ax.in); i += plan.threads) {
        Idx lo, hi;
        ax.covering(i, &lo, &hi);
        while (lo <= hi && !ax.is_tap(i, lo)) ++lo;
        f.first[a][i] = lo <= hi ? static_cast<int>(lo) : 0;
        f.taps[a][i] = lo <= hi ? static_cast<int>((hi - lo) / plan.tap_step[a]) + 1 : 0;
      }
    }
    // The reciprocal divisor of each window of a plane, shared by the block's planes: one division
    // and three counts per window instead of per dy value. (A table by per-axis counts, (k + 1)^3
    // entries, left the counts per dy value: Inception tf-port 0.0706 ms against 0.0518 now,
    // Conformer 0.0757 against 0.0584; H100, 2026-11-26.)
    for (int w = tid; w < plan.recips; w += plan.threads) {
      const int r = plan.by_out[2].div(w), r2 = plan.by_out[1].div(r);
      const int ox = w - r * static_cast<int>(g.axis[2].out), oy = r - r2 * static_cast<int>(g.axis[1].out);
      const A divisor = g.template divisor<A>(g.window_count(0, plan.by_out[0].mod(r2)), g.window_count(1, oy), g.window_count(2, ox));
      f.recip[w] = plan.divide ? divisor : A(1) / divisor;
    }
  }

  // Phase 2 (after the tables when windows differ in divisor): s = dy / divisor of the block's
  // planes, each dy value read once, consecutive threads reading consecutive values.
  PG_HD void load(const Frame& f, int tid) const {
    const int n = f.planes * plan.out_vol;
    const T* src = dy + f.outer0 * plan.out_vol + tid;
    const int OW = static_cast<int>(g.axis[2].out);
    // The product with the reciprocal rounds each term twice: inside the oracle's (terms + 2) u.
    // Disjoint windows divide (plan.divide).
    const A uniform = plan.divide ? static_cast<A>(plan.divisor) : A(1) / static_cast<A>(plan.divisor);
    // Window row and column of dy value j, stepped by plan.threads values at a time.
    int row = plan.by_out[2].div(tid), ox = tid - row * OW;
    int window = tid - plan.by_out_vol.div(tid) * plan.out_vol;  // in its plane
    // kPlanesLoadBatch loads issued before any is used: one at a time, a thread waits a DRAM
    // round trip per value.
    for (int j0 = tid; j0 < n; j0 += kPlanesLoadBatch * plan.threads, src += kPlanesLoadBatch * plan.threads) {
      A v[kPlanesLoadBatch];
#pragma unroll
      for (int b = 0; b < kPlanesLoadBatch; ++b)
        v[b] = j0 + b * plan.threads < n ? static_cast<A>(to_float(src[b * plan.threads])) : A(0);
#pragma unroll
      for (int b = 0; b < kPlanesLoadBatch; ++b) {
        if (j0 + b * plan.threads >= n) break;
        const A by = plan.uniform ? uniform : f.recip[window];
        f.s[row * plan.pitch + plan.margin_lo + ox] = plan.divide ? v[b] / by : v[b] * by;
        ox += plan.step_cols;
        row += plan.step_rows;
        if (ox >= OW) {
          ox -= OW;
          ++row;
        }
        window += plan.step_window;
        if (window >= plan.out_vol) window -= plan.out_vol;
      }
    }
    // The margins' zeros.
    const int per_row = plan.margin_lo + plan.margin_hi;
    const int cells = per_row > 0 ? f.planes * plan.out_rows * per_row : 0;
    for (int m = tid; m < cells; m += plan.threads) {
      const int r = plan.by_margins.div(m), c = m - r * per_row;
      f.s[r * plan.pitch + (c < plan.margin_lo ? c : OW + c)] = A(0);
    }
  }

  // Phase 3: every dx element of the block's planes, the sum of s over the windows that have it
  // as a tap. kRows: 0 a 1D problem (D and H one position), 1 2D, 2 3D.
  template <int kTaps, int kRows>
  PG_HD void sum(const Frame& f, int tid) const {
    const int n = f.planes * plan.in_vol;
    T* dst = dx + f.outer0 * plan.in_vol;
    const int W = static_cast<int>(g.axis[2].in), OH = static_cast<int>(g.axis[1].out);
    for (int j = tid; j < n; j += plan.threads) {
      const int r = plan.by_in[2].div(j);
      const int x = j - r * W;
      int pl, z, y;
      split_row<kRows>(r, &pl, &z, &y);
      const A* plane = f.s + pl * plan.plane_pitch + plan.margin_lo;
      const int fx = f.first[2][x], nx = f.taps[2][x], sx = plan.tap_step[2];
      const int fy = kRows >= 1 ? f.first[1][y] : 0, ny = kRows >= 1 ? f.taps[1][y] : 1;
      const int fz = kRows == 2 ? f.first[0][z] : 0, nz = kRows == 2 ? f.taps[0][z] : 1;
      A acc = A(0);
      for (int tz = 0; tz < nz; ++tz) {
        const A* zs = plane + (fz + tz * plan.tap_step[0]) * OH * plan.pitch;
        for (int ty = 0; ty < ny; ++ty) acc += sum_taps<kTaps>(zs + (fy + ty * plan.tap_step[1]) * plan.pitch + fx, nx, sx);
      }
      dst[j] = from_accum<T>(acc);
    }
  }

  // Phase 3 when W has stride 1, no dilation and a kernel of kRunW (kPlanesExactRunW) or at most
  // kRunW (kPlanesMaxRunW): a work item is kPlanesRun consecutive dx of one row. Per window row
  // (D and H as in sum()), it reads the kPlanesRun + kRunW - 1 windows that cover them once, with
  // zeros from the margins where there is no window, and adds each dx its kernel_w of them in
  // registers, instead of reading kernel_w values per dx element. kPlanesRun is odd: consecutive
  // threads' reads, kPlanesRun words apart, fall in distinct shared-memory banks.
  template <int kRunW, int kRows>
  PG_HD void sum_runs(const Frame& f, int tid) const {
    constexpr int R = kPlanesRun, L = kPlanesRun + kRunW - 1;
    constexpr bool kExact = kRunW == kPlanesExactRunW;
    const int W = static_cast<int>(g.axis[2].in), H = static_cast<int>(g.axis[1].in);
    const int D = static_cast<int>(g.axis[0].in), OH = static_cast<int>(g.axis[1].out);
    const int KW = static_cast<int>(g.axis[2].kernel), PW = static_cast<int>(g.axis[2].pad_begin);
    const int n = f.planes * plan.run_rows * plan.runs_per_row;
    T* dst = dx + f.outer0 * plan.in_vol;
    for (int i = tid; i < n; i += plan.threads) {
      const int r = plan.by_runs.div(i);
      const int x0 = (i - r * plan.runs_per_row) * R;
      int pl, z, y;
      split_row<kRows>(r, &pl, &z, &y);
      // v[j] is window x0 + PW - (kRunW - 1) + j; dx x0 + k takes v[k + kRunW - 1 - t], t < KW
      // (window x + PW - t). The first is at most margin_lo before its row.
      const A* plane = f.s + pl * plan.plane_pitch + plan.margin_lo + x0 + PW - (kRunW - 1);
      const int fy = kRows >= 1 ? f.first[1][y] : 0, ny = kRows >= 1 ? f.taps[1][y] : 1;
      const int fz = kRows == 2 ? f.first[0][z] : 0, nz = kRows == 2 ? f.taps[0][z] : 1;
      A acc[R];
#pragma unroll
      for (int k = 0; k < R; ++k) acc[k] = A(0);
      for (int tz = 0; tz < nz; ++tz) {
        const A* zs = plane + (fz + tz * plan.tap_step[0]) * OH * plan.pitch;
        for (int ty = 0; ty < ny; ++ty) {
          const A* row = zs + (fy + ty * plan.tap_step[1]) * plan.pitch;
          A v[L];
#pragma unroll
          for (int j = 0; j < L; ++j) v[j] = row[j];
#pragma unroll
          for (int k = 0; k < R; ++k)
#pragma unroll
            for (int t = 0; t < kRunW; ++t)
              if (kExact || t < KW) acc[k] += v[k + kRunW - 1 - t];
        }
      }
      T* out = dst + (pl * D + z) * H * W + y * W + x0;
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (x0 + k < W) out[k] = from_accum<T>(acc[k]);
    }
  }
};

// Windows summed per W tap loop of sum(), unrolled, when no position is a tap of more.
inline constexpr int kPlanesUnrolledTaps = 4;

// Phase 3 of a block: sum_runs<kRunW>() when kRunW > 0, else sum<kTaps>().
template <int kRunW, int kTaps, int kRows, class T, class Idx>
PG_HD void avg_planes_sum(const AvgPlanesBlock<T, Idx>& block, const typename AvgPlanesBlock<T, Idx>::Frame& f, int tid) {
  if constexpr (kRunW > 0) block.template sum_runs<kRunW, kRows>(f, tid);
  else block.template sum<kTaps, kRows>(f, tid);
}

template <class T, class Idx, int kRunW, int kTaps, int kRows>
struct AvgPlanesOnCpu {
  AvgPlanesBlock<T, Idx> block;
  void operator()(Idx block_id) const {
    alignas(16) unsigned char smem[kPlanesSmemBytes];
    const auto f = block.frame(block_id, smem);
    for (int t = 0; t < block.plan.threads; ++t) block.tables(f, t);
    for (int t = 0; t < block.plan.threads; ++t) block.load(f, t);
    for (int t = 0; t < block.plan.threads; ++t) avg_planes_sum<kRunW, kTaps, kRows>(block, f, t);
  }
};

#if PG_GPU_COMPILER

template <class T, class Idx, int kRunW, int kTaps, int kRows>
__global__ void __launch_bounds__(kPlanesThreads) avg_planes_kernel(AvgPlanesBlock<T, Idx> block, Idx blocks) {
  extern __shared__ double avg_planes_smem[];
  const int tid = threadIdx.x;
  for (Idx b = blockIdx.x; b < blocks; b += gridDim.x) {
    const auto f = block.frame(b, reinterpret_cast<unsigned char*>(avg_planes_smem));
    block.tables(f, tid);
    if (!block.plan.uniform) __syncthreads();  // load() reads the reciprocals
    block.load(f, tid);
    __syncthreads();
    avg_planes_sum<kRunW, kTaps, kRows>(block, f, tid);
    __syncthreads();  // the next block's load must not overwrite what this sum still reads
  }
}

#endif

struct AvgGatherPlanes : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.planes", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Every window in channels-first whose plane fits in shared memory (supports()). Sizes for the
  // fuzz: on the CPU backend's budget, blocks of several small planes, of one long row, and a
  // partial last block; wide W kernels (past the unrolled tap loop) on 1D rows.
  static Domain domain() {
    return {.windows = WindowRule::any, .shapes = {}, .layouts = {Layout::channels_first}, .reach = {5, 9, 60}};
  }

  static Support supports(const Problem& p) {
    AvgPlanesPlan plan;
    if (!plan_avg_planes(p, p.dtype == DType::f64 ? 8 : 4, PlanesBudget{1, 1}, &plan))
      return Support::no("a plane's dy does not fit a 48 KiB shared-memory block");
    return Support::yes();
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    if (p.in_elems() == 0) return;
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      AvgPlanesPlan plan;
      const PlanesBudget& budget = Exec::is_gpu ? kPlanesGpuBudget : kPlanesCpuBudget;
      if (!plan_avg_planes(p, sizeof(accum_t<T>), budget, &plan)) throw Error("avg.gather.planes: no plane fits");
      AvgPlanesBlock<T, Idx> block{make_avg_shape<Idx>(p), plan, static_cast<Idx>(p.n * p.c),
                                   static_cast<const T*>(b.dy), static_cast<T*>(b.dx)};
      const int64_t blocks = (p.n * p.c + plan.planes - 1) / plan.planes;
      const int rows = p.dims == 3 ? 2 : p.dims == 2 ? 1 : 0;
      auto go = [&]<int kRunW, int kTaps>() {
        if (rows == 2) launch_blocks<kRunW, kTaps, 2>(ex, block, blocks);
        else if (rows == 1) launch_blocks<kRunW, kTaps, 1>(ex, block, blocks);
        else launch_blocks<kRunW, kTaps, 0>(ex, block, blocks);
      };
      if (plan.run_w == kPlanesExactRunW) go.template operator()<kPlanesExactRunW, 0>();
      else if (plan.run_w == kPlanesMaxRunW) go.template operator()<kPlanesMaxRunW, 0>();
      else if (plan.max_taps_w <= kPlanesUnrolledTaps) go.template operator()<0, kPlanesUnrolledTaps>();
      else go.template operator()<0, 0>();
    });
  }

 private:
  template <int kRunW, int kTaps, int kRows, class T, class Idx>
  static void launch_blocks(const CpuExec& ex, const AvgPlanesBlock<T, Idx>& block, int64_t blocks) {
    ex.template for_each<Idx>(blocks, AvgPlanesOnCpu<T, Idx, kRunW, kTaps, kRows>{block});
  }
#if PG_GPU_COMPILER
  template <int kRunW, int kTaps, int kRows, class T, class Idx>
  static void launch_blocks(const GpuExec& ex, const AvgPlanesBlock<T, Idx>& block, int64_t blocks) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{1} << 20));
    avg_planes_kernel<T, Idx, kRunW, kTaps, kRows><<<grid, kPlanesThreads, block.plan.bytes, ex.stream>>>(block, static_cast<Idx>(blocks));
    PG_LAUNCH_CHECK("avg_planes_kernel");
  }
#endif
};

}  // namespace pg
