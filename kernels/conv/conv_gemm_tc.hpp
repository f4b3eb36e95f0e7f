// conv.gemm.tc: conv.gemm's implicit GEMM per stride phase (kernels/conv/conv_gemm.hpp) on the
// matrix units, for f16 and bf16 with f32 accumulation. The products of two 16-bit floats are
// exact in f32, so the terms are the oracle's; only the order of the f32 sums differs, which the
// per-element bound (the oracle's term count) covers.
//
// The same phases, rows, taps and schedule as conv.gemm (conv_gemm_schedule: begin, fetch,
// stage, advance, multiply, finish, one barrier per stage), with BK = 32 reduction steps per
// stage and the operands kept in their 16-bit type, half the shared memory per step. What
// differs is multiply() and who owns which result:
//   - NVIDIA (sm_80 and later): 8 warps, each a 64 x 32 tile of 4 x 4 mma.sync.m16n8k16, its
//     fragments read from shared memory by ldmatrix (.trans for channels-first A, stored k-major);
//   - AMD gfx90a: 4 waves of 64, each a 64 x 64 tile of 4 x 4 v_mfma_f32_16x16x16 (f16, bf16_1k);
//   - the CPU backend, and GPUs without matrix units here (gfx1030): the same warps and the
//     same ownership as NVIDIA, each result summed by scalar f32 math from shared memory. The
//     CPU backend runs every block's 256 threads in turn (kernels/conv/conv_gemm_host_block.hpp),
//     so the index logic, tails, the shared-memory layout and the barriers are fuzzed in CI.
// Shared memory has no padding: rows of 32 k's are swizzled in 16-byte chunks (chunk ^ row/2),
// and channels-first A, stored as rows of BM m's per k, by chunk ^ (k % 8), so the 8 rows an
// ldmatrix phase reads fall on 8 different 16-byte bank groups.
//
// The weights go to the workspace once per launch as [group][tap][C/groups][K/groups] in T, k
// contiguous and zero-padded to whole tiles, so a B row of 8 k's is one 16-byte load. A loads
// are 16 bytes of 8 k's per row for channels-last when K and K/groups are multiples of 8 and dy is
// 16-byte aligned, else one element at a time (channels-first: each thread one row, k stepping
// by a plane).
#pragma once

#include <cstdint>
#include <type_traits>

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
// Where (k, m) of a tile stored as kTcBK rows of `len` m's sits: chunks swizzled by k % 8.
PG_HD int tc_m_rows_at(int k, int m, int len) { return k * len + (((m >> 3) ^ (k & 7)) << 3) + (m & 7); }

template <class T>
struct ConvGemmTcArgs {
  ConvGemmArgs<T, T> gemm;  // the workspace is [group][tap][cg_pad][kg_pad] here
  bool a_vec;  // channels-last A rows load 8 k's at once
};

template <class T, int BM, int BN, bool CL>
struct ConvGemmTcSmem {
  alignas(16) T a[2][BM * kTcBK];
  alignas(16) T b[2][BN * kTcBK];
  ConvGemmPhase phase;  // written by thread 0 in begin(), read after the first barrier

  static PG_HD int a_at(int m, int k) { return CL ? tc_k_rows_at(m, k) : tc_m_rows_at(k, m, BM); }
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
__device__ __forceinline__ void tc_ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
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

template <class T, int BM, int BN, bool CL>
struct ConvGemmTcThread {
  using Args = ConvGemmTcArgs<T>;
  using Smem = ConvGemmTcSmem<T, BM, BN, CL>;
  static constexpr int kWarps = kGemmThreads / kTcWarp;
  static constexpr int kWarpsM = BM / 64, kWarpsN = kWarps / kWarpsM, WN = BN / kWarpsN;
  static constexpr int kMT = 4, kNT = WN / kTcInstN;  // matrix tiles per warp along m and along c
  static_assert(kWarpsM * kWarpsN == kWarps && kNT >= 2 && kNT % 2 == 0, "a warp is 64 rows by 2k matrix tiles");
  // A loads: channels-last, kRows rows of 8 k's (row tid / 4 + 64 r, k's from (tid % 4) * 8);
  // channels-first, one row (tid % BM) at kALoads k's from (tid / BM) * kALoads.
  static constexpr int kRows = CL ? BM / 64 : 1;
  static constexpr int kALoads = CL ? 8 * kRows : BM * kTcBK / kGemmThreads;
  static constexpr int kBRows = BN / 64;  // B rows of 8 k's: c = tid / 4 + 64 v

