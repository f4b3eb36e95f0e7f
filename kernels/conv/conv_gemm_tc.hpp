// conv.gemm.tc: conv.gemm's implicit GEMM per stride phase (kernels/conv/conv_gemm.hpp) on the
// matrix units, for f16 and bf16 with f32 accumulation. The products of two 16-bit floats are
// exact in f32, so the terms are the oracle's; only the order of the f32 sums differs, which the
// per-element bound (the oracle's term count) covers.
//
// The same phases, rows and taps as conv.gemm, BK = 32 reduction steps per stage, the operands
// kept in their 16-bit type. What differs:
//   - Both operands are rows of k's in 16-byte chunks of 8, copied global -> shared memory
//     without passing through registers (cp.async on NVIDIA) into a ring of kTcStages stages:
//     a stage's copies are issued kTcStages - 1 stages before it is multiplied, so their
//     latency hides behind the matrix work of the stages before (conv_gemm_tc_schedule). With
//     one stage in flight through registers, the first version ran the bf16 2D row at 0.525 ms,
//     0.430 ms with two blocks per multiprocessor; the ring, 0.307 ms (H100, 2026-11-25,
//     bench/results/2026-11-25_h100_conv_tc.md). Two blocks per multiprocessor: 128 registers.
//   - A needs k contiguous: dy itself when it is channels-last with K and K/groups multiples of
//     8 (a chunk is then wholly inside its group or wholly past it); otherwise a pre-pass copies
//     dy once into the workspace as [n][position][group][K/groups padded to 32], zeros in the
//     padding.
//   - multiply() and who owns which result:
//       NVIDIA (sm_80 and later): 8 warps, each a 64 x 32 tile of 4 x 4 mma.sync.m16n8k16, the
//       fragments read from shared memory by ldmatrix;
//       AMD gfx90a: 4 waves of 64, each a 64 x 64 tile of 4 x 4 v_mfma_f32_16x16x16 (f16, bf16_1k);
//       the CPU backend, and GPUs without matrix units here (gfx1030): NVIDIA's warps and
//       ownership, each result summed by scalar f32 math from shared memory. The CPU backend
//       runs every block's 256 threads in turn (kernels/conv/conv_gemm_host_block.hpp), so the
//       index logic, tails, the ring and the barriers are fuzzed in CI.
// Shared memory has no padding: rows of 32 k's are swizzled in 16-byte chunks (chunk ^ row/2),
// so the 8 rows an ldmatrix phase reads fall on 8 different 16-byte bank groups.
//
// The weights go to the workspace once per launch as [group][tap][C/groups][K/groups] in T, k
// contiguous and zero-padded to whole tiles.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/divider.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/require.hpp"
#include "kernels/conv/conv_gemm.hpp"
#include "kernels/conv/conv_gemm_host_block.hpp"

