// conv.gemm.wgmma: conv.gemm.tc's implicit GEMM per stride phase on Hopper's warpgroup matrix
// instructions (wgmma.mma_async, sm_90a), f16 and bf16 with f32 accumulation. The products of
// two 16-bit floats are exact in f32 and only the order of the f32 sums differs from the oracle's,
// so its bound is conv.gemm.tc's (the per-element term count).
//
// Why it is faster than conv.gemm.tc's mma.sync: a wgmma reads both operands from shared memory
// itself (no ldmatrix, no fragments in registers) and runs asynchronously, so one instruction per
// warpgroup covers 64 rows x BN columns x 16 k's while the copies of later stages go on. What
// differs from conv.gemm.tc:
//   - 256 threads are two warpgroups; each owns half the block's rows (BM / 2, one or two m64
//     tiles) and all BN columns. Tiles: 256 x 128, or 256 x 64 when C/groups <= 64.
//   - A stage is 64 k's: one 128-byte row per m (or c), stored in the 128-byte swizzle the
//     matrix descriptors name (16-byte chunk ^ row % 8, tiles 1024-byte aligned). K/groups is
//     padded to 64.
//   - The ring has kWgSlots = kWgLookahead + 2 slots: the stage multiplied now, the one before
//     (its wgmma may still be reading: each warpgroup only waits for it after issuing the next),
//     and kWgLookahead stages whose copies are in flight.
//   - The results go out through shared memory, rounded in pairs, channels-last rows in 16-byte
//     stores; the dx offset of each row is computed once per block, not once per result.
//   - cp.async writes shared memory through the generic proxy and wgmma reads it through the
//     async proxy: every thread fences (fence.proxy.async) after its copies land, before the
//     barrier that publishes them.
// The operands come from conv.gemm.tc's workspace: the weights as [group][tap][C/groups][K/groups]
// and, unless dy is channels-last with K and K/groups multiples of 8, dy's [n][position][group][k]
// copy (prepare_conv_gemm_tc).
//
// The CPU backend runs every block's 256 threads through the same schedule with scalar f32 math
// on the results each thread owns in wgmma's fragment layout (kernels/conv/conv_gemm_host_block.hpp),
// each multiply held back until the schedule retires it, the latest a wgmma may read its slot;
// so the index logic, the swizzle, the tails and the ring are fuzzed in CI. The GPU launch exists
// only in builds for sm_90a (meson's sm_arch, the default): elsewhere the registry answers "not
// built for the GPU".
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/conv/conv_gemm_tc.hpp"

namespace pg {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PG_WGMMA_DEVICE 1
#endif

inline constexpr int kWgBK = 64;                    // k's per stage: one 128-byte row of 16-bit values
inline constexpr int kWgLookahead = 2;              // stages whose copies are in flight during a multiply
inline constexpr int kWgSlots = kWgLookahead + 2;   // + the stage multiplied now and the one before it

// Where (row, k) of a tile of 64-k rows sits: the 128-byte swizzle, chunk (k / 8) ^ (row % 8).
PG_HD int wg_k_rows_at(int row, int k) { return row * kWgBK + ((((k >> 3) ^ row) & 7) << 3) + (k & 7); }

// The wgmma fragment: result e of thread `tid` lies at this row of its warpgroup's m64 tile and
// this column of the tile's BN (warp w of the warpgroup holds rows 16w to 16w + 15).
PG_HD int wg_own_row(int tid, int e) { return 16 * (tid / 32 % 4) + tid % 32 / 4 + 8 * (e / 2 % 2); }
PG_HD int wg_own_col(int tid, int e) { return 8 * (e / 4) + 2 * (tid % 4) + e % 2; }

template <class T, int BM, int BN>
struct ConvGemmWgmmaSmem {
  // The results go out through shared memory (finish(), write_out()): rows of BN + 8 values, so
  // a warp's pairs land on 32 different banks, laid over the ring once every multiply retired.
  static constexpr int kOutPitch = BN + 8;
  static_assert(BM * kOutPitch <= kWgSlots * BM * kWgBK, "the result tile fits in the A ring");

  alignas(1024) T a[kWgSlots][BM * kWgBK];
  alignas(1024) T b[kWgSlots][BN * kWgBK];
  int32_t row_at[BM];   // each result row's dx offset at the tile's first channel; -1 past the phase
  ConvGemmPhase phase;  // written by thread 0 in begin(), read after the barrier that follows

