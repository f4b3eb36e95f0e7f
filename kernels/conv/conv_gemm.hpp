// conv.gemm: backward-data as an implicit GEMM per stride phase, the formulation of Composable
// Kernel's conv_bwd_data (../shared/seeds/003_*): no dx position multiplies a zero.
//
// Along one axis, the dx positions i = i0 + j*stride (one phase i0 < stride) are all reached by
// the same taps, t = t0 + q*t_step (kernels/conv/conv_geometry.hpp), from dy at
// o = j + off0 - q*o_step. So, per phase and group,
//   dx[m = (n, j), c] = sum over (q, k) of dy[n, k, o(j, q)] * w[k, c, t(q)]
// is a GEMM with M = N * (phase positions), N = C/groups and a reduction over
// (taps of the phase) x K/groups, the A operand gathered from dy with a bounds check per (row,
// tap) and zero outside. Every phase and group is one slice of one launch (blockIdx.z, the
// phase with the most work first), so a strided problem fills the GPU as a stride-1 one does.
//
// Why it is fast: a block computes a BM x BN tile of dx with 256 threads, each an 8 x 8
// register tile (64 FMAs per 16 shared-memory reads); BK = 8 reduction steps per stage, double
// buffered in shared memory with the next stage fetched into registers while the current one
// is multiplied, one barrier per stage. The reduction runs tap-major, k-minor: a row's dy
// address and bounds check are computed once per tap, and a stage costs one add per load. The
// weights are rearranged once per launch into the workspace as [group][tap][K/groups][C/groups],
// zero-padded to whole tiles and already in the accumulator type, so B tiles load as contiguous
// rows with no bounds checks. Tiles: 128 x 128 (16 x 16 threads), or 256 x 64 (32 x 8) when
// C/groups <= 64, so the 3D row's C = 64 does not leave half of every tile empty. BK = 16
// would hide more latency per barrier but takes 137 registers (nvcc 13, sm_90), one block per
// multiprocessor instead of two (and measured slower: 56% and 55% of the FMA ceiling on the
// fp32 2D and 3D rows). Measured on an H100 (bench/results/2026-11-26_h100_conv_gemm_depthwise.md):
// 44.6 and 40.3 TFLOP/s on the fp32 2D and 3D rows, 70.0% and 63.2% of the same-run FMA ceiling
// (2026-11-24: 63.8% and 56.1%, before fetch() stepped one pointer and the schedule was unrolled
// by two: SASS of the 256 x 64 stage, about 180 instructions besides its 512 FMAs, was 235).
//
// The per-thread steps (begin, fetch, stage, multiply, advance, finish) are plain member
// functions and conv_gemm_schedule() orders them between barriers; the kernel runs it for one
// thread, tests/conv_gemm_host_test.cpp for all 256 threads of a block in turn on the host.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "kernels/conv/conv_geometry.hpp"
#include "src/model/conv_variant.hpp"