namespace pg {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PG_TC_MMA_SYNC 1
#elif defined(__HIP_DEVICE_COMPILE__) && defined(__gfx90a__)
#define PG_TC_MFMA 1
#endif

inline constexpr int kTcBK = 32;  // reduction steps per stage: two k16 matrix steps
// Stages in the ring: 48 KiB of shared memory per block at 128 x 128. Four ran slower on the
// H100 (bf16 2D row 0.340 against 0.307 ms, channels-last 0.259 against 0.230 ms, same call,
// 2026-11-25), and would pass the 64 KiB of LDS an AMD workgroup may have.
inline constexpr int kTcStages = 3;
#if defined(PG_TC_MFMA)
inline constexpr int kTcWarp = 64, kTcInstN = 16;  // v_mfma_f32_16x16x16: results 16 x 16 per wave
#else
inline constexpr int kTcWarp = 32, kTcInstN = 8;   // mma.sync.m16n8k16: results 16 x 8 per warp
#endif

// The matrix instruction's results a lane owns, as (row ri, column ci) of its 16 x kTcInstN tile.
#if defined(PG_TC_MFMA)
inline constexpr int kTcOwnRows = 4, kTcOwnCols = 1;
PG_HD int tc_own_row(int lane, int ri) { return 4 * (lane / 16) + ri; }
PG_HD int tc_own_col(int lane, int) { return lane % 16; }
#else
inline constexpr int kTcOwnRows = 2, kTcOwnCols = 2;
PG_HD int tc_own_row(int lane, int ri) { return lane / 4 + 8 * ri; }
PG_HD int tc_own_col(int lane, int ci) { return 2 * (lane % 4) + ci; }
#endif

// Where (row, k) of a tile stored as rows of kTcBK k's sits: 16-byte chunks swizzled by row / 2.
PG_HD int tc_k_rows_at(int row, int k) { return row * kTcBK + ((((k >> 3) ^ (row >> 1)) & 3) << 3) + (k & 7); }

// 16 bytes global -> shared, or zeros when !valid (src is then not read). NVIDIA: cp.async, which
// completes at tc_wait(); elsewhere a plain copy, complete at once.
template <class T>
PG_HD void tc_copy16(T* dst, const T* src, bool valid) {
#if defined(PG_TC_MMA_SYNC)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :: "r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(src), "r"(valid ? 16 : 0));
#else
  Pack<T, 8> v;
  if (valid) v = load_pack<8>(src, 0);
  else
    for (int e = 0; e < 8; ++e) v.v[e] = T{0};
  store_pack<8>(dst, 0, v);
#endif
}
// Closes the copies issued since the last commit into one group.
PG_HD void tc_commit() {
#if defined(PG_TC_MMA_SYNC)
  asm volatile("cp.async.commit_group;");
#endif
}
// Waits until at most kTcStages - 2 groups of this thread are in flight: the oldest has landed.
PG_HD void tc_wait() {
#if defined(PG_TC_MMA_SYNC)
  asm volatile("cp.async.wait_group %0;" :: "n"(kTcStages - 2));
#endif
}

// The dx offset of row m of a phase (m < rows_in_phase) at the first channel of `group`: once
// per row in finish(), each channel a step further.
PG_HD int32_t conv_gemm_row_x_offset(const ConvShape<int32_t>& g, const ConvGemmPhase& ph, int32_t m, int32_t group) {
  const int32_t n = m / ph.j_plane, rest = m % ph.j_plane;
  const int32_t j[kAxes] = {rest / (ph.jn[1] * ph.jn[2]), rest / ph.jn[2] % ph.jn[1], rest % ph.jn[2]};
  int32_t pos[kAxes];
  for (int ax = 0; ax < kAxes; ++ax) pos[ax] = ph.i0[ax] + j[ax] * g.stride[ax];
  return g.x_offset(n, group * g.cg, pos[0], pos[1], pos[2]);
}

template <class T>
struct ConvGemmTcArgs {
  ConvGemmArgs<T, T> gemm;  // gemm.dy: A's source; gemm.w: the workspace's [group][tap][cg_pad][kg_pad]
  // A's source as a channels-last tensor for its row offsets: dy itself (k = K, kg = K/groups) or
  // the pre-pass's copy (k = groups * kg_pad, kg = kg_pad). Its k's past `kg` read as zeros.
  ConvShape<int32_t> a;
};

template <class T, int BM, int BN>
struct ConvGemmTcSmem {
  alignas(16) T a[kTcStages][BM * kTcBK];
  alignas(16) T b[kTcStages][BN * kTcBK];
  ConvGemmPhase phase;  // written by thread 0 in begin(), read after the barrier that follows

  static PG_HD int a_at(int m, int k) { return tc_k_rows_at(m, k); }
  static PG_HD int b_at(int c, int k) { return tc_k_rows_at(c, k); }
};

#if defined(PG_TC_MMA_SYNC)
__device__ __forceinline__ unsigned tc_smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void tc_ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tc_smem_address(p)));
}
template <class T>
__device__ __forceinline__ void tc_mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, bf16>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
#elif defined(PG_TC_MFMA)
typedef short tc_short4 __attribute__((ext_vector_type(4)));
typedef _Float16 tc_half4 __attribute__((ext_vector_type(4)));
typedef float tc_float4 __attribute__((ext_vector_type(4)));
template <class T>
__device__ __forceinline__ void tc_mfma(float (&c)[4], const tc_short4& a, const tc_short4& b) {
  tc_float4 acc = {c[0], c[1], c[2], c[3]};
  if constexpr (std::is_same_v<T, bf16>) acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, acc, 0, 0, 0);
  else acc = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(tc_half4, a), __builtin_bit_cast(tc_half4, b), acc, 0, 0, 0);
  for (int e = 0; e < 4; ++e) c[e] = acc[e];
}
#endif

