// avg.gather.columns: the average pool backward for 2D stride-1, undilated windows of 2 to 8 taps
// (any padding, every divisor rule, divisor_override) in channels-first, when a plane's dy fits
// in shared memory: a block loads whole planes of dy once, flat, and each thread walks one dx
// column down its plane, summing a window row's taps once per row and keeping the last kernel_h
// row sums in registers.
//
// Why: avg.gather.planes, the best before it on these windows, ran Inception's k3s1p1 rows at
// 59-66% of the copy ceiling on the H100 and 42-54% on the H200, issue bound: ncu (H200,
// 2026-11-28) counted 82 thread instructions per dx element on Mixed_5b: 11% per-block tables,
// 47% the load (each value's window row, column and reciprocal tracked, margins zeroed) and 41%
// the sums (a work item's plane, row and tables found by division). Here
//   1. s = dy of the block's planes as stored, copied as 16-byte packs that bypass registers
//      and kept flat (a value's place in shared memory is its place in the block's dy); when
//      windows differ in divisor, a table of reciprocal divisors by (window count along H,
//      along W): (8 + 1)^2 entries, once per block;
//   2. per dx column (plane, x), the window columns covering x are fixed: each window row's sum
//      over them, h(oy), is computed once, the last kernel_h of them kept in registers (zeros for
//      rows outside the plane), and dx(y, x) is their sum, times the one reciprocal when every
//      window has the same divisor; else each term is dy times its window's reciprocal (the
//      column's W counts are fixed, a row's H count is one per row). Consecutive threads take
//      consecutive columns: the shared-memory reads fall in consecutive banks, and the stores of
//      a row are coalesced.
// Every dx element is written once; sums run in a fixed order: deterministic, no atomics. A term
// rounds at most twice more than the exact value (the reciprocal and its product; a uniform
// divisor's one product per sum): inside the oracle's (terms + 2) u. Positions are always taps of
// several windows here (a kernel of 2 or more), where the avg variants agree only within that
// bound, never bitwise.
//
// H200, 2026-11-28 (bench/results/2026-11-28_h200_columns.md), against avg.gather.planes:
// Inception Mixed_5b 26.3 -> 23.2 us, Mixed_6b 28.3 -> 24.8, tf-port (exclude_pad) 50.6 -> 40.2,
// NASNet (exclude_pad) 49.6 -> 37.0. Kernels other than 3 x 3 take the walk of any kernel (rings
// and taps of 8, predicated): 0.33-0.64x planes on k2, k5 and k7 rows, where selection keeps
// planes. Tried and dropped: 1D rows (a column of one row: 1.5x slower than planes), blocks of
// 2,048 or 8,192 values, a 42-register build, columns cut into row segments.
// H200, 2026-11-29 (bench/results/2026-11-29_h200_columns_async.md): dy copied by cp.async and
// kept as stored instead of a register batch converted on the way: 64 -> 32 registers, 50% ->
// 87.5% theoretical occupancy. NASNet 37.2 -> 31.5 us, Mixed_6b 25.0 -> 22.9, tf-port 40.3 ->
// 38.3, base k3s1p1 57.5 -> 54.9; but Mixed_5b 23.3 -> 24.8: its 2,048 blocks now fill 1.11
// waves (1.94 before), and a wave's loads all wait before any of its sums. Tried and dropped the
// same day: blocks resident for the whole launch that load their next group into a second stage
// while summing this one (2-3 groups a block, statically: 1.03-1.24x slower on every row).
//
// The CPU backend runs the same phases with emulated threads and a small budget
// (kColumnsCpuBudget), so fuzz-sized problems span several blocks, several planes per block, a
// partial last block, and more columns than threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "src/model/backend.hpp"
#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/async_copy.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

inline constexpr int kColumnsThreads = 256;             // the most threads of a block on a GPU
inline constexpr size_t kColumnsSmemBytes = 48 * 1024;  // shared memory a block may use without opt-in
// The widest kernel along H and W: the row sums kept in registers and the taps of a row sum,
// unrolled and predicated. The common 3 x 3 runs with exactly 3.
inline constexpr int kColumnsMaxKernel = 8;
inline constexpr int kColumnsExactKernel = 3;