  PG_HD T* out() { return &a[0][0]; }
  PG_HD const T* out() const { return &a[0][0]; }
};

// Two results rounded to T, the first in the low half: one cvt on NVIDIA.
template <class T>
PG_HD uint32_t wg_round_pair(float lo, float hi) {
#if defined(PG_TC_MMA_SYNC)
  uint32_t r;
  if constexpr (std::is_same_v<T, bf16>) asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  else asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return static_cast<uint32_t>(from_accum<T>(lo).bits) | static_cast<uint32_t>(from_accum<T>(hi).bits) << 16;
#endif
}

#if defined(PG_WGMMA_DEVICE)
// m64n64k16: d[0..31] in the fragment order of wg_own_row and wg_own_col; d = a b + (scale_d ? d : 0).
#define PG_WG_MMA_N64(TY) \
  asm volatile("{.reg .pred p; setp.ne.b32 p, %34, 0; " \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." #TY "." #TY " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, " \
               "%32, %33, p, 1, 1, 0, 0;}" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
               : "l"(a), "l"(b), "r"(scale_d))

// m64n128k16: d[0..63] in the fragment order of wg_own_row and wg_own_col.
#define PG_WG_MMA_N128(TY) \
  asm volatile("{.reg .pred p; setp.ne.b32 p, %66, 0; " \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." #TY "." #TY " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
               "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, " \
               "%64, %65, p, 1, 1, 0, 0;}" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "l"(a), "l"(b), "r"(scale_d))

// A K-major operand of 8-row groups 1024 bytes apart in the 128-byte swizzle, starting at shared
// address `at` (PTX ISA, matrix descriptor: address / 16, leading offset 1 (unused here), stride
// offset 1024 / 16, swizzle mode 1). A k16 step inside the 64-k row adds 32 bytes to the address.
__device__ __forceinline__ uint64_t wg_descriptor(unsigned at) {
  return static_cast<uint64_t>((at & 0x3FFFF) >> 4) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
}

template <class T, int N>
__device__ __forceinline__ void wg_mma(float* d, uint64_t a, uint64_t b, int scale_d) {
  if constexpr (N == 64) {
    if constexpr (std::is_same_v<T, bf16>) PG_WG_MMA_N64(bf16);
    else PG_WG_MMA_N64(f16);
  } else {
    if constexpr (std::is_same_v<T, bf16>) PG_WG_MMA_N128(bf16);
    else PG_WG_MMA_N128(f16);
  }
}

// Keeps the compiler from moving reads or writes of an accumulator across the asynchronous
// instructions that own it (CUTLASS's warpgroup_fence_operand).
template <int N>
__device__ __forceinline__ void wg_fence_operands(float (&d)[N]) {
#pragma unroll
  for (int e = 0; e < N; ++e) asm volatile("" : "+f"(d[e])::"memory");
}
#endif

template <class T, int BM, int BN>
struct ConvGemmWgmmaThread {
  using Args = ConvGemmTcArgs<T>;
  using Smem = ConvGemmWgmmaSmem<T, BM, BN>;
  static constexpr int kMI = BM / 128;  // m64 tiles per warpgroup
  static constexpr int kAcc = BN / 2;   // results per thread per m64 tile
  // A thread copies chunk tid % 8 (8 k's) of rows tid / 8 + 32 r of A and of B.
  static constexpr int kRows = BM / 32, kBRows = BN / 32;
  static_assert(kGemmThreads == 256 && BM % 128 == 0 && (BN == 64 || BN == 128), "two warpgroups, m64 tiles, n64 or n128");

  Args args;
  int tid;
  int32_t group, m_base, c_base, rows_in_phase;
  // Where the copies are: the chunk of K/groups and the tap (q per axis), and how many are left.
  int32_t chunk, chunks, q[kAxes], iterations_left;
  ConvGemmRows<kRows> rows;
  int32_t b_at;  // the workspace offset of the current (tap, chunk) tile's first element
  // Whether a multiply has run. On the GPU the first one overwrites acc (wgmma's scale-d)
  // rather than adding to zeros: a zeroing move reaching the asynchronous pipeline makes ptxas
  // serialize every wgmma (C7515).
  bool accumulate;
  float acc[kMI][kAcc];

  // The tile row of result e of m64 tile mi, and the tile column of result e.
  PG_HD int m_of(int mi, int e) const { return tid / 128 * (BM / 2) + mi * 64 + wg_own_row(tid, e); }
  PG_HD int c_of(int e) const { return wg_own_col(tid, e); }