template <class T, int BM, int BN>
struct ConvGemmTcThread {
  using Args = ConvGemmTcArgs<T>;
  using Smem = ConvGemmTcSmem<T, BM, BN>;
  static constexpr int kWarps = kGemmThreads / kTcWarp;
  static constexpr int kWarpsM = BM / 64, kWarpsN = kWarps / kWarpsM, WN = BN / kWarpsN;
  static constexpr int kMT = 4, kNT = WN / kTcInstN;  // matrix tiles per warp along m and along c
  static_assert(kWarpsM * kWarpsN == kWarps && kNT >= 2 && kNT % 2 == 0, "a warp is 64 rows by 2k matrix tiles");
  // A thread copies chunk tid % 4 (8 k's) of rows tid / 4 + 64 r of A and of B.
  static constexpr int kRows = BM / 64, kBRows = BN / 64;

  Args args;
  int tid;
  int32_t group, m_base, c_base, rows_in_phase;
  // Where the copies are: the chunk of K/groups and the tap (q per axis), and how many are left.
  int32_t chunk, chunks, q[kAxes], iterations_left;
  ConvGemmRows<kRows> rows;
  int32_t b_at;  // the workspace offset of the current (tap, chunk) tile's first element
  float acc[kMT][kNT][4];

  PG_HD int lane() const { return tid % kTcWarp; }
  PG_HD int warp_m() const { return tid / kTcWarp % kWarpsM; }
  PG_HD int warp_n() const { return tid / kTcWarp / kWarpsM; }
  // The tile row and column of result (mi, ri) and (ni, ci) this lane owns.
  PG_HD int m_of(int mi, int ri) const { return warp_m() * 64 + mi * 16 + tc_own_row(lane(), ri); }
  PG_HD int c_of(int ni, int ci) const { return warp_n() * WN + ni * kTcInstN + tc_own_col(lane(), ci); }

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
    chunks = args.gemm.kg_pad / kTcBK;
    iterations_left = taps * chunks;
    chunk = 0;
    q[0] = q[1] = q[2] = 0;
#pragma unroll
    for (int r = 0; r < kRows; ++r) rows.place(r, m_base + tid / 4 + 64 * r, rows_in_phase, ph);
#pragma unroll
    for (int mi = 0; mi < kMT; ++mi)
#pragma unroll
      for (int ni = 0; ni < kNT; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0;
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
           chunk * kTcBK;
  }

  // Issues the copies of the current (tap, chunk) into ring slot `slot`.
  PG_HD void fetch(Smem& s, int slot) const {
    const int kc = (tid % 4) * 8;
    const int32_t k = chunk * kTcBK + kc;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const bool valid = rows.at[r] >= 0 && k < args.a.kg;
      tc_copy16(&s.a[slot][Smem::a_at(tid / 4 + 64 * r, kc)], args.gemm.dy + (valid ? rows.at[r] + k : 0), valid);
    }
    const T* w = args.gemm.w + b_at + (tid / 4) * args.gemm.kg_pad + kc;
#pragma unroll
    for (int v = 0; v < kBRows; ++v) tc_copy16(&s.b[slot][Smem::b_at(tid / 4 + 64 * v, kc)], w + 64 * v * args.gemm.kg_pad, true);
  }
  PG_HD void commit() const { tc_commit(); }
  PG_HD void wait() const { tc_wait(); }

  // The next (tap, chunk): chunks inside a tap, then the taps with q[2] fastest.
  PG_HD void advance(const Smem& smem) {
    const ConvGemmPhase& ph = smem.phase;
    --iterations_left;
    if (++chunk < chunks) {
      b_at += kTcBK;
      return;
    }
    chunk = 0;
    conv_gemm_next_tap(q, ph);
    to_tap(ph);
  }