namespace pg {

inline constexpr int kGemmThreads = 256;
inline constexpr int kGemmBK = 8;     // reduction steps per shared-memory stage
inline constexpr int kGemmPadA = 4;   // keeps channels-last A stores off one bank, float4 reads aligned

// The tile for a problem: 128 x 128, or 256 x 64 when a 128-wide C tile would be mostly empty.
inline int gemm_tile_n(const ConvProblem& p) { return p.c_per_group() <= 64 ? 64 : 128; }

inline int64_t round_up_to(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

// Up to this many phases the launch orders them by work, the largest first (order_phases_by_work).
inline constexpr int kOrderedPhases = 64;

// W: the workspace's element type (the accumulator type here; conv.gemm.tc keeps T).
template <class T, class W = accum_t<T>>
struct ConvGemmArgs {
  ConvShape<int32_t> g;
  int32_t phases[kAxes];  // min(stride, in) per axis
  // blockIdx.z / groups -> phase, when `ordered`; else the identity.
  uint8_t phase_order[kOrderedPhases];
  bool ordered;
  int32_t kg_pad, cg_pad;  // K/groups and C/groups rounded up to whole tiles
  int32_t k_stride;        // dy elements from one k to the next: 1 channels-last, else a plane
  bool kg_whole;           // K/groups is whole stages: no stage reads a k past the group's end
  const T* dy;
  const W* w;  // the workspace: conv.gemm's [group][tap][kg_pad][cg_pad]
  T* dx;
};

// A block's phase along each axis: dx positions i0 + j*stride (j < jn), reached by the taps
// t0 + q*t_step (q < taps_in) from dy at j + off0 - q*o_step. The same for every thread, so it
// lives in shared memory rather than in each thread's registers.
struct ConvGemmPhase {
  int32_t i0[kAxes], jn[kAxes], t0[kAxes], t_step[kAxes], off0[kAxes], o_step[kAxes], taps_in[kAxes];
  int32_t j_plane;  // jn[0] * jn[1] * jn[2]
};

// Phase number `phase` (row-major over the axes' phases) and its tap count.
PG_HD ConvGemmPhase conv_gemm_phase(const ConvShape<int32_t>& g, const int32_t* phases, int32_t phase, int32_t& taps) {
  ConvGemmPhase ph;
  ph.j_plane = 1;
  taps = 1;
  for (int ax = kAxes - 1; ax >= 0; --ax) {
    ph.i0[ax] = phase % phases[ax];
    phase /= phases[ax];
    const int32_t s = g.stride[ax], d = g.dilation[ax];
    ph.jn[ax] = (g.in[ax] - ph.i0[ax] + s - 1) / s;
    ph.j_plane *= ph.jn[ax];
    // The taps of this phase: t*d = i0 + pad (mod s), see conv_geometry.hpp.
    const int32_t gd = g.step_gcd[ax], reach = ph.i0[ax] + g.pad[ax];
    ph.t_step[ax] = g.t_step[ax];
    ph.o_step[ax] = g.o_step[ax];
    ph.t0[ax] = 0;
    while (ph.t0[ax] < ph.t_step[ax] && (reach - ph.t0[ax] * d) % s != 0) ++ph.t0[ax];
    const bool any = reach % gd == 0 && ph.t0[ax] < g.kernel[ax];
    ph.taps_in[ax] = any ? (g.kernel[ax] - 1 - ph.t0[ax]) / ph.t_step[ax] + 1 : 0;
    ph.off0[ax] = any ? (reach - ph.t0[ax] * d) / s : 0;
    taps *= ph.taps_in[ax];
  }
  return ph;
}

// A thread's rows of the A operand: each row's sample and phase coordinates, and the dy offset
// of the current tap (-1: the tap reaches outside dy for this row, or the row is past the
// phase's end).
template <int kRows>
struct ConvGemmRows {
  int32_t n[kRows], j[kRows][kAxes], at[kRows];

  PG_HD void place(int r, int32_t m, int32_t rows_in_phase, const ConvGemmPhase& ph) {
    n[r] = m < rows_in_phase ? m / ph.j_plane : -1;
    const int32_t rest = m % ph.j_plane;
    j[r][0] = rest / (ph.jn[1] * ph.jn[2]);
    j[r][1] = rest / ph.jn[2] % ph.jn[1];
    j[r][2] = rest % ph.jn[2];
  }

  // The dy offsets of tap q (q per axis) for the channels of `group`.
  PG_HD void to_tap(const ConvShape<int32_t>& g, const ConvGemmPhase& ph, const int32_t* q, int32_t group) {
    int32_t off[kAxes];
    for (int ax = 0; ax < kAxes; ++ax) off[ax] = ph.off0[ax] - q[ax] * ph.o_step[ax];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      int32_t o[kAxes];
      bool inside = n[r] >= 0;
      for (int ax = 0; ax < kAxes; ++ax) {
        o[ax] = j[r][ax] + off[ax];
        inside = inside && o[ax] >= 0 && o[ax] < g.out[ax];
      }
      at[r] = inside ? g.y_offset(n[r], group * g.kg, o[0], o[1], o[2]) : -1;
    }
  }
};

// The next tap of a phase: q[2] fastest, then q[1], then q[0].
PG_HD void conv_gemm_next_tap(int32_t (&q)[kAxes], const ConvGemmPhase& ph) {
  if (++q[2] == ph.taps_in[2]) {
    q[2] = 0;
    if (++q[1] == ph.taps_in[1]) {
      q[1] = 0;
      ++q[0];
    }
  }
}

template <class A, int BM, int BN>
struct ConvGemmSmem {
  alignas(16) A a[2][kGemmBK][BM + kGemmPadA];
  alignas(16) A b[2][kGemmBK][BN];
  ConvGemmPhase phase;  // written by thread 0 in begin(), read after the first barrier
};

template <class T, int BM, int BN, bool CL>
struct ConvGemmThread {
  using A = accum_t<T>;
  using Smem = ConvGemmSmem<A, BM, BN>;
  static constexpr int TX = BM / 8, TY = BN / 8;  // threads along m and along c
  static_assert(TX * TY == kGemmThreads, "a block is 256 threads of 8 x 8");
  static constexpr int kALoads = BM * kGemmBK / kGemmThreads;
  static constexpr int kBLoads = BN * kGemmBK / kGemmThreads;
  // Channels-first dy is contiguous along m: a thread loads one row at kALoads k's. Channels-last
  // dy is contiguous along k: a thread loads one k of kALoads rows.
  static constexpr int kRows = CL ? kALoads : 1;