  PG_HD bool begin(const Args& a, Smem& smem, int thread, int bx, int by, int bz) {
    args = a;
    tid = thread;
    const ConvShape<int32_t>& g = args.gemm.g;
    group = bz % g.groups;
    int32_t phase = bz / g.groups;
    if (a.gemm.ordered) phase = a.gemm.phase_order[phase];  // from the parameter: see ConvGemmThread::begin
    int32_t taps;
    const ConvGemmPhase ph = conv_gemm_phase(g, args.gemm.phases, phase, taps);
    if (tid == 0) smem.phase = ph;
    rows_in_phase = g.n * ph.j_plane;
    m_base = bx * BM;
    c_base = by * BN;
    if (m_base >= rows_in_phase) return false;
    chunks = args.gemm.kg_pad / kWgBK;
    iterations_left = taps * chunks;
    chunk = 0;
    q[0] = q[1] = q[2] = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) rows.place(r, m_base + tid / 8 + 32 * r, rows_in_phase, ph);
    accumulate = false;
#if !defined(PG_WGMMA_DEVICE)
    for (int mi = 0; mi < kMI; ++mi)
      for (int e = 0; e < kAcc; ++e) acc[mi][e] = 0;
#endif
    if (iterations_left > 0) to_tap(ph);
    return true;
  }

  PG_HD int iterations() const { return iterations_left; }

  PG_HD void to_tap(const ConvGemmPhase& ph) {
    const ConvShape<int32_t>& g = args.gemm.g;
    int32_t t[kAxes];
    for (int ax = 0; ax < kAxes; ++ax) t[ax] = ph.t0[ax] + q[ax] * ph.t_step[ax];
    rows.to_tap(args.a, ph, q, group);
    b_at = ((group * g.taps() + g.tap_index(t[0], t[1], t[2])) * args.gemm.cg_pad + c_base) * args.gemm.kg_pad +
           chunk * kWgBK;
  }

  // Issues the copies of the current (tap, chunk) into ring slot `slot`.
  PG_HD void fetch(Smem& s, int slot) const {
    const int kc = (tid % 8) * 8;
    const int32_t k = chunk * kWgBK + kc;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const bool valid = rows.at[r] >= 0 && k < args.a.kg;
      tc_copy16(&s.a[slot][wg_k_rows_at(tid / 8 + 32 * r, kc)], args.gemm.dy + (valid ? rows.at[r] + k : 0), valid);
    }
    const T* w = args.gemm.w + b_at + (tid / 8) * args.gemm.kg_pad + kc;
#pragma unroll
    for (int v = 0; v < kBRows; ++v) tc_copy16(&s.b[slot][wg_k_rows_at(tid / 8 + 32 * v, kc)], w + 32 * v * args.gemm.kg_pad, true);
  }
  PG_HD void commit() const { tc_commit(); }
  // Until this thread's copies of the oldest stage in flight have landed, and made them visible
  // to the matrix units' reads.
  PG_HD void wait() const {
#if defined(PG_TC_MMA_SYNC)
    asm volatile("cp.async.wait_group %0;" ::"n"(kWgLookahead - 1));
#endif
#if defined(PG_WGMMA_DEVICE)
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  }

  // The next (tap, chunk): chunks inside a tap, then the taps with q[2] fastest.
  PG_HD void advance(const Smem& smem) {
    const ConvGemmPhase& ph = smem.phase;
    --iterations_left;
    if (++chunk < chunks) {
      b_at += kWgBK;
      return;
    }
    chunk = 0;
    conv_gemm_next_tap(q, ph);
    to_tap(ph);
  }

#if defined(PG_WGMMA_DEVICE)
  // Issues the stage's 4 k16 steps for each of the warpgroup's m64 tiles, asynchronously: the
  // results are not in acc before retire().
  __device__ __forceinline__ void multiply(const Smem& s, int slot) {
    const unsigned a0 = tc_smem_address(&s.a[slot][tid / 128 * (BM / 2) * kWgBK]), b0 = tc_smem_address(&s.b[slot][0]);
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) wg_fence_operands(acc[mi]);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < kWgBK / 16; ++ks)
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
        wg_mma<T, BN>(acc[mi], wg_descriptor(a0 + mi * 64 * kWgBK * 2 + ks * 32), wg_descriptor(b0 + ks * 32),
                      accumulate || ks > 0);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    accumulate = true;
  }
  // Until at most `pending` (0 or 1) of this warpgroup's multiplies are still running.
  __device__ __forceinline__ void retire(int pending) {
    if (pending == 0) asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    else asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) wg_fence_operands(acc[mi]);
  }