#if defined(PG_TC_MMA_SYNC)
  // Per k16 step: 4 B fragments (two ldmatrix.x4, 16 c's by 16 k's each), then per m tile its A
  // fragment (ldmatrix.x4, 16 x 16) and 4 mma.sync. Lane l addresses row l % 8 of matrix l / 8.
  __device__ __forceinline__ void multiply(const Smem& s, int slot) {
    const int i = lane() / 8, r = lane() % 8;
#pragma unroll
    for (int ks = 0; ks < kTcBK; ks += 16) {
      uint32_t b[kNT][2];
#pragma unroll
      for (int nj = 0; nj < kNT / 2; ++nj) {
        // Matrices: (c 0-7, k 0-7), (c 0-7, k 8-15), (c 8-15, k 0-7), (c 8-15, k 8-15).
        uint32_t f[4];
        tc_ldmatrix_x4(f, &s.b[slot][Smem::b_at(warp_n() * WN + nj * 16 + r + (i >> 1) * 8, ks + (i & 1) * 8)]);
        b[2 * nj][0] = f[0];
        b[2 * nj][1] = f[1];
        b[2 * nj + 1][0] = f[2];
        b[2 * nj + 1][1] = f[3];
      }
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi) {
        // Matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15).
        uint32_t a[4];
        tc_ldmatrix_x4(a, &s.a[slot][Smem::a_at(warp_m() * 64 + mi * 16 + r + (i & 1) * 8, ks + (i >> 1) * 8)]);
#pragma unroll
        for (int ni = 0; ni < kNT; ++ni) tc_mma<T>(acc[mi][ni], a, b[ni]);
      }
    }
  }
#elif defined(PG_TC_MFMA)
  // Per k16 step: lane l holds A(m = l % 16, k = 4 (l / 16) + 0..3) of each of its 4 m tiles and
  // B(c = l % 16, the same k's) of each of its 4 c tiles, then 16 v_mfma.
  __device__ __forceinline__ void multiply(const Smem& s, int slot) {
    const int row = lane() % 16, kq = 4 * (lane() / 16);
#pragma unroll
    for (int ks = 0; ks < kTcBK; ks += 16) {
      tc_short4 a[kMT], b[kNT];
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi)
        for (int e = 0; e < 4; ++e)
          a[mi][e] = static_cast<short>(s.a[slot][Smem::a_at(warp_m() * 64 + mi * 16 + row, ks + kq + e)].bits);
#pragma unroll
      for (int ni = 0; ni < kNT; ++ni)
        for (int e = 0; e < 4; ++e)
          b[ni][e] = static_cast<short>(s.b[slot][Smem::b_at(warp_n() * WN + ni * kTcInstN + row, ks + kq + e)].bits);
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNT; ++ni) tc_mfma<T>(acc[mi][ni], a[mi], b[ni]);
    }
  }
#else
  // Scalar f32 math on the results this lane would own on NVIDIA. Results past the phase's rows
  // or the group's channels are never written, so they are not summed (the CPU backend's time).
  PG_HD void multiply(const Smem& s, int slot) {
    for (int mi = 0; mi < kMT; ++mi)
      for (int ri = 0; ri < kTcOwnRows; ++ri) {
        const int m = m_of(mi, ri);
        if (m_base + m >= rows_in_phase) continue;
        for (int ni = 0; ni < kNT; ++ni)
          for (int ci = 0; ci < kTcOwnCols; ++ci) {
            const int c = c_of(ni, ci);
            if (c_base + c >= args.gemm.g.cg) continue;
            float sum = acc[mi][ni][ri * kTcOwnCols + ci];
            for (int k = 0; k < kTcBK; ++k)
              sum += to_float(s.a[slot][Smem::a_at(m, k)]) * to_float(s.b[slot][Smem::b_at(c, k)]);
            acc[mi][ni][ri * kTcOwnCols + ci] = sum;
          }
      }
  }
