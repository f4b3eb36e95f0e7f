// conv.gemm.tma: conv.gemm.wgmma's implicit GEMM per stride phase with both operands brought in
// by Hopper's tensor memory accelerator (kernels/common/tma.hpp) instead of per-thread cp.async.
//
// Why: conv.gemm.wgmma's 256 threads each compute 12 addresses and issue 12 copies per 64-k
// stage, and its warps wait on those copies (ncu on the channels-last bf16 2D row: the tensor pipe
// 52% active, the copy wait the most-sampled instruction; bench/results/2026-11-26_h100_conv_wgmma.md).
// Here thread 0 issues two copies per stage and the engine computes every address, fills
// padding with zeros and writes the 128-byte swizzle wgmma reads.
//
// The block's 256 result rows are a box of dx positions of one stride phase, not a run of
// flattened rows: bw x bh x bd positions of bn samples (conv_tma_box picks the box with the least
// waste for the largest phase). For tap q of the phase, the A operand is dy's box at
// (j0 + off0 - q * o_step) along each axis, the same shape, k's innermost: one box copy. Rows
// the box holds past the phase's positions compute values nobody writes.
// A's tensor is dy itself when it is channels-last with K and K/groups multiples of 8 (dims k,
// [group], W, H, D, N; the group axis when a 64-k chunk would cross into the next group, so the
// engine's bounds give that chunk's tail zeros), else conv.gemm.tc's copy [n][position][group]
// [K/groups padded to 64]. B is the workspace's [group][tap][C/groups][K/groups] as a 2D tensor.
//
// Stage, ring, multiply, results: conv.gemm.wgmma's (ConvGemmTmaThread derives from its thread):
// the same schedule (conv_gemm_wgmma_schedule), whose barrier before each refill also guarantees
// that every thread has passed its wait on the slot's previous phase. A stage's copies complete
// on that slot's mbarrier: wait() is every thread's wait on its parity.
// The CPU backend copies each box at once with the same coordinates (tma_load_box_host), so the
// box geometry, phases, taps and ring are fuzzed in CI. The GPU launch exists only in builds for
// sm_90a.
//
// Measured (H100, 2026-11-26, bench/results/2026-11-26_h100_conv_tma.md, same call as cuDNN):
// bf16 channels-last 2D 0.113 ms (conv.gemm.wgmma 0.137, cuDNN 0.137), 3D 0.127 (conv.gemm.tc
// 0.162), stride-2 0.062 (0.067), channels-first 2D 0.219 (0.219). Channels-first dy cannot be
// read as it lies (M-major A): a W tap moves the box's first coordinate by one element, and every
// such copy faulted (illegal instruction at UTMALDG), so channels-first keeps the copy.
#pragma once

#include <cstdint>

#include "kernels/common/tma.hpp"
#include "kernels/conv/conv_gemm_wgmma.hpp"