// Planes per block: until the block has `elements` dy values; then the fewest threads, in whole
// granules (a warp on a GPU) and no more than `threads`, that give each column of those planes
// a thread.
struct ColumnsBudget {
  int64_t elements;
  int threads, granule;
};
inline constexpr ColumnsBudget kColumnsGpuBudget{4096, kColumnsThreads, 32};
// On the CPU backend, small: fuzz-sized problems span several blocks, with more columns than
// threads.
inline constexpr ColumnsBudget kColumnsCpuBudget{100, 12, 1};

// How planes are grouped and shared memory carved, the same on the host and in the kernel.
struct AvgColumnsPlan {
  int planes;              // planes per block (the last block may have fewer)
  int H, W, OH, OW;        // dx and dy extents of a plane
  int in_vol, out_vol;     // H * W and OH * OW
  int KH, KW, PH, PW;      // kernel and leading padding along H and W
  int threads;             // threads per block
  bool uniform;            // every window has the same divisor: `divisor`
  double divisor;
  Divider<int32_t> by_w;
  int pack;                // dy values per 16-byte pack
  size_t recip_at, bytes;  // the reciprocals by counts (when divisors differ) after the planes' s
};

// Entries of the reciprocal table: window counts 0 to kColumnsMaxKernel along H and along W.
inline constexpr int kColumnsCounts = kColumnsMaxKernel + 1;

// The plan, or false when the problem is not one of these windows or one plane does not fit.
inline bool plan_avg_columns(const Problem& p, size_t accum_size, const ColumnsBudget& budget, AvgColumnsPlan* plan) {
  if (p.layout != Layout::channels_first) return false;
  // 2D (D one position); H and W stride 1, no dilation, kernels up to 8, some kernel of 2 or
  // more (else no position is a tap of two windows, where avg variants divide).
  if (p.dims != 2 || p.in[0] != 1 || p.kernel[0] != 1 || p.pad_begin[0] != 0 || p.pad_end[0] != 0) return false;
  for (int a = 1; a < kAxes; ++a)
    if (p.stride[a] != 1 || p.dilation[a] != 1 || p.kernel[a] > kColumnsMaxKernel) return false;
  if (!undilated_windows_overlap(p)) return false;
  const int64_t in_vol = p.in[1] * p.in[2], out_vol = p.out[1] * p.out[2];
  if (in_vol < 1 || out_vol < 1 || in_vol >= (int64_t{1} << 30) || out_vol >= (int64_t{1} << 30)) return false;
  AvgColumnsPlan q{};
  q.H = static_cast<int>(p.in[1]);
  q.W = static_cast<int>(p.in[2]);
  q.OH = static_cast<int>(p.out[1]);
  q.OW = static_cast<int>(p.out[2]);
  q.in_vol = static_cast<int>(in_vol);
  q.out_vol = static_cast<int>(out_vol);
  q.KH = static_cast<int>(p.kernel[1]);
  q.KW = static_cast<int>(p.kernel[2]);
  q.PH = static_cast<int>(p.pad_begin[1]);
  q.PW = static_cast<int>(p.pad_begin[2]);
  q.uniform = avg_uniform_divisor(p, &q.divisor);
  // s holds dy as stored (converted when summed), shifted by up to pack - 1 values so that the
  // block's first 16-byte aligned dy pack lands 16-byte aligned in shared memory.
  const int64_t value_bytes = static_cast<int64_t>(dtype_size(p.dtype));
  q.pack = static_cast<int>(16 / value_bytes);
  const int64_t plane_bytes = out_vol * value_bytes;
  const int64_t shift_bytes = (q.pack - 1) * value_bytes;
  const int64_t recip_bytes = q.uniform ? 0 : kColumnsCounts * kColumnsCounts * static_cast<int64_t>(accum_size);
  const int64_t fit = (static_cast<int64_t>(kColumnsSmemBytes) - recip_bytes - shift_bytes) / plane_bytes;
  if (fit < 1) return false;
  const int64_t outer = std::max<int64_t>(1, p.n * p.c);
  const int64_t planes = std::clamp<int64_t>(budget.elements / out_vol, 1, std::min(fit, outer));
  const int64_t columns = planes * q.W;
  q.planes = static_cast<int>(planes);
  q.threads = static_cast<int>(std::min<int64_t>(budget.threads, (columns + budget.granule - 1) / budget.granule * budget.granule));
  q.by_w = Divider<int32_t>(q.W);
  q.recip_at = static_cast<size_t>((planes * plane_bytes + shift_bytes + 15) / 16 * 16);
  q.bytes = q.recip_at + static_cast<size_t>(recip_bytes);
  *plan = q;
  return true;
}