  using Args = ConvGemmArgs<T>;
  Args args;
  int tid;
  // The block's group and tile.
  int32_t group, m_base, c_base, rows_in_phase;
  // Where the reduction is: the chunk of K/groups and the tap (q per axis).
  int32_t chunk, chunks, q[kAxes], iterations_left;
  ConvGemmRows<kRows> rows;
  int32_t b_at;  // the workspace offset of the current (tap, chunk) tile's first element
  A a_next[kALoads], b_next[kBLoads];
  A acc[8][8];

  PG_HD int a_row(int r) const { return CL ? tid / kGemmBK + r * (kGemmThreads / kGemmBK) : tid % BM; }
  PG_HD int a_col(int l) const { return CL ? tid % kGemmBK : tid / BM + l * (kGemmThreads / BM); }
  PG_HD int b_row() const { return tid / (BN / kBLoads); }
  PG_HD int b_col() const { return tid % (BN / kBLoads) * kBLoads; }
  // The thread's place in the TX x TY grid of 8 x 8 tiles, row-major. Grouping a warp as 8 x 4
  // places reads fewer shared-memory wavefronts per step, but the kernel is issue-bound, not
  // shared-memory-bound (ncu: FFMA 73-79% of issued instructions, issue slots 73-77% busy), and
  // measured the same on 128 x 128 tiles and 3% slower on 256 x 64 (H100, 2026-11-24:
  // bench/results/2026-11-24_h100_conv.md).
  PG_HD int tx() const { return tid % TX; }
  PG_HD int ty() const { return tid / TX; }
  PG_HD int m_of(int i) const { return (i < 4 ? 0 : BM / 2) + tx() * 4 + i % 4; }
  PG_HD int c_of(int j) const { return (j < 4 ? 0 : BN / 2) + ty() * 4 + j % 4; }

  // Sets up the block (bx: m tile, by: c tile, bz: phase * groups + group). False when the tile
  // starts past its phase's positions: the whole block has nothing to do (the grid is sized
  // for the largest phase).
  PG_HD bool begin(const ConvGemmArgs<T>& a, Smem& smem, int thread, int bx, int by, int bz) {
    args = a;
    tid = thread;
    const ConvShape<int32_t>& g = args.g;
    group = bz % g.groups;
    int32_t phase = bz / g.groups;
    // From the kernel parameter, not the member copy: a run-time index into the copy would put
    // all of it in local memory (784 bytes of stack and 260 bytes of spills in f32 with nvcc 13;
    // 26.8 instead of 40.5 TFLOP/s on the H100's fp32 2D row, .exp driver 2026-11-24).
    if (a.ordered) phase = a.phase_order[phase];
    int32_t taps;
    const ConvGemmPhase ph = conv_gemm_phase(g, args.phases, phase, taps);
    if (tid == 0) smem.phase = ph;
    rows_in_phase = g.n * ph.j_plane;
    m_base = bx * BM;
    c_base = by * BN;
    if (m_base >= rows_in_phase) return false;
    chunks = args.kg_pad / kGemmBK;
    iterations_left = taps * chunks;
    chunk = 0;
    q[0] = q[1] = q[2] = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) rows.place(r, m_base + a_row(r), rows_in_phase, ph);
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0;
    if (iterations_left > 0) to_tap(ph);
    return true;
  }

  PG_HD int iterations() const { return iterations_left; }