namespace pg {

// Where each operand's boxes come from, and the block's box of dx positions.
struct ConvTmaGeometry {
  int32_t dims;          // the problem's spatial axes (the last `dims` of kAxes)
  int32_t box[kAxes];    // positions of the box along each spatial axis (1 along axes the problem lacks)
  int32_t box_n;         // samples of the box
  int32_t tiles[kAxes];  // boxes along each axis, for the largest phase
  int32_t group_axis;    // 1: A has a group dimension after k; 0: a group's k's start at group * k_group
  int32_t k_group;       // A's k coordinate of a group's first k (without a group dimension)
  TmaTensor a, b;        // the tensors and boxes (the CPU backend's copies; the GPU launch's maps)
};

template <class T>
struct ConvGemmTmaArgs {
  ConvGemmTcArgs<T> tc;
  ConvTmaGeometry geo;
  TmaMap a_map, b_map;  // the GPU's encodings of geo.a and geo.b
};

template <class T, int BM, int BN>
struct ConvGemmTmaSmem : ConvGemmWgmmaSmem<T, BM, BN> {
  uint64_t full[kWgSlots];  // slot s's copies complete a phase of full[s]
};

// The box: per spatial axis a power of two, bn samples, bw * bh * bd * bn = rows, with the fewest
// boxes over the largest phase (jn = ceil(in / stride) positions); among equals, the widest W,
// then H. Channels-first dx is written along W, so there a box spans at least 16 positions of W
// (32 bytes of 16-bit values, a whole sector) or the whole axis: the first version, which took
// the narrowest W among equals, wrote the channels-first bf16 2D row one position per box row
// (box 1 x 8 x 32) and ran it at 0.38 ms against conv.gemm.wgmma's 0.22 (H100, 2026-11-26).
inline void conv_tma_box(const ConvProblem& p, int rows, int32_t (&box)[kAxes], int32_t& box_n, int32_t (&tiles)[kAxes]) {
  int64_t jn[kAxes];
  for (int a = 0; a < kAxes; ++a) jn[a] = (p.in[a] + p.stride[a] - 1) / p.stride[a];
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int log2_rows = 0;
  while ((1 << log2_rows) < rows) ++log2_rows;
  int min_ew = 0;
  if (p.layout == Layout::channels_first)
    while (min_ew < 4 && (int64_t{1} << min_ew) < jn[kAxes - 1]) ++min_ew;
  const int first = kAxes - p.dims;
  int64_t best = -1;
  box_n = rows;  // replaced by the first box tried (the loops run at least once)
  for (int a = 0; a < kAxes; ++a) box[a] = 1;
  for (int ew = log2_rows; ew >= min_ew; --ew)
    for (int eh = p.dims >= 2 ? log2_rows - ew : 0; eh >= 0; --eh)
      for (int ed = p.dims >= 3 ? log2_rows - ew - eh : 0; ed >= 0; --ed) {
        const int32_t b[kAxes] = {1 << ed, 1 << eh, 1 << ew};
        const int32_t bn = rows >> (ew + eh + ed);
        int64_t boxes = ceil_div(p.n, bn);
        for (int a = first; a < kAxes; ++a) boxes *= ceil_div(jn[a], b[a]);
        if (best < 0 || boxes < best) {  // the first of equals: the widest W, then H
          best = boxes;
          box_n = bn;
          for (int a = 0; a < kAxes; ++a) box[a] = a < first ? 1 : b[a];
        }
      }
  for (int a = 0; a < kAxes; ++a) tiles[a] = static_cast<int32_t>(ceil_div(a < first ? 1 : jn[a], box[a]));
}

template <class T, int BM, int BN>
struct ConvGemmTmaThread : ConvGemmWgmmaThread<T, BM, BN> {
  using Base = ConvGemmWgmmaThread<T, BM, BN>;
  using Args = ConvGemmTmaArgs<T>;
  using Smem = ConvGemmTmaSmem<T, BM, BN>;
  using Base::accumulate;
  using Base::acc;
  using Base::args;
  using Base::c_base;
  using Base::chunk;
  using Base::chunks;
  using Base::group;
  using Base::iterations_left;
  using Base::m_base;
  using Base::q;
  using Base::rows_in_phase;
  using Base::tid;
  static constexpr unsigned kStageBytes = (BM + BN) * kWgBK * sizeof(T);

  const Args* tma;          // the kernel parameter (its maps' addresses are the copies' operands)
  Smem* smem_ref;           // the block's shared memory, for wait()
  int32_t n0, j0[kAxes];    // the box's first sample and phase position
  int32_t a_k, a_pos[kAxes], b_k, b_row;  // the current stage's boxes: see to_tap()
  int32_t waits;            // stages waited for: the slot and the parity of the next