  Args args;
  int tid;
  int32_t group, m_base, c_base, rows_in_phase;
  int32_t chunk, chunks, q[kAxes], iterations_left;
  ConvGemmRows<kRows> rows;
  int32_t b_at;  // the workspace offset of the current (tap, chunk) tile's first element
  T a_next[kALoads];
  Pack<T, 8> b_next[kBRows];
  float acc[kMT][kNT][4];

  PG_HD int a_row(int r) const { return CL ? tid / 4 + 64 * r : tid % BM; }
  PG_HD int a_k(int l) const { return CL ? (tid % 4) * 8 + l % 8 : (tid / BM) * kALoads + l; }
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
    for (int r = 0; r < kRows; ++r) rows.place(r, m_base + a_row(r), rows_in_phase, ph);
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
    rows.to_tap(g, ph, q, group);
    b_at = ((group * g.taps() + g.tap_index(t[0], t[1], t[2])) * args.gemm.cg_pad + c_base) * args.gemm.kg_pad +
           chunk * kTcBK;
  }

  PG_HD void fetch() {
    const ConvShape<int32_t>& g = args.gemm.g;
    const int32_t k0 = chunk * kTcBK;
    if (CL && args.a_vec) {
      // K/groups is a multiple of 8, so a row's 8 k's are all inside the group or all past it.
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int32_t k = k0 + a_k(0);
        Pack<T, 8> v;
        if (rows.at[r] >= 0 && k < g.kg) v = load_pack<8>(args.gemm.dy, rows.at[r] + k);
        else
          for (int e = 0; e < 8; ++e) v.v[e] = T{0};
#pragma unroll
        for (int e = 0; e < 8; ++e) a_next[r * 8 + e] = v.v[e];
      }
    } else {
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int r = CL ? l / 8 : 0;
        const int32_t k = k0 + a_k(l);
        const bool ok = rows.at[r] >= 0 && k < g.kg;
        a_next[l] = ok ? args.gemm.dy[rows.at[r] + k * args.gemm.k_stride] : T{0};
      }
    }
    const T* w = args.gemm.w + b_at + (tid / 4) * args.gemm.kg_pad + (tid % 4) * 8;
#pragma unroll
    for (int v = 0; v < kBRows; ++v) b_next[v] = load_pack<8>(w, 64 * v * args.gemm.kg_pad);
  }

  PG_HD void stage(Smem& s, int buf) const {
    if constexpr (CL) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        Pack<T, 8> v;
#pragma unroll
        for (int e = 0; e < 8; ++e) v.v[e] = a_next[r * 8 + e];
        store_pack<8>(s.a[buf], Smem::a_at(a_row(r), a_k(0)), v);
      }
    } else {
#pragma unroll
      for (int l = 0; l < kALoads; ++l) s.a[buf][Smem::a_at(a_row(0), a_k(l))] = a_next[l];
    }
#pragma unroll
    for (int v = 0; v < kBRows; ++v) store_pack<8>(s.b[buf], Smem::b_at(tid / 4 + 64 * v, (tid % 4) * 8), b_next[v]);
  }

  PG_HD void advance(const Smem& smem) {
    const ConvGemmPhase& ph = smem.phase;
    --iterations_left;
    if (++chunk < chunks) {
      b_at += kTcBK;
      return;
    }
    chunk = 0;
    if (++q[2] == ph.taps_in[2]) {
      q[2] = 0;
      if (++q[1] == ph.taps_in[1]) {
        q[1] = 0;
        ++q[0];
      }
    }
    to_tap(ph);
  }