// The work of one block on its planes, as phases for plan.threads cooperating threads; every
// thread finishes a phase before any starts the next (a barrier on the GPU, phase-major order on
// the CPU).
template <class T, class Idx>
struct AvgColumnsBlock {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  AvgColumnsPlan plan;
  Idx outer;  // N * C planes
  const T* dy;
  T* dx;

  struct Frame {
    Idx outer0;  // first plane of the block
    int planes;  // planes of this block
    T* s;        // the block's dy as stored, flat: plane, window row, window column
    int head;    // values of the block's dy before its first 16-byte aligned pack
    A* recip;    // 1 / divisor by window count along H and along W (when divisors differ)
  };

  PG_HD Frame frame(Idx block_id, unsigned char* smem) const {
    Frame f;
    f.outer0 = block_id * plan.planes;
    const Idx left = outer - f.outer0;
    f.planes = left < plan.planes ? static_cast<int>(left) : plan.planes;
    const uintptr_t at = reinterpret_cast<uintptr_t>(dy + f.outer0 * plan.out_vol);
    f.head = static_cast<int>((16 - at % 16) % 16 / sizeof(T));
    f.s = reinterpret_cast<T*>(smem) + (plan.pack - f.head) % plan.pack;
    f.recip = reinterpret_cast<A*>(smem + plan.recip_at);
    return f;
  }

  // Once per launched block, before the first planes it sums: when windows differ in divisor,
  // the table of reciprocals.
  PG_HD void start(unsigned char* smem, int tid) const {
    if (plan.uniform) return;
    A* recip = reinterpret_cast<A*>(smem + plan.recip_at);
    for (int e = tid; e < kColumnsCounts * kColumnsCounts; e += plan.threads) {
      const int ch = e / kColumnsCounts, cw = e - ch * kColumnsCounts;
      recip[e] = ch > 0 && cw > 0 ? A(1) / g.template divisor<A>(1, ch, cw) : A(0);
    }
  }

  // Phase 1: s = dy of the block's planes as stored: the 16-byte packs as copies that bypass
  // registers (consecutive threads, consecutive packs; async_copy.hpp), complete after
  // async_wait_all(), and the values before the first pack and after the last one alone.
  PG_HD void load(const Frame& f, int tid) const {
    constexpr int V = 16 / sizeof(T);
    const int n = f.planes * plan.out_vol;
    const T* src = dy + f.outer0 * plan.out_vol;
    const int head = f.head < n ? f.head : n, packs = (n - head) / V, tail = head + packs * V;
    for (int j = tid; j < head; j += plan.threads) f.s[j] = src[j];
    for (int j = tail + tid; j < n; j += plan.threads) f.s[j] = src[j];
    for (int k = tid; k < packs; k += plan.threads) async_copy16(f.s + head + k * V, src + head + k * V);
    async_wait_all();
  }