#endif

  // The owned results to dx, each element once.
  PG_HD void finish(const Smem& smem) const {
    const ConvShape<int32_t>& g = args.gemm.g;
    const ConvGemmPhase& ph = smem.phase;
    const int32_t c_stride = g.channels_last ? 1 : g.in_plane();
#pragma unroll
    for (int mi = 0; mi < kMT; ++mi)
#pragma unroll
      for (int ri = 0; ri < kTcOwnRows; ++ri) {
        const int32_t m = m_base + m_of(mi, ri);
        if (m >= rows_in_phase) continue;
        const int32_t at = conv_gemm_row_x_offset(g, ph, m, group);
#pragma unroll
        for (int ni = 0; ni < kNT; ++ni)
#pragma unroll
          for (int ci = 0; ci < kTcOwnCols; ++ci) {
            const int32_t c = c_base + c_of(ni, ci);
            if (c < g.cg) args.gemm.dx[at + c * c_stride] = from_accum<T>(acc[mi][ni][ri * kTcOwnCols + ci]);
          }
      }
  }
};

// The block's program over the ring. The copies of stage s go out kTcStages - 1 stages before
// its multiply; every iteration waits for its own stage's copies (tc_wait, this thread's; the
// barrier, everyone's), then refills the slot the previous iteration read, which every thread
// finished reading before that barrier. One group is committed per stage, empty past the end,
// so "at most kTcStages - 2 in flight" always means "the current stage has landed". The barrier
// after begin() publishes the phase thread 0 wrote, which advance() reads. `b` has
// conv_gemm_schedule's steps with fetch(slot), and commit() and wait().
template <class Block>
PG_HD void conv_gemm_tc_schedule(Block& b) {
  if (!b.begin()) return;
  b.barrier();
  const int iterations = b.iterations();
  for (int s = 0; s < kTcStages - 1; ++s) {
    if (s < iterations) {
      if (s > 0) b.advance();
      b.fetch(s);
    }
    b.commit();
  }
  for (int it = 0; it < iterations; ++it) {
    b.wait();
    b.barrier();
    const int next = it + kTcStages - 1;
    if (next < iterations) {
      b.advance();
      b.fetch(next % kTcStages);
    }
    b.commit();
    b.multiply(it % kTcStages);
  }
  b.finish();
}

// The workspace's weights as [group][tap][c][k], zero in the padding: an item is 8 consecutive
// k's of one c, stored as one 16-byte pack, and neighbouring items are neighbouring c's, so a
// warp's reads of channels-last weights ([K][tap][C/groups]) are contiguous. One element per item,
// k fastest, read each weight 2.3 KB from the last on the channels-last bf16 row (5.6 us of its
// 0.136 ms, ncu). With 8 (H100, 2026-11-26, same call, three rounds): the stride-2 bf16 row (its
// weights 4x the others') 0.073 -> 0.067 ms with conv.gemm.wgmma and 0.093 -> 0.087 with
// conv.gemm.tc; the channels-last row 0.1407 -> 0.1398; the rest within 1%.
inline constexpr int kTcWeightRun = 8;

template <class T>
struct ConvGemmTcWeightsBody {
  ConvShape<int32_t> g;
  int32_t kg_pad, cg_pad;  // kg_pad: whole runs (a multiple of the stage's 32 or 64 k's)
  const T* w;
  T* out;

  PG_HD void operator()(int32_t i) const {
    const int32_t c = i % cg_pad, rest = i / cg_pad, runs = kg_pad / kTcWeightRun;
    const int32_t k0 = rest % runs * kTcWeightRun, tap = rest / runs % g.taps(), group = rest / runs / g.taps();
    Pack<T, kTcWeightRun> v;
#pragma unroll
    for (int e = 0; e < kTcWeightRun; ++e)
      v.v[e] = k0 + e < g.kg && c < g.cg ? w[g.w_offset(group * g.kg + k0 + e, c, tap)] : T{0};
    store_pack<kTcWeightRun>(out, ((group * g.taps() + tap) * cg_pad + c) * kg_pad + k0, v);
  }
};