  PG_HD bool begin(const Args& a, Smem& smem, int thread, int bx, int by, int bz) {
    tma = &a;
    smem_ref = &smem;
    args = a.tc;
    tid = thread;
    const ConvShape<int32_t>& g = args.gemm.g;
    const ConvTmaGeometry& geo = a.geo;
    group = bz % g.groups;
    int32_t phase = bz / g.groups;
    if (a.tc.gemm.ordered) phase = a.tc.gemm.phase_order[phase];  // from the parameter: see ConvGemmThread::begin
    int32_t taps;
    const ConvGemmPhase ph = conv_gemm_phase(g, args.gemm.phases, phase, taps);
    // Box bx, W fastest, then H, D and the samples.
    int32_t rest = bx;
    bool inside = true;
#pragma unroll
    for (int ax = kAxes - 1; ax >= 0; --ax) {
      j0[ax] = rest % geo.tiles[ax] * geo.box[ax];
      rest /= geo.tiles[ax];
      inside = inside && j0[ax] < ph.jn[ax];
    }
    n0 = rest * geo.box_n;
    if (!inside || n0 >= g.n) return false;
#if defined(PG_TMA_DEVICE)
    if (tid == 0)
      for (int s = 0; s < kWgSlots; ++s) tma_barrier_init(&smem.full[s]);
#endif
    if (tid == 0) smem.phase = ph;
    // Every row of the box is multiplied (those past the phase are never written out).
    m_base = 0;
    rows_in_phase = BM;
    c_base = by * BN;
    chunks = args.gemm.kg_pad / kWgBK;
    iterations_left = taps * chunks;
    chunk = 0;
    q[0] = q[1] = q[2] = 0;
    waits = 0;
    accumulate = false;
#if !defined(PG_WGMMA_DEVICE)
    for (int mi = 0; mi < Base::kMI; ++mi)
      for (int e = 0; e < Base::kAcc; ++e) acc[mi][e] = 0;
#endif
    if (iterations_left > 0) to_tap(ph);
    return true;
  }

  PG_HD int iterations() const { return iterations_left; }

  // The boxes of tap q at chunk 0: A's first k of the group, and its box's first dy position
  // along each axis; B's row of (group, tap) at the block's first channel.
  PG_HD void to_tap(const ConvGemmPhase& ph) {
    const ConvShape<int32_t>& g = args.gemm.g;
    a_k = tma->geo.group_axis ? 0 : group * tma->geo.k_group;
    int32_t t[kAxes];
#pragma unroll
    for (int ax = 0; ax < kAxes; ++ax) {
      a_pos[ax] = j0[ax] + ph.off0[ax] - q[ax] * ph.o_step[ax];
      t[ax] = ph.t0[ax] + q[ax] * ph.t_step[ax];
    }
    b_k = 0;
    b_row = (group * g.taps() + g.tap_index(t[0], t[1], t[2])) * args.gemm.cg_pad + c_base;
  }

  // A's box coordinates in its tensor's order: k, [group], the problem's axes W first, sample.
  // Built with constant indices only, so the thread's state stays in registers.
  PG_HD void a_coords(int32_t (&c)[kTmaMaxRank]) const {
    const ConvTmaGeometry& geo = tma->geo;
    const int32_t ga = geo.group_axis, dims = geo.dims;
    c[0] = a_k;
#pragma unroll
    for (int i = 1; i < kTmaMaxRank; ++i) {
      const int32_t r = i - 1 - ga;  // which of W, H, D, sample
      const int32_t spatial = r == 0 ? a_pos[2] : r == 1 ? a_pos[1] : a_pos[0];
      c[i] = ga && i == 1 ? group : r < dims ? spatial : n0;
    }
  }

  // Thread 0 arms the slot's barrier for the stage's bytes and issues both box copies.
  PG_HD void fetch(Smem& s, int slot) const {
    if (tid != 0) return;
    const ConvTmaGeometry& geo = tma->geo;
    int32_t a[kTmaMaxRank];
    a_coords(a);
    const int32_t b[2] = {b_k, b_row};
#if defined(PG_TMA_DEVICE)
    tma_expect(&s.full[slot], kStageBytes);
    tma_load_box(&s.a[slot][0], &tma->a_map, geo.a.rank, a, &s.full[slot]);
    tma_load_box(&s.b[slot][0], &tma->b_map, 2, b, &s.full[slot]);
#else
    tma_load_box_host(geo.a, a, &s.a[slot][0]);
    tma_load_box_host(geo.b, b, &s.b[slot][0]);
#endif
  }
  PG_HD void commit() const {}
  // Until the oldest stage not yet waited for has landed (its slot's barrier's next phase).
  PG_HD void wait() {
#if defined(PG_TMA_DEVICE)
    tma_wait(&smem_ref->full[waits % kWgSlots], static_cast<unsigned>(waits / kWgSlots) & 1u);
#endif
    ++waits;
  }