  // Phase 2: every dx column of the block's planes. kKH, kKW: the kernel along H and W exactly,
  // or 0 for any up to kColumnsMaxKernel (the row sums and taps past the kernel predicated off).
  // kUniform: every window has the same divisor.
  template <int kKH, int kKW, bool kUniform>
  PG_HD void columns(const Frame& f, int tid) const {
    constexpr int RH = kKH > 0 ? kKH : kColumnsMaxKernel, RW = kKW > 0 ? kKW : kColumnsMaxKernel;
    const int KH = kKH > 0 ? kKH : plan.KH;
    const A scale = kUniform ? A(1) / static_cast<A>(plan.divisor) : A(1);
    const int n = f.planes * plan.W;
    for (int c = tid; c < n; c += plan.threads) {
      const int pl = plan.by_w.div(c), x = c - pl * plan.W;
      // Window columns lo..hi cover x (stride 1: x + PW - KW + 1 .. x + PW, inside the row);
      // tap t is on when t < taps. Their W counts and, for rows counting the whole kernel along
      // H, their reciprocals, are the column's.
      const int lo = std::max(x + plan.PW - plan.KW + 1, 0), hi = std::min(x + plan.PW, plan.OW - 1);
      const int taps = hi - lo + 1;
      bool on[RW];
      int cw[RW];
      A whole[RW];
#pragma unroll
      for (int t = 0; t < RW; ++t) {
        on[t] = t < taps;
        cw[t] = 0;
        whole[t] = A(0);
        if (!kUniform && on[t]) {
          cw[t] = static_cast<int>(g.window_count(2, static_cast<Idx>(lo + t)));
          whole[t] = f.recip[plan.KH * kColumnsCounts + cw[t]];
        }
      }
      const T* col = f.s + pl * plan.out_vol + lo;
      // The sum of window row oy (inside the plane) over the column's windows.
      const auto row_sum = [&](int oy) {
        const T* r = col + oy * plan.OW;
        const auto v = [&](int t) { return static_cast<A>(to_float(r[t])); };
        if constexpr (kUniform) {
          A h = v(0);
#pragma unroll
          for (int t = 1; t < RW; ++t)
            if (on[t]) h += v(t);
          return h;
        } else {
          // The row's H count is the same for every column of the block: the branch is uniform.
          const int ch = static_cast<int>(g.window_count(1, static_cast<Idx>(oy)));
          A h;
          if (ch == plan.KH) {
            h = v(0) * whole[0];
#pragma unroll
            for (int t = 1; t < RW; ++t)
              if (on[t]) h += v(t) * whole[t];
          } else {
            const A* by_w = f.recip + ch * kColumnsCounts;
            h = v(0) * by_w[cw[0]];
#pragma unroll
            for (int t = 1; t < RW; ++t)
              if (on[t]) h += v(t) * by_w[cw[t]];
          }
          return h;
        }
      };
      // ring[RH - KH + k] holds row y + PH - KH + 1 + k's sum, k < KH, for the y last summed;
      // before y = 0, rows PH - KH + 1 .. PH - 1 (and one before, shifted out first), zeros for
      // rows outside the plane.
      A ring[RH];
#pragma unroll
      for (int k = 0; k < RH; ++k) {
        const int oy = plan.PH - (RH - k);
        ring[k] = k >= RH - KH + 1 && oy >= 0 && oy < plan.OH ? row_sum(oy) : A(0);
      }
      T* out = dx + (f.outer0 + pl) * plan.in_vol + x;
      const auto emit = [&](int y, A newest) {
#pragma unroll
        for (int k = 0; k + 1 < RH; ++k) ring[k] = ring[k + 1];
        ring[RH - 1] = newest;
        A acc = ring[RH - KH];
#pragma unroll
        for (int k = RH - KH + 1; k < RH; ++k) acc += ring[k];
        out[y * plan.W] = from_accum<T>(kUniform ? acc * scale : acc);
      };
      // Rows y whose newest window row, y + PH, is inside the plane, then those past its end.
      const int inside = std::min(plan.H, plan.OH - plan.PH);
      int y = 0;
      for (; y < inside; ++y) emit(y, row_sum(y + plan.PH));
      for (; y < plan.H; ++y) emit(y, A(0));
    }
  }
};

// Phase 2 of a block for its kernel (exactly 3 x 3, or any up to kColumnsMaxKernel) and divisors.
template <int kKH, int kKW, bool kUniform, class T, class Idx>
struct AvgColumnsOnCpu {
  AvgColumnsBlock<T, Idx> block;
  void operator()(Idx block_id) const {
    alignas(16) unsigned char smem[kColumnsSmemBytes];
    const auto f = block.frame(block_id, smem);
    for (int t = 0; t < block.plan.threads; ++t) block.start(smem, t);
    for (int t = 0; t < block.plan.threads; ++t) block.load(f, t);
    for (int t = 0; t < block.plan.threads; ++t) block.template columns<kKH, kKW, kUniform>(f, t);
  }
};

#if PG_GPU_COMPILER