// The pre-pass: dy as [n][position][group][kg_pad], zeros past K/groups. An item is 32 k's of
// one position, written as two whole 32-byte sectors; items run along the positions of one
// (n, k run), so each of the 32 reads of channels-first dy is coalesced across a warp. One k per
// item, the first version, wrote 2 bytes per sector and took 0.42 ms of the bf16 2D row's
// 0.68 ms; 16 k's, 0.074 ms; 32, 0.062 ms (H100, 2026-11-25). Two positions per item, their k's
// read as 4-byte pairs, made the row slower: 0.324-0.330 ms against 0.291.
inline constexpr int kTcCopyRun = 32;

template <class T>
struct ConvGemmTcDyBody {
  ConvShape<int32_t> g;
  int32_t kg_pad;
  Divider<int32_t> by_plane, by_runs, by_groups;  // runs: kg_pad / kTcCopyRun
  const T* dy;
  T* out;

  PG_HD void operator()(int32_t i) const {
    const int32_t point = by_plane.mod(i), rest = by_plane.div(i);
    const int32_t k0 = by_runs.mod(rest) * kTcCopyRun, ng = by_runs.div(rest);
    const int32_t group = by_groups.mod(ng), n = by_groups.div(ng);
    const int32_t plane = g.out_plane();
    const int32_t first = group * g.kg, k_step = g.channels_last ? 1 : plane;  // the group's first channel
    const T* src = dy + (g.channels_last ? (n * plane + point) * g.k + first : (n * g.k + first) * plane + point);
    Pack<T, 8> v[kTcCopyRun / 8];
#pragma unroll
    for (int e = 0; e < kTcCopyRun; ++e) v[e / 8].v[e % 8] = k0 + e < g.kg ? src[(k0 + e) * k_step] : T{0};
    T* dst = out + ((n * plane + point) * g.groups + group) * kg_pad + k0;
#pragma unroll
    for (int h = 0; h < kTcCopyRun / 8; ++h) store_pack<8>(dst, 8 * h, v[h]);
  }
};

// The launch's sizes: conv.gemm's plan with K/groups padded to 32, and where A comes from.
struct ConvGemmTcPlan {
  ConvGemmPlan gemm;
  bool a_direct;     // dy is A's source; else the pre-pass's copy after the weights
  int64_t dy_elems;  // the copy's elements (0 when direct)

  size_t workspace_bytes() const { return static_cast<size_t>(gemm.workspace_elems + dy_elems) * 2; }
};

// `gemm`: the tiles and K/groups padding of the variant's stage (conv.gemm.wgmma's are its own).
inline ConvGemmTcPlan plan_conv_gemm_tc(const ConvProblem& p, const ConvGemmPlan& gemm) {
  ConvGemmTcPlan plan{gemm, false, 0};
  plan.a_direct = p.layout == Layout::channels_last && p.k % 8 == 0 && p.k_per_group() % 8 == 0;
  if (!plan.a_direct) plan.dy_elems = p.n * p.out_plane() * p.groups * plan.gemm.kg_pad;
  return plan;
}

inline Support conv_gemm_tc_plan_support(const ConvProblem& p, const ConvGemmTcPlan& pl) {
  if (pl.gemm.workspace_elems + pl.dy_elems >= (int64_t{1} << 31)) return Support::no("offsets beyond int32");
  return conv_gemm_plan_support(p, pl.gemm);
}