  PG_HD void advance(const Smem& smem) {
    const ConvGemmPhase& ph = smem.phase;
    --iterations_left;
    if (++chunk < chunks) {
      a_k += kWgBK;
      b_k += kWgBK;
      return;
    }
    chunk = 0;
    conv_gemm_next_tap(q, ph);
    to_tap(ph);
  }

  // Each box row's dx offset at the group's first channel (-1 past the phase or the samples),
  // then conv.gemm.wgmma's rounding into the shared tile.
  PG_HD void finish(Smem& smem) const {
    const ConvShape<int32_t>& g = args.gemm.g;
    const ConvGemmPhase& ph = smem.phase;
    const ConvTmaGeometry& geo = tma->geo;
    for (int r = tid; r < BM; r += kGemmThreads) {
      int32_t rest = r, pos[kAxes];
      bool inside = true;
#pragma unroll
      for (int ax = kAxes - 1; ax >= 0; --ax) {
        const int32_t j = j0[ax] + rest % geo.box[ax];
        rest /= geo.box[ax];
        inside = inside && j < ph.jn[ax];
        pos[ax] = ph.i0[ax] + j * g.stride[ax];
      }
      const int32_t n = n0 + rest;
      smem.row_at[r] = inside && n < g.n ? g.x_offset(n, group * g.cg, pos[0], pos[1], pos[2]) : -1;
    }
    Base::store_results(smem);
  }
};

// The plan: conv.gemm.wgmma's, with dy read directly only where A's tensor fits 5 dimensions
// (a 3D problem whose 64-k chunks would cross groups takes the copy, whose groups are padded to 64),
// and the grid's first axis the boxes of the largest phase.
struct ConvGemmTmaPlan {
  ConvGemmTcPlan tc;
  ConvTmaGeometry geo;  // the box and tiles; the tensors are filled at launch
};

inline ConvGemmTmaPlan plan_conv_gemm_tma(const ConvProblem& p) {
  ConvGemmTmaPlan pl{plan_conv_gemm_tc(p, plan_conv_gemm(p, kWgBK, 256, p.c_per_group() <= 64 ? 64 : 128)), {}};
  const bool group_axis = p.groups > 1 && p.k_per_group() % kWgBK != 0;
  if (pl.tc.a_direct && group_axis && p.dims == 3) {
    pl.tc.a_direct = false;
    pl.tc.dy_elems = p.n * p.out_plane() * p.groups * pl.tc.gemm.kg_pad;
  }
  ConvTmaGeometry& geo = pl.geo;
  geo.dims = static_cast<int32_t>(p.dims);
  geo.group_axis = pl.tc.a_direct && group_axis;
  conv_tma_box(p, static_cast<int>(pl.tc.gemm.bm), geo.box, geo.box_n, geo.tiles);
  pl.tc.gemm.grid[0] = (p.n + geo.box_n - 1) / geo.box_n;
  for (int a = 0; a < kAxes; ++a) pl.tc.gemm.grid[0] *= geo.tiles[a];
  return pl;
}

// A's and B's tensors over the prepared arguments: A is dy or its copy as channels-last
// (k, [group], W, H, D, N), B the workspace's weights as (K/groups padded, rows of C/groups).
template <class T>
void fill_conv_tma_tensors(const ConvProblem& p, ConvTmaGeometry& geo, const ConvGemmTcArgs<T>& args, int bn) {
  const ConvShape<int32_t>& g = args.gemm.g;
  TmaTensor& a = geo.a;
  a.base = args.gemm.dy;
  int d = 0;
  const auto axis = [&](int64_t dim, int64_t stride, int32_t box) {
    a.dim[d] = dim;
    a.stride[d] = stride;
    a.box[d] = box;
    ++d;
  };
  const int64_t k_all = args.a.k;  // K, or groups * kg_pad in the copy
  if (geo.group_axis) {
    axis(args.a.kg, 1, kWgBK);
    axis(g.groups, args.a.kg, 1);
  } else {
    axis(k_all, 1, kWgBK);
  }
  geo.k_group = args.a.kg;
  int64_t stride = k_all;
  for (int ax = kAxes - 1; ax >= kAxes - geo.dims; --ax) {
    axis(g.out[ax], stride, geo.box[ax]);
    stride *= g.out[ax];
  }
  axis(p.n, stride, geo.box_n);
  a.rank = d;
  TmaTensor& b = geo.b;
  b.base = args.gemm.w;
  b.rank = 2;
  b.dim[0] = args.gemm.kg_pad;
  b.stride[0] = 1;
  b.box[0] = kWgBK;
  b.dim[1] = static_cast<int64_t>(g.groups) * g.taps() * args.gemm.cg_pad;
  b.stride[1] = args.gemm.kg_pad;
  b.box[1] = bn;
}

#if PG_GPU_COMPILER && defined(PG_WGMMA)
template <class T, int BM, int BN>
__global__ void __launch_bounds__(kGemmThreads, 1) conv_gemm_tma_kernel(const __grid_constant__ ConvGemmTmaArgs<T> args) {
  extern __shared__ __align__(16) unsigned char conv_gemm_tma_smem[];
  run_conv_gemm_wgmma_block<ConvGemmTmaThread<T, BM, BN>>(args, conv_gemm_tma_smem);
}
#endif

struct ConvGemmTma {
  static constexpr ConvTraits traits{.name = "conv.gemm.tma", .deterministic = true};
  static ConvDomain domain() { return ConvGemmWgmma::domain(); }
  static ConvGemmTcPlan plan(const ConvProblem& p) { return plan_conv_gemm_tma(p).tc; }