#else
  // Scalar f32 math on the results this thread owns in the wgmma fragment. Results past the
  // phase's rows or the group's channels are never written, so they are not summed.
  PG_HD void multiply(const Smem& s, int slot) {
    for (int mi = 0; mi < kMI; ++mi)
      for (int e = 0; e < kAcc; ++e) {
        const int m = m_of(mi, e), c = c_of(e);
        if (m_base + m >= rows_in_phase || c_base + c >= args.gemm.g.cg) continue;
        float sum = acc[mi][e];
        for (int k = 0; k < kWgBK; ++k)
          sum += to_float(s.a[slot][wg_k_rows_at(m, k)]) * to_float(s.b[slot][wg_k_rows_at(c, k)]);
        acc[mi][e] = sum;
      }
    accumulate = true;
  }
  PG_HD void retire(int) {}
#endif

  // The owned results, rounded to T, into the shared tile (the ring is free: the schedule's
  // barrier after the last retire), and the dx offset of row tid.
  PG_HD void finish(Smem& smem) const {
    const ConvShape<int32_t>& g = args.gemm.g;
    for (int r = tid; r < BM; r += kGemmThreads)
      smem.row_at[r] = m_base + r < rows_in_phase ? conv_gemm_row_x_offset(g, smem.phase, m_base + r, group) : -1;
    store_results(smem);
  }
  PG_HD void store_results(Smem& smem) const {
    T* out = smem.out();
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int e = 0; e < kAcc; e += 2) {
        const uint32_t pair = accumulate ? wg_round_pair<T>(acc[mi][e], acc[mi][e + 1]) : 0u;
        *reinterpret_cast<uint32_t*>(&out[m_of(mi, e) * Smem::kOutPitch + c_of(e)]) = pair;
      }
  }

  // The shared tile to dx, each element once. Channels-last rows of whole 16-byte chunks go out
  // as 16-byte stores along C; otherwise one value per store, a warp's lanes along the rows
  // (channels-first: consecutive positions) or along C (channels-last).
  PG_HD void write_out(const Smem& smem) const {
    const ConvShape<int32_t>& g = args.gemm.g;
    const T* out = smem.out();
    if (g.channels_last && g.c % 8 == 0 && g.cg % 8 == 0 && reinterpret_cast<uintptr_t>(args.gemm.dx) % 16 == 0) {
      for (int i = tid; i < BM * (BN / 8); i += kGemmThreads) {
        const int r = i / (BN / 8), c = i % (BN / 8) * 8;
        const int32_t at = smem.row_at[r];
        if (at >= 0 && c_base + c < g.cg) store_pack<8>(args.gemm.dx, at + c_base + c, load_pack<8>(out, r * Smem::kOutPitch + c));
      }
      return;
    }
    const int32_t c_stride = g.channels_last ? 1 : g.in_plane();
    for (int i = tid; i < BM * BN; i += kGemmThreads) {
      const int r = g.channels_last ? i / BN : i % BM, c = g.channels_last ? i % BN : i / BM;
      const int32_t at = smem.row_at[r];
      if (at >= 0 && c_base + c < g.cg) args.gemm.dx[at + (c_base + c) * c_stride] = out[r * Smem::kOutPitch + c];
    }
  }
};

// The block's program over the ring. Stage it's copies go out kWgLookahead stages before its
// multiply. Every iteration waits for its own stage (wait(): this thread's copies; the barrier:
// everyone's), then refills slot (it + kWgLookahead) % kWgSlots = (it - 2) % kWgSlots, whose
// multiply every warpgroup retired before that barrier; issues the stage's multiply and retires
// the one before. One copy group is committed per stage, empty past the end, so "at most
// kWgLookahead - 1 in flight" always means "the current stage has landed". `b` has
// conv_gemm_tc_schedule's steps and retire(pending).
template <class Block>
PG_HD void conv_gemm_wgmma_schedule(Block& b) {
  if (!b.begin()) return;
  b.barrier();
  const int iterations = b.iterations();
  for (int s = 0; s < kWgLookahead; ++s) {
    if (s < iterations) {
      if (s > 0) b.advance();
      b.fetch(s);
    }
    b.commit();
  }
  for (int it = 0; it < iterations; ++it) {
    b.wait();
    b.barrier();
    const int next = it + kWgLookahead;
    if (next < iterations) {
      b.advance();
      b.fetch(next % kWgSlots);
    }
    b.commit();
    b.multiply_async(it % kWgSlots);
    b.retire(1);
  }
  b.retire(0);
  b.barrier();  // every warpgroup's multiplies are done: finish() may lay the results over the ring
  b.finish();
  b.barrier();
  b.write_out();
}