  // Row offsets and the weight tile for tap q: once per tap, not per stage.
  PG_HD void to_tap(const ConvGemmPhase& ph) {
    const ConvShape<int32_t>& g = args.g;
    int32_t t[kAxes];
    for (int ax = 0; ax < kAxes; ++ax) t[ax] = ph.t0[ax] + q[ax] * ph.t_step[ax];
    rows.to_tap(g, ph, q, group);
    b_at = ((group * g.taps() + g.tap_index(t[0], t[1], t[2])) * args.kg_pad + chunk * kGemmBK) * args.cg_pad + c_base;
  }

  // Global memory -> registers: the stage at (tap, chunk). A channels-first thread reads one row
  // at kALoads k's kColStep apart: one pointer, stepped, and one count of the loads inside the
  // row and the group, so each load costs a compare, a 64-bit add and the load. Written as a
  // product and a row-and-k condition per load, nvcc rebuilt every address and condition (SASS
  // on the H100, 2026-11-26: 90 of the 235 instructions besides the 512 FMAs of a 256 x 64
  // stage); stepped, the fp32 3D row went from 0.819 to 0.768 ms.
  PG_HD void fetch() {
    const ConvShape<int32_t>& g = args.g;
    const int32_t k0 = chunk * kGemmBK;
    if constexpr (CL) {
      const int32_t k = k0 + a_col(0);
      const bool k_ok = args.kg_whole || k < g.kg;
#pragma unroll
      for (int l = 0; l < kALoads; ++l)
        a_next[l] = k_ok && rows.at[l] >= 0 ? static_cast<A>(to_float(args.dy[rows.at[l] + k])) : A(0);
    } else {
      constexpr int kColStep = kGemmThreads / BM;  // a_col(l + 1) - a_col(l)
      const int32_t k = k0 + a_col(0);
      const int32_t inside = rows.at[0] < 0 ? 0 : args.kg_whole ? kALoads : (g.kg - k + kColStep - 1) / kColStep;
      const T* p = args.dy + (inside > 0 ? rows.at[0] + k * args.k_stride : 0);
      const int32_t step = kColStep * args.k_stride;
#pragma unroll
      for (int l = 0; l < kALoads; ++l, p += step) a_next[l] = l < inside ? static_cast<A>(to_float(*p)) : A(0);
    }
    const A* w = args.w + b_at + b_row() * args.cg_pad + b_col();
#pragma unroll
    for (int e = 0; e < kBLoads; ++e) b_next[e] = w[e];
  }

  // Registers -> shared-memory buffer `buf`.
  PG_HD void stage(Smem& s, int buf) const {
#pragma unroll
    for (int l = 0; l < kALoads; ++l) s.a[buf][a_col(l)][a_row(CL ? l : 0)] = a_next[l];
#pragma unroll
    for (int e = 0; e < kBLoads; ++e) s.b[buf][b_row()][b_col() + e] = b_next[e];
  }

  // The next (tap, chunk): chunks inside a tap, then the taps with q[2] fastest.
  PG_HD void advance(const Smem& smem) {
    const ConvGemmPhase& ph = smem.phase;
    --iterations_left;
    if (++chunk < chunks) {
      b_at += kGemmBK * args.cg_pad;
      return;
    }
    chunk = 0;
    conv_gemm_next_tap(q, ph);
    to_tap(ph);
  }

  PG_HD void multiply(const Smem& s, int buf) {
#pragma unroll
    for (int kk = 0; kk < kGemmBK; ++kk) {
      A a[8], b[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = s.a[buf][kk][m_of(i)];
#pragma unroll
      for (int j = 0; j < 8; ++j) b[j] = s.b[buf][kk][c_of(j)];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
  }

  // The 8 x 8 results to dx, each element once.
  PG_HD void finish(const Smem& smem) const {
    const ConvShape<int32_t>& g = args.g;
    const ConvGemmPhase& ph = smem.phase;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int32_t m = m_base + m_of(i);
      if (m >= rows_in_phase) continue;
      const int32_t n = m / ph.j_plane, rest = m % ph.j_plane;
      const int32_t j[kAxes] = {rest / (ph.jn[1] * ph.jn[2]), rest / ph.jn[2] % ph.jn[1], rest % ph.jn[2]};
      int32_t pos[kAxes];
      for (int ax = 0; ax < kAxes; ++ax) pos[ax] = ph.i0[ax] + j[ax] * g.stride[ax];
#pragma unroll
      for (int jj = 0; jj < 8; ++jj) {
        const int32_t c = c_base + c_of(jj);
        if (c < g.cg) args.dx[g.x_offset(n, group * g.cg + c, pos[0], pos[1], pos[2])] = from_accum<T>(acc[i][jj]);
      }
    }
  }
};

// One workspace element: the weight at [group][tap][k][c] in the accumulator type, zero in the
// padding.
template <class T>
struct ConvGemmWeightsBody {
  ConvShape<int32_t> g;
  int32_t kg_pad, cg_pad;
  const T* w;
  accum_t<T>* out;