// Fills the workspace on `ex` (the weights, then dy's copy unless A reads dy directly) and
// returns the arguments that read it. b.workspace and, when direct, b.dy are 16-byte aligned.
template <class T, class Exec>
ConvGemmTcArgs<T> prepare_conv_gemm_tc(const Exec& ex, const char* name, const ConvProblem& p, const ConvGemmTcPlan& pl,
                                       const ConvBuffers& b) {
  require_aligned16(name, {{"the workspace", b.workspace}});
  if (pl.a_direct) require_aligned16(name, {{"dy", b.dy}});
  const ConvShape<int32_t> g = make_conv_shape<int32_t>(p);
  const int32_t kg_pad = static_cast<int32_t>(pl.gemm.kg_pad);
  T* workspace = static_cast<T*>(b.workspace);
  ex.template for_each<int32_t>(pl.gemm.workspace_elems / kTcWeightRun,
                                ConvGemmTcWeightsBody<T>{g, kg_pad, static_cast<int32_t>(pl.gemm.cg_pad),
                                                         static_cast<const T*>(b.w), workspace});
  ConvGemmTcArgs<T> args{make_conv_gemm_args<T, T>(p, pl.gemm, b), g};
  args.a.channels_last = true;
  if (!pl.a_direct) {
    T* copy = workspace + pl.gemm.workspace_elems;
    ex.template for_each<int32_t>(pl.dy_elems / kTcCopyRun,
                                  ConvGemmTcDyBody<T>{g, kg_pad, Divider<int32_t>(p.out_plane()),
                                                      Divider<int32_t>(kg_pad / kTcCopyRun), Divider<int32_t>(p.groups),
                                                      static_cast<const T*>(b.dy), copy});
    args.gemm.dy = copy;
    args.a.k = g.groups * kg_pad;
    args.a.kg = kg_pad;
  }
  return args;
}

#if PG_GPU_COMPILER
template <class T, int BM, int BN>
__global__ void PG_LAUNCH_BOUNDS(kGemmThreads, 2) conv_gemm_tc_kernel(ConvGemmTcArgs<T> args) {
  using Thread = ConvGemmTcThread<T, BM, BN>;
  // Past the 48 KiB a static array may take: the launch raises the kernel's dynamic limit.
  extern __shared__ __align__(16) unsigned char conv_gemm_tc_smem[];
  auto& smem = *reinterpret_cast<typename Thread::Smem*>(conv_gemm_tc_smem);
  Thread th;
  ConvGemmDeviceBlock<Thread> block{th, smem, args};
  conv_gemm_tc_schedule(block);
}
#endif

struct ConvGemmTc {
  static constexpr ConvTraits traits{.name = "conv.gemm.tc", .deterministic = true};
  // conv.gemm's sizes, with K/groups past one 32-step stage now and then.
  static ConvDomain domain() {
    ConvDomain d = ConvGemm::domain();
    d.dtypes = {DType::f16, DType::bf16};
    d.max_k_per_group = 40;
    return d;
  }

  static ConvGemmTcPlan plan(const ConvProblem& p) { return plan_conv_gemm_tc(p, plan_conv_gemm(p, kTcBK)); }
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
      if (gemm_tile_n(p) == 64) run.template operator()<T, 256, 64>(pl.gemm, args);
      else run.template operator()<T, 128, 128>(pl.gemm, args);
    };
    if (p.dtype == DType::f16) go(f16{});
    else go(bf16{});
  }

#if !PG_GPU_COMPILER
  // Every block's 256 threads in turn on the host, the blocks spread over the host threads. Only
  // the CPU backend's unit (g++) has it: in nvcc's, the host block's steps would be host
  // functions called from the host-and-device schedule.
  static void launch(const CpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      run_conv_gemm_grid_on_host<ConvGemmTcThread<T, BM, BN>>(ex, args, pl.grid,
                                                              [](auto& block) { conv_gemm_tc_schedule(block); });
    });
  }
#endif

#if PG_GPU_COMPILER
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      const dim3 grid(static_cast<unsigned>(pl.grid[0]), static_cast<unsigned>(pl.grid[1]), static_cast<unsigned>(pl.grid[2]));
      constexpr int bytes = sizeof(ConvGemmTcSmem<T, BM, BN>);
#if defined(__CUDACC__)
      PG_HIP_CHECK(cudaFuncSetAttribute(conv_gemm_tc_kernel<T, BM, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
#endif
      conv_gemm_tc_kernel<T, BM, BN><<<grid, kGemmThreads, bytes, ex.stream>>>(args);
      PG_LAUNCH_CHECK("conv_gemm_tc_kernel");
    });
  }
#endif
};

}  // namespace pg