#if PG_GPU_COMPILER && defined(PG_WGMMA)
// The block's program over the kernel's dynamic shared memory `raw`. The descriptors' swizzle
// needs 1024-byte aligned tiles: the launch asks for 1 KiB more and the tiles start at the next
// 1 KiB. `args` stays a reference to the kernel parameter (conv.gemm.tma's tensor maps are read
// at its address).
template <class Thread>
__device__ __forceinline__ void run_conv_gemm_wgmma_block(const typename Thread::Args& args, unsigned char* raw) {
  const unsigned skip = (1024 - (static_cast<unsigned>(__cvta_generic_to_shared(raw)) & 1023)) & 1023;
  auto& smem = *reinterpret_cast<typename Thread::Smem*>(raw + skip);
  Thread th;
  ConvGemmDeviceBlock<Thread> block{th, smem, args};
  conv_gemm_wgmma_schedule(block);
}

template <class T, int BM, int BN>
__global__ void __launch_bounds__(kGemmThreads, 1) conv_gemm_wgmma_kernel(ConvGemmTcArgs<T> args) {
  extern __shared__ __align__(16) unsigned char conv_gemm_wgmma_smem[];
  run_conv_gemm_wgmma_block<ConvGemmWgmmaThread<T, BM, BN>>(args, conv_gemm_wgmma_smem);
}
#endif

struct ConvGemmWgmma {
  static constexpr ConvTraits traits{.name = "conv.gemm.wgmma", .deterministic = true};
  // conv.gemm.tc's sizes, with K/groups past one 64-k stage now and then.
  static ConvDomain domain() {
    ConvDomain d = ConvGemmTc::domain();
    d.max_k_per_group = 72;
    return d;
  }

  static ConvGemmTcPlan plan(const ConvProblem& p) {
    return plan_conv_gemm_tc(p, plan_conv_gemm(p, kWgBK, 256, p.c_per_group() <= 64 ? 64 : 128));
  }
  static Support supports(const ConvProblem& p) { return conv_gemm_tc_plan_support(p, plan(p)); }
  static size_t workspace_bytes(const ConvProblem& p) { return plan(p).workspace_bytes(); }

  // Prepares the workspace on `ex` and calls run.template operator()<T, BM, BN>(plan, args).
  template <class Exec, class Run>
  static void with_args(const Exec& ex, const ConvProblem& p, const ConvBuffers& b, Run&& run) {
    if (p.x_elems() == 0) return;
    const ConvGemmTcPlan pl = plan(p);
    const auto go = [&](auto tag) {
      using T = decltype(tag);
      const ConvGemmTcArgs<T> args = prepare_conv_gemm_tc<T>(ex, traits.name, p, pl, b);
      if (pl.gemm.bn == 64) run.template operator()<T, 256, 64>(pl.gemm, args);
      else run.template operator()<T, 256, 128>(pl.gemm, args);
    };
    if (p.dtype == DType::f16) go(f16{});
    else go(bf16{});
  }

#if !PG_GPU_COMPILER
  static void launch(const CpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      run_conv_gemm_grid_on_host<ConvGemmWgmmaThread<T, BM, BN>>(ex, args, pl.grid,
                                                                  [](auto& block) { conv_gemm_wgmma_schedule(block); });
    });
  }
#endif

#if PG_GPU_COMPILER && defined(PG_WGMMA)
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      const dim3 grid(static_cast<unsigned>(pl.grid[0]), static_cast<unsigned>(pl.grid[1]), static_cast<unsigned>(pl.grid[2]));
      constexpr int bytes = sizeof(ConvGemmWgmmaSmem<T, BM, BN>) + 1024;
      PG_HIP_CHECK(cudaFuncSetAttribute(conv_gemm_wgmma_kernel<T, BM, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      conv_gemm_wgmma_kernel<T, BM, BN><<<grid, kGemmThreads, bytes, ex.stream>>>(args);
      PG_LAUNCH_CHECK("conv_gemm_wgmma_kernel");
    });
  }
#endif
};

}  // namespace pg