  PG_HD void operator()(int32_t i) const {
    const int32_t c = i % cg_pad, k = i / cg_pad % kg_pad, rest = i / cg_pad / kg_pad;
    const int32_t tap = rest % g.taps(), group = rest / g.taps();
    out[i] = k < g.kg && c < g.cg ? static_cast<accum_t<T>>(to_float(w[g.w_offset(group * g.kg + k, c, tap)]))
                                  : accum_t<T>(0);
  }
};

// The launch's sizes, shared by supports(), workspace_bytes() and launch().
struct ConvGemmPlan {
  int bm, bn;
  int64_t kg_pad, cg_pad, phases[kAxes], grid[3], workspace_elems;
  std::vector<uint8_t> phase_order;  // empty: more than kOrderedPhases phases, launched in index order
};

// Blocks start in blockIdx order, x fastest, z last. With strides the phases differ in work
// (k3 s2 p1: 1, 2, 2 and 4 taps per 2D phase), and the largest last would leave the GPU waiting
// on them at the end; so z walks the phases largest first. Work of a phase: its positions times
// its taps, per axis.
inline std::vector<uint8_t> order_phases_by_work(const ConvProblem& p, const int64_t* phases) {
  const int64_t count = phases[0] * phases[1] * phases[2];
  if (count > kOrderedPhases) return {};
  std::vector<std::pair<int64_t, int>> work;
  for (int index = 0; index < count; ++index) {
    int64_t w = 1, rest = index;
    for (int a = kAxes - 1; a >= 0; --a) {
      const int64_t i0 = rest % phases[a];
      rest /= phases[a];
      int64_t taps = 0;
      for (int64_t t = 0; t < p.kernel[a]; ++t) taps += (i0 + p.pad_begin[a] - t * p.dilation[a]) % p.stride[a] == 0;
      w *= taps * ((p.in[a] - i0 + p.stride[a] - 1) / p.stride[a]);
    }
    work.push_back({-w, index});
  }
  std::stable_sort(work.begin(), work.end());
  std::vector<uint8_t> order;
  for (const auto& [w, index] : work) order.push_back(static_cast<uint8_t>(index));
  return order;
}

// `bk`: the reduction steps per stage, to which K/groups is padded; `bm` x `bn`: the tile (0:
// conv.gemm's, 128 x 128 or 256 x 64).
inline ConvGemmPlan plan_conv_gemm(const ConvProblem& p, int64_t bk = kGemmBK, int bm = 0, int bn = 0) {
  ConvGemmPlan plan;
  plan.bn = bn > 0 ? bn : gemm_tile_n(p);
  plan.bm = bm > 0 ? bm : plan.bn == 64 ? 256 : 128;
  plan.kg_pad = round_up_to(p.k_per_group(), bk);
  plan.cg_pad = round_up_to(p.c_per_group(), plan.bn);
  int64_t phases = 1, largest = p.n;  // the phase at i0 = 0 has the most positions
  for (int a = 0; a < kAxes; ++a) {
    plan.phases[a] = std::min(p.stride[a], p.in[a]);
    phases *= plan.phases[a];
    largest *= (p.in[a] + p.stride[a] - 1) / p.stride[a];
  }
  plan.grid[0] = (largest + plan.bm - 1) / plan.bm;
  plan.grid[1] = plan.cg_pad / plan.bn;
  plan.grid[2] = phases * p.groups;
  plan.workspace_elems = p.groups * p.taps() * plan.kg_pad * plan.cg_pad;
  plan.phase_order = order_phases_by_work(p, plan.phases);
  return plan;
}

template <class T, class W = accum_t<T>>
ConvGemmArgs<T, W> make_conv_gemm_args(const ConvProblem& p, const ConvGemmPlan& plan, const ConvBuffers& b) {
  ConvGemmArgs<T, W> a;
  a.g = make_conv_shape<int32_t>(p);
  for (int ax = 0; ax < kAxes; ++ax) a.phases[ax] = static_cast<int32_t>(plan.phases[ax]);
  a.ordered = !plan.phase_order.empty();
  for (int i = 0; i < kOrderedPhases; ++i)
    a.phase_order[i] = i < static_cast<int>(plan.phase_order.size()) ? plan.phase_order[i] : 0;
  a.kg_pad = static_cast<int32_t>(plan.kg_pad);
  a.cg_pad = static_cast<int32_t>(plan.cg_pad);
  a.k_stride = static_cast<int32_t>(p.layout == Layout::channels_last ? 1 : p.out_plane());
  a.kg_whole = plan.kg_pad == p.k_per_group();
  a.dy = static_cast<const T*>(b.dy);
  a.w = static_cast<const W*>(b.workspace);
  a.dx = static_cast<T*>(b.dx);
  return a;
}

// Rearranges the weights into the workspace (on any executor: the host test uses the CPU one).
template <class T, class Exec>
void prepare_conv_gemm_weights(const Exec& ex, const ConvProblem& p, const ConvGemmPlan& plan, const ConvBuffers& b) {
  ex.template for_each<int32_t>(plan.workspace_elems,
                                ConvGemmWeightsBody<T>{make_conv_shape<int32_t>(p), static_cast<int32_t>(plan.kg_pad),
                                                       static_cast<int32_t>(plan.cg_pad), static_cast<const T*>(b.w),
                                                       static_cast<accum_t<T>*>(b.workspace)});
}

// What a plan's int32 offsets and grid allow.
inline Support conv_gemm_plan_support(const ConvProblem& p, const ConvGemmPlan& plan) {
  if (!conv_fits_int32(p) || plan.workspace_elems >= (int64_t{1} << 31)) return Support::no("offsets beyond int32");
  if (plan.grid[0] >= (int64_t{1} << 31) || plan.grid[1] > 65535 || plan.grid[2] > 65535)
    return Support::no("grid too large: " + std::to_string(plan.grid[2]) + " phases x groups (limit 65535)");
  return Support::yes();
}

// Calls f.template operator()<BM, BN, CL>() with the problem's tile and layout.
template <class F>
void with_gemm_tile(const ConvProblem& p, F&& f) {
  const bool cl = p.layout == Layout::channels_last;
  if (gemm_tile_n(p) == 64) {
    if (cl) f.template operator()<256, 64, true>();
    else f.template operator()<256, 64, false>();
  } else {
    if (cl) f.template operator()<128, 128, true>();
    else f.template operator()<128, 128, false>();
  }
}

// The block's program: every thread's steps in order and where the barriers are. One barrier
// per stage: the stage written at iteration i is read at i + 1, after the barrier that ends i;
// the buffer it overwrites was last read at i - 1, before the barrier that ended it. The phase
// thread 0 writes in begin() is first read after the barrier that follows the first stage.
// conv_gemm_kernel runs it for one thread with __syncthreads as the barrier;
// tests/conv_gemm_host_test.cpp runs it for all 256 threads of a block in turn, so a bug in the
// schedule itself (a stage into the buffer being read, an iteration too few) shows on the host.
// `b` is begin() (false: the block has nothing to do), iterations(), fetch(), stage(buffer),
// advance(), multiply(buffer), barrier() and finish().
template <class Block>
PG_HD void conv_gemm_schedule(Block& b) {
  // The same for every thread of the block, so no thread waits at a barrier the others skip.
  if (!b.begin()) return;
  const int iterations = b.iterations();
  if (iterations > 0) {
    b.fetch();
    b.stage(0);
  }
  b.barrier();
  // Unrolled by two, so each multiply and stage names its buffer at compile time and nvcc folds
  // the buffers' shared-memory addresses into the loads and stores instead of rebuilding them
  // from a run-time index every stage: the nine fp32 conv.gemm rows ran 3-10% faster, the seven
  // conv.winograd rows -1% to +6% (H100, same calls, 2026-11-26).
  const auto step = [&](int it, int buf) {
    const bool more = it + 1 < iterations;
    if (more) {
      b.advance();
      b.fetch();
    }
    b.multiply(buf);
    if (more) b.stage(buf ^ 1);
    b.barrier();
  };
  int it = 0;
  for (; it + 1 < iterations; it += 2) {
    step(it, 0);
    step(it + 1, 1);
  }
  if (it < iterations) step(it, 0);
  b.finish();
}

#if PG_GPU_COMPILER

// One thread of the block on the GPU, for conv_gemm_schedule(); Thread is ConvGemmThread or
// ConvGemmTcThread.
template <class Thread>
struct ConvGemmDeviceBlock {
  Thread& th;
  typename Thread::Smem& smem;
  const typename Thread::Args& args;  // the kernel parameter itself (see begin())