template <int kKH, int kKW, bool kUniform, class T, class Idx>
__global__ void __launch_bounds__(kColumnsThreads) avg_columns_kernel(AvgColumnsBlock<T, Idx> block, Idx blocks) {
  extern __shared__ float4 avg_columns_smem[];  // 16-byte aligned: the packs
  unsigned char* smem = reinterpret_cast<unsigned char*>(avg_columns_smem);
  const int tid = threadIdx.x;
  block.start(smem, tid);  // the reciprocals, before the first barrier
  for (Idx b = blockIdx.x; b < blocks; b += gridDim.x) {
    const auto f = block.frame(b, smem);
    block.load(f, tid);
    __syncthreads();
    block.template columns<kKH, kKW, kUniform>(f, tid);
    __syncthreads();  // the next block's load must not overwrite what these sums still read
  }
}

#endif

struct AvgGatherColumns : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.columns", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // 2D stride-1 undilated windows of 2 to 8 taps, the same along H and W, channels-first, whose
  // plane fits in shared memory (supports()). Sizes for the fuzz: on the CPU backend's budget,
  // rows wider than a block's threads, several planes per block and a partial last one.
  static Domain domain() {
    Domain d;
    d.min_dims = 2;
    d.max_dims = 2;
    d.windows = WindowRule::listed;
    for (int64_t k = 2; k <= kColumnsMaxKernel; ++k) d.shapes.push_back({.kernel = k, .stride = 1, .pad_min = 0, .pad_max = k / 2});
    d.trivial_leading = 1;
    d.layouts = {Layout::channels_first};
    d.dilation = false;
    d.reach[1] = 9;
    d.reach[2] = 14;
    return d;
  }

  static Support supports(const Problem& p) {
    if (p.dims == 2 && p.in[0] == 1 && !undilated_windows_overlap(p))
      return Support::no("no position is a tap of two windows (one window along every axis of kernel 2 or more)");
    AvgColumnsPlan plan;
    if (!plan_avg_columns(p, p.dtype == DType::f64 ? 8 : 4, ColumnsBudget{1, 1, 1}, &plan))
      return Support::no("a plane's dy does not fit a 48 KiB shared-memory block");
    return Support::yes();
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    if (p.in_elems() == 0) return;
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      AvgColumnsPlan plan;
      const ColumnsBudget& budget = Exec::is_gpu ? kColumnsGpuBudget : kColumnsCpuBudget;
      if (!plan_avg_columns(p, sizeof(accum_t<T>), budget, &plan)) throw Error("avg.gather.columns: no plane fits");
      AvgColumnsBlock<T, Idx> block{make_avg_shape<Idx>(p), plan, static_cast<Idx>(p.n * p.c),
                                    static_cast<const T*>(b.dy), static_cast<T*>(b.dx)};
      const int64_t blocks = (p.n * p.c + plan.planes - 1) / plan.planes;
      constexpr int K = kColumnsExactKernel;
      const bool exact = plan.KH == K && plan.KW == K;
      if (plan.uniform) {
        if (exact) launch_blocks<K, K, true>(ex, block, blocks);
        else launch_blocks<0, 0, true>(ex, block, blocks);
      } else {
        if (exact) launch_blocks<K, K, false>(ex, block, blocks);
        else launch_blocks<0, 0, false>(ex, block, blocks);
      }
    });
  }

 private:
  template <int kKH, int kKW, bool kUniform, class T, class Idx>
  static void launch_blocks(const CpuExec& ex, const AvgColumnsBlock<T, Idx>& block, int64_t blocks) {
    ex.template for_each<Idx>(blocks, AvgColumnsOnCpu<kKH, kKW, kUniform, T, Idx>{block});
  }
#if PG_GPU_COMPILER
  template <int kKH, int kKW, bool kUniform, class T, class Idx>
  static void launch_blocks(const GpuExec& ex, const AvgColumnsBlock<T, Idx>& block, int64_t blocks) {
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{1} << 20));
    avg_columns_kernel<kKH, kKW, kUniform, T, Idx><<<grid, block.plan.threads, block.plan.bytes, ex.stream>>>(block, static_cast<Idx>(blocks));
    PG_LAUNCH_CHECK("avg_columns_kernel");
  }
#endif
};

}  // namespace pg