#if defined(PG_TC_MMA_SYNC)
  // Per k16 step: 4 A fragments (ldmatrix.x4, 16 x 16 each) and 4 B fragments (two ldmatrix.x4,
  // 16 c's by 16 k's each), then 16 mma.sync. Lane l addresses row l % 8 of matrix l / 8.
  __device__ __forceinline__ void multiply(const Smem& s, int buf) {
    const int i = lane() / 8, r = lane() % 8;
#pragma unroll
    for (int ks = 0; ks < kTcBK; ks += 16) {
      uint32_t a[kMT][4], b[kNT][2];
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi) {
        const int m0 = warp_m() * 64 + mi * 16;
        // Matrices: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15).
        if constexpr (CL) tc_ldmatrix_x4(a[mi], &s.a[buf][Smem::a_at(m0 + r + (i & 1) * 8, ks + (i >> 1) * 8)]);
        else tc_ldmatrix_x4_trans(a[mi], &s.a[buf][Smem::a_at(m0 + (i & 1) * 8, ks + r + (i >> 1) * 8)]);
      }
#pragma unroll
      for (int nj = 0; nj < kNT / 2; ++nj) {
        // Matrices: (c 0-7, k 0-7), (c 0-7, k 8-15), (c 8-15, k 0-7), (c 8-15, k 8-15).
        uint32_t f[4];
        tc_ldmatrix_x4(f, &s.b[buf][Smem::b_at(warp_n() * WN + nj * 16 + r + (i >> 1) * 8, ks + (i & 1) * 8)]);
        b[2 * nj][0] = f[0];
        b[2 * nj][1] = f[1];
        b[2 * nj + 1][0] = f[2];
        b[2 * nj + 1][1] = f[3];
      }
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNT; ++ni) tc_mma<T>(acc[mi][ni], a[mi], b[ni]);
    }
  }
#elif defined(PG_TC_MFMA)
  // Per k16 step: lane l holds A(m = l % 16, k = 4 (l / 16) + 0..3) of each of its 4 m tiles and
  // B(c = l % 16, the same k's) of each of its 4 c tiles, then 16 v_mfma.
  __device__ __forceinline__ void multiply(const Smem& s, int buf) {
    const int row = lane() % 16, kq = 4 * (lane() / 16);
#pragma unroll
    for (int ks = 0; ks < kTcBK; ks += 16) {
      tc_short4 a[kMT], b[kNT];
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi)
        for (int e = 0; e < 4; ++e)
          a[mi][e] = static_cast<short>(s.a[buf][Smem::a_at(warp_m() * 64 + mi * 16 + row, ks + kq + e)].bits);
#pragma unroll
      for (int ni = 0; ni < kNT; ++ni)
        for (int e = 0; e < 4; ++e)
          b[ni][e] = static_cast<short>(s.b[buf][Smem::b_at(warp_n() * WN + ni * kTcInstN + row, ks + kq + e)].bits);
#pragma unroll
      for (int mi = 0; mi < kMT; ++mi)
#pragma unroll
        for (int ni = 0; ni < kNT; ++ni) tc_mfma<T>(acc[mi][ni], a[mi], b[ni]);
    }
  }
#else
  // Scalar f32 math on the results this lane would own on NVIDIA. Results past the phase's rows
  // or the group's channels are never written, so they are not summed (the CPU backend's time).
  PG_HD void multiply(const Smem& s, int buf) {
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
              sum += to_float(s.a[buf][Smem::a_at(m, k)]) * to_float(s.b[buf][Smem::b_at(c, k)]);
            acc[mi][ni][ri * kTcOwnCols + ci] = sum;
          }
      }
  }