  __device__ __forceinline__ bool begin() {
    return th.begin(args, smem, threadIdx.x, blockIdx.x, blockIdx.y, blockIdx.z);
  }
  __device__ __forceinline__ int iterations() const { return th.iterations(); }
  __device__ __forceinline__ void fetch() { th.fetch(); }
  __device__ __forceinline__ void fetch(int slot) { th.fetch(smem, slot); }  // conv.gemm.tc's ring
  __device__ __forceinline__ void commit() { th.commit(); }
  __device__ __forceinline__ void wait() { th.wait(); }
  __device__ __forceinline__ void stage(int buf) { th.stage(smem, buf); }
  __device__ __forceinline__ void advance() { th.advance(smem); }
  __device__ __forceinline__ void multiply(int buf) { th.multiply(smem, buf); }
  __device__ __forceinline__ void multiply_async(int buf) { th.multiply(smem, buf); }  // conv.gemm.wgmma's
  __device__ __forceinline__ void retire(int pending) { th.retire(pending); }
  __device__ __forceinline__ void barrier() { __syncthreads(); }
  __device__ __forceinline__ void finish() { th.finish(smem); }
  __device__ __forceinline__ void write_out() { th.write_out(smem); }  // conv.gemm.wgmma's
};

// Two blocks per multiprocessor where the registers allow it without spilling (f32 accumulation,
// channels-first: 127-128 registers with nvcc 13 for sm_90); the others need more and get one.
template <class T, int BM, int BN, bool CL>
__global__ void PG_LAUNCH_BOUNDS(kGemmThreads, sizeof(accum_t<T>) == 4 && !CL ? 2 : 1)
    conv_gemm_kernel(ConvGemmArgs<T> args) {
  using Thread = ConvGemmThread<T, BM, BN, CL>;
  __shared__ typename Thread::Smem smem;
  Thread th;
  ConvGemmDeviceBlock<Thread> block{th, smem, args};
  conv_gemm_schedule(block);
}

#endif

struct ConvGemm {
  static constexpr ConvTraits traits{.name = "conv.gemm", .deterministic = true, .gpu_only = true};
  // Sizes for the fuzz: with 128- or 256-row tiles, several tiles and a partial last one need a
  // few hundred positions per phase; C and K past one 8-step stage and, now and then, C past a
  // 64-wide tile and past 128 (a second 128-wide column tile: until C/groups reached 140, no fuzz
  // case had a block with a column offset).
  static ConvDomain domain() {
    ConvDomain d;
    d.reach[0] = 6;
    d.reach[1] = 14;
    d.reach[2] = 24;
    d.max_c_per_group = 140;
    d.max_k_per_group = 20;
    return d;
  }

  static Support supports(const ConvProblem& p) { return conv_gemm_plan_support(p, plan_conv_gemm(p)); }

  static size_t workspace_bytes(const ConvProblem& p) {
    return static_cast<size_t>(plan_conv_gemm(p).workspace_elems) * (p.dtype == DType::f64 ? 8 : 4);
  }

#if PG_GPU_COMPILER
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    if (p.x_elems() == 0) return;
    const ConvGemmPlan plan = plan_conv_gemm(p);
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      prepare_conv_gemm_weights<T>(ex, p, plan, b);
      const ConvGemmArgs<T> args = make_conv_gemm_args<T>(p, plan, b);
      with_gemm_tile(p, [&]<int BM, int BN, bool CL>() {
        const dim3 grid(static_cast<unsigned>(plan.grid[0]), static_cast<unsigned>(plan.grid[1]),
                        static_cast<unsigned>(plan.grid[2]));
        conv_gemm_kernel<T, BM, BN, CL><<<grid, kGemmThreads, 0, ex.stream>>>(args);
        PG_LAUNCH_CHECK("conv_gemm_kernel");
      });
    });
  }
#endif
};

}  // namespace pg