  static Support supports(const ConvProblem& p) {
    const ConvGemmTmaPlan pl = plan_conv_gemm_tma(p);
    if (pl.tc.gemm.grid[0] >= (int64_t{1} << 31)) return Support::no("grid too large: more than 2^31 boxes");
    return conv_gemm_tc_plan_support(p, pl.tc);
  }
  static size_t workspace_bytes(const ConvProblem& p) { return plan_conv_gemm_tma(p).tc.workspace_bytes(); }

  // Prepares the workspace on `ex` and calls run.template operator()<T, BM, BN>(grid, args).
  template <class Exec, class Run>
  static void with_args(const Exec& ex, const ConvProblem& p, const ConvBuffers& b, Run&& run) {
    if (p.x_elems() == 0) return;
    const ConvGemmTmaPlan pl = plan_conv_gemm_tma(p);
    const auto go = [&](auto tag) {
      using T = decltype(tag);
      ConvGemmTmaArgs<T> args{prepare_conv_gemm_tc<T>(ex, traits.name, p, pl.tc, b), pl.geo, {}, {}};
      fill_conv_tma_tensors(p, args.geo, args.tc, static_cast<int>(pl.tc.gemm.bn));
      if (pl.tc.gemm.bn == 64) run.template operator()<T, 256, 64>(pl.tc.gemm.grid, args);
      else run.template operator()<T, 256, 128>(pl.tc.gemm.grid, args);
    };
    if (p.dtype == DType::f16) go(f16{});
    else go(bf16{});
  }

#if !PG_GPU_COMPILER
  static void launch(const CpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const int64_t* grid, const ConvGemmTmaArgs<T>& args) {
      run_conv_gemm_grid_on_host<ConvGemmTmaThread<T, BM, BN>>(ex, args, grid, [](auto& block) { conv_gemm_wgmma_schedule(block); });
    });
  }
#endif

#if PG_GPU_COMPILER && defined(PG_WGMMA)
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_args(ex, p, b, [&]<class T, int BM, int BN>(const int64_t* grid, ConvGemmTmaArgs<T>& args) {
      constexpr bool kBf16 = std::is_same_v<T, bf16>;
      args.a_map = encode_tma_map(args.geo.a, kBf16, "conv.gemm.tma: dy");
      args.b_map = encode_tma_map(args.geo.b, kBf16, "conv.gemm.tma: weights");
      const dim3 blocks(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]));
      constexpr int bytes = sizeof(ConvGemmTmaSmem<T, BM, BN>) + 1024;
      PG_HIP_CHECK(cudaFuncSetAttribute(conv_gemm_tma_kernel<T, BM, BN>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      conv_gemm_tma_kernel<T, BM, BN><<<blocks, kGemmThreads, bytes, ex.stream>>>(args);
      PG_LAUNCH_CHECK("conv_gemm_tma_kernel");
    });
  }
#endif
};

}  // namespace pg