#endif

  // The owned results to dx, each element once.
  PG_HD void finish(const Smem& smem) const {
    const ConvShape<int32_t>& g = args.gemm.g;
    const ConvGemmPhase& ph = smem.phase;
    const int32_t c_stride = CL ? 1 : g.in_plane();
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

// One workspace element: the weight at [group][tap][c][k], zero in the padding.
template <class T>
struct ConvGemmTcWeightsBody {
  ConvShape<int32_t> g;
  int32_t kg_pad, cg_pad;
  const T* w;
  T* out;

  PG_HD void operator()(int32_t i) const {
    const int32_t k = i % kg_pad, c = i / kg_pad % cg_pad, rest = i / kg_pad / cg_pad;
    const int32_t tap = rest % g.taps(), group = rest / g.taps();
    out[i] = k < g.kg && c < g.cg ? w[g.w_offset(group * g.kg + k, c, tap)] : T{0};
  }
};

#if PG_GPU_COMPILER
template <class T, int BM, int BN, bool CL>
__global__ void PG_LAUNCH_BOUNDS(kGemmThreads, 1) conv_gemm_tc_kernel(ConvGemmTcArgs<T> args) {
  using Thread = ConvGemmTcThread<T, BM, BN, CL>;
  __shared__ typename Thread::Smem smem;
  Thread th;
  ConvGemmDeviceBlock<Thread> block{th, smem, args};
  conv_gemm_schedule(block);
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

  static ConvGemmPlan plan(const ConvProblem& p) { return plan_conv_gemm(p, kTcBK); }
  static Support supports(const ConvProblem& p) { return conv_gemm_plan_support(p, plan(p)); }
  static size_t workspace_bytes(const ConvProblem& p) { return static_cast<size_t>(plan(p).workspace_elems) * 2; }

  template <class Exec, class Run>
  static void with_args(const Exec& ex, const ConvProblem& p, const ConvBuffers& b, Run&& run) {
    if (p.x_elems() == 0) return;
    require_aligned16(traits.name, {{"the workspace", b.workspace}});
    const ConvGemmPlan pl = plan(p);
    const auto go = [&](auto tag) {
      using T = decltype(tag);
      ex.template for_each<int32_t>(pl.workspace_elems,
                                    ConvGemmTcWeightsBody<T>{make_conv_shape<int32_t>(p), static_cast<int32_t>(pl.kg_pad),
                                                             static_cast<int32_t>(pl.cg_pad), static_cast<const T*>(b.w),
                                                             static_cast<T*>(b.workspace)});
      ConvGemmTcArgs<T> args{make_conv_gemm_args<T, T>(p, pl, b), false};
      args.a_vec = p.layout == Layout::channels_last && p.k % 8 == 0 && p.k_per_group() % 8 == 0 && aligned16(b.dy);
      with_gemm_tile(p, [&]<int BM, int BN, bool CL>() { run.template operator()<T, BM, BN, CL>(pl, args); });
    };
    if (p.dtype == DType::f16) go(f16{});
    else go(bf16{});
  }

  // Every block's 256 threads in turn on the host, the blocks spread over the host threads.
  static void launch(const CpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN, bool CL>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      ex.template for_each<int64_t>(pl.grid[0] * pl.grid[1] * pl.grid[2], [&](int64_t i) {
        run_conv_gemm_block_on_host<ConvGemmTcThread<T, BM, BN, CL>>(args, pl.grid, i);
      });
    });
  }

#if PG_GPU_COMPILER
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN, bool CL>(const ConvGemmPlan& pl, const ConvGemmTcArgs<T>& args) {
      const dim3 grid(static_cast<unsigned>(pl.grid[0]), static_cast<unsigned>(pl.grid[1]), static_cast<unsigned>(pl.grid[2]));
      conv_gemm_tc_kernel<T, BM, BN, CL><<<grid, kGemmThreads, 0, ex.stream>>>(args);
      PG_LAUNCH_CHECK("conv_gemm_tc_kernel");
    });
  }
#endif
};

}  // namespace pg
