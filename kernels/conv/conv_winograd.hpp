// conv.winograd: backward-data of 3 x 3 windows with stride 1 and dilation 1 by Winograd's
// F(4x4, 3x3) (3-tap 1D windows by F(4, 3) alone; f32, both layouts, any padding and groups): the
// class of algorithm cuDNN runs on the fp32 2D k3s1 row at a rate past the FMA ceiling of any
// direct method. Measured there: 0.605 ms against cuDNN's 0.669 and conv.gemm's 1.460 (H100,
// bench/results/2026-11-25_h100_conv_winograd.md). The comments below speak of 2D; 1D has one
// row of points per tile (WinogradRows).
//
// With stride 1 and dilation 1 backward-data is a correlation of dy with the weights flipped:
// dx[i] = sum over t' of w[2 - t'] * dy[i + pad_begin - 2 + t'] per axis. F(4, 3) gets 4 outputs
// of it from 6 inputs with 6 multiplies instead of 12, so a 4 x 4 tile of dx takes 36 products per
// (k, c) where the direct sum takes 144: the GEMM below does a quarter of conv.gemm's work. Four
// passes, each a kernel of its own, through the workspace:
//   1. weights  U[group][xi][k][c]    = G f G^T             (36 points xi of a 6 x 6 tile)
//   2. dy       V[group][xi][k][tile] = B^T d B             d: the 6 x 6 dy patch of a dx tile
//                                                           (channels-last: V[group][xi][tile][k])
//   3. GEMM     M[group][xi] = V[group][xi]^T U[group][xi]  per point: (tiles x K) by (K x C)
//   4. dx       tile = A^T M A                              the tile's 4 x 4 dx values
// Unfused, the extra traffic is V and M (36/16 of dy and of dx): on the fp32 2D row (N32 C128 K256
// 56 x 56) 231 and 116 MB against a GEMM of 14.8 GFLOP. dx is tiled from position 0 along H and W;
// a tile past the end computes values no one stores. Samples go through in passes, as many per
// pass as keep the workspace under kWinogradWorkspaceCap.
//
// The GEMM (WinogradGemmThread) is conv.gemm's block program (conv_gemm_schedule): 256 threads,
// 8 x 8 results each, 8-step stages double buffered in shared memory, one barrier per stage. Its
// operands are dense and padded to whole tiles by passes 1 and 2, so every load is a 16-byte
// vector with no bounds check; M is written [c][tile] for channels-first dx and [tile][c] for
// channels-last, so pass 4 reads it coalesced in the order it writes dx. The CPU backend runs
// the same four passes, the GEMM by every block's 256 threads in turn
// (kernels/conv/conv_gemm_host_block.hpp), so tiles, tails and barriers are fuzzed in CI.
//
// Its error is not the direct sum's: the transforms add and cancel cross terms and round
// constants such as 1/6. The harness holds it to reference/conv_winograd_bound.hpp's bound,
// chosen by traits.error_model.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/require.hpp"
#include "kernels/conv/conv_gemm.hpp"
#include "kernels/conv/conv_gemm_host_block.hpp"

namespace pg {

inline constexpr int kWinogradM = 4, kWinogradR = 3, kWinogradAlpha = kWinogradM + kWinogradR - 1;
inline constexpr int kWinogradPoints = kWinogradAlpha * kWinogradAlpha;
inline constexpr int kWinogradBK = 8;  // reduction steps per shared-memory stage, as conv.gemm
// The most workspace one pass may take; samples beyond it go through in further passes. The fp32
// 2D row's 32 samples take 351 MB, one pass. The CPU backend takes passes of at most 256 KiB, so
// the fuzz's problems (up to about 1 MB a sample) often run in several and the pass loop is
// tested; workspace_bytes() sizes for the GPU's, the larger.
inline constexpr int64_t kWinogradWorkspaceCap = int64_t{512} << 20, kWinogradHostWorkspaceCap = int64_t{256} << 10;

// One axis of each transform, F(4, 3) with the points 0, +-1, +-2 and infinity (Lavin and Gray).
// `in` and `out` are 6 (or 3, or 4) values `si` and `so` floats apart; the sums group so that
// each output takes at most 4 roundings (reference/conv_winograd_bound.hpp counts them).
PG_HD void winograd_bt(const float* d, int si, float* v, int so) {
  v[0 * so] = 4.f * d[0 * si] - 5.f * d[2 * si] + d[4 * si];
  v[1 * so] = (d[3 * si] + d[4 * si]) - 4.f * (d[1 * si] + d[2 * si]);
  v[2 * so] = (d[4 * si] - d[3 * si]) + 4.f * (d[1 * si] - d[2 * si]);
  v[3 * so] = (d[4 * si] - d[2 * si]) + 2.f * (d[3 * si] - d[1 * si]);
  v[4 * so] = (d[4 * si] - d[2 * si]) - 2.f * (d[3 * si] - d[1 * si]);
  v[5 * so] = 4.f * d[1 * si] - 5.f * d[3 * si] + d[5 * si];
}

PG_HD void winograd_g(const float* f, int si, float* u, int so) {
  const float f0 = f[0], f1 = f[si], f2 = f[2 * si];
  u[0 * so] = 0.25f * f0;
  u[1 * so] = -(1.f / 6) * (f0 + f1 + f2);
  u[2 * so] = -(1.f / 6) * (f0 - f1 + f2);
  u[3 * so] = (1.f / 24) * f0 + (1.f / 12) * f1 + (1.f / 6) * f2;
  u[4 * so] = (1.f / 24) * f0 - (1.f / 12) * f1 + (1.f / 6) * f2;
  u[5 * so] = f2;
}

PG_HD void winograd_at(const float* m, int si, float* y, int so) {
  const float plus1 = m[1 * si] + m[2 * si], minus1 = m[1 * si] - m[2 * si];
  const float plus2 = m[3 * si] + m[4 * si], minus2 = m[3 * si] - m[4 * si];
  y[0 * so] = m[0] + plus1 + plus2;
  y[1 * so] = minus1 + 2.f * minus2;
  y[2 * so] = plus1 + 4.f * plus2;
  y[3 * so] = minus1 + 8.f * minus2 + m[5 * si];
}

// Points per tile: 36 in 2D, 6 in 1D.
inline int winograd_points(const ConvProblem& p) { return p.dims == 2 ? kWinogradPoints : kWinogradAlpha; }

// The launch's sizes. GEMM rows are the pass's tiles, padded to whole row tiles; K/groups and
// C/groups are padded to whole stages and column tiles with zeros.
struct WinogradPlan {
  int bm, bn;
  int points;                           // per tile: 36 (2D) or 6 (1D)
  int64_t tiles_h, tiles_w, tiles_img;  // 4 x 4 (1D: 4) tiles of one sample's dx plane
  int64_t pass_n;                       // samples per pass
  int64_t kg_pad, cg_pad;
  int64_t u_elems;                      // groups x points x kg_pad x cg_pad
  int64_t v_per_row, m_per_row;         // V and M elements per GEMM row: groups x points x kg_pad (cg_pad)

  int64_t tiles_pad(int64_t samples) const { return round_up_to(samples * tiles_img, bm); }
  int64_t workspace_elems() const { return u_elems + (v_per_row + m_per_row) * tiles_pad(pass_n); }
};

inline WinogradPlan plan_conv_winograd(const ConvProblem& p, int64_t cap = kWinogradWorkspaceCap) {
  WinogradPlan plan;
  plan.bn = gemm_tile_n(p);
  plan.bm = plan.bn == 64 ? 256 : 128;
  plan.points = winograd_points(p);
  const int64_t tile_h = p.dims == 2 ? kWinogradM : 1;
  plan.tiles_h = (p.in[1] + tile_h - 1) / tile_h;
  plan.tiles_w = (p.in[2] + kWinogradM - 1) / kWinogradM;
  plan.tiles_img = plan.tiles_h * plan.tiles_w;
  plan.kg_pad = round_up_to(p.k_per_group(), kWinogradBK);
  plan.cg_pad = round_up_to(p.c_per_group(), plan.bn);
  plan.u_elems = p.groups * plan.points * plan.kg_pad * plan.cg_pad;
  plan.v_per_row = p.groups * plan.points * plan.kg_pad;
  plan.m_per_row = p.groups * plan.points * plan.cg_pad;
  const int64_t per_sample = (plan.v_per_row + plan.m_per_row) * plan.tiles_img * 4;
  plan.pass_n = std::clamp<int64_t>(cap / std::max<int64_t>(per_sample, 1), 1, std::max<int64_t>(p.n, 1));
  return plan;
}

// A tile's extent along H: F(4, 3) in 2D; in 1D, H has length 1 and kernel 1, and a tile is one row.
template <int Dims>
struct WinogradRows {
  static_assert(Dims == 1 || Dims == 2, "conv.winograd is 1D and 2D");
  static constexpr int m = Dims == 2 ? kWinogradM : 1, r = Dims == 2 ? kWinogradR : 1;
  static constexpr int alpha = m + r - 1, points = alpha * kWinogradAlpha;
};

// Pass 1, one (group, k, c) each: the flipped 3 x 3 (1D: 3) weights to their points, zeros in the padding.
template <int Dims>
struct WinogradWeightsBody {
  using H = WinogradRows<Dims>;
  ConvShape<int32_t> g;
  int32_t kg_pad, cg_pad;
  const float* w;
  float* u;

  PG_HD void operator()(int32_t i) const {
    const int32_t c = i % cg_pad, k = i / cg_pad % kg_pad, group = i / cg_pad / kg_pad;
    float f[H::r][kWinogradR] = {}, t[H::alpha][kWinogradR], out[H::alpha][kWinogradAlpha];
    if (k < g.kg && c < g.cg)
#pragma unroll
      for (int j0 = 0; j0 < H::r; ++j0)
#pragma unroll
        for (int j1 = 0; j1 < kWinogradR; ++j1)
          f[j0][j1] = w[g.w_offset(group * g.kg + k, c, g.tap_index(0, H::r - 1 - j0, kWinogradR - 1 - j1))];
#pragma unroll
    for (int j1 = 0; j1 < kWinogradR; ++j1) {
      if (Dims == 2) winograd_g(&f[0][j1], kWinogradR, &t[0][j1], kWinogradR);
      else t[0][j1] = f[0][j1];
    }
#pragma unroll
    for (int x0 = 0; x0 < H::alpha; ++x0) winograd_g(&t[x0][0], 1, &out[x0][0], 1);
    const int32_t point_step = kg_pad * cg_pad;
    float* dst = u + (group * H::points * kg_pad + k) * cg_pad + c;
#pragma unroll
    for (int xi = 0; xi < H::points; ++xi) dst[xi * point_step] = out[xi / kWinogradAlpha][xi % kWinogradAlpha];
  }
};

// Item i of a pass that walks (group, channel, tile): channels fastest for channels-last tensors,
// tiles fastest for channels-first, the order in which the tensor and the workspace are contiguous.
struct WinogradItem {
  int32_t tile, channel, group;
};

template <bool CL>
PG_HD WinogradItem winograd_item(int32_t i, const Divider<int32_t>& by_tiles, const Divider<int32_t>& by_channels) {
  const Divider<int32_t>& inner = CL ? by_channels : by_tiles;
  const Divider<int32_t>& outer = CL ? by_tiles : by_channels;
  const int32_t first = inner.mod(i), second = outer.mod(inner.div(i)), group = outer.div(inner.div(i));
  return CL ? WinogradItem{second, first, group} : WinogradItem{first, second, group};
}

// Pass 2, one (group, k, tile) each: the tile's 6 x 6 (1D: 6) dy patch to its points. Tiles past
// the pass's end and k's past K/groups get zeros (the GEMM multiplies them). Channels-first walks
// tiles fastest and writes V as [k][tile]; channels-last walks k fastest and writes [tile][k]: each
// the order in which both dy and V are contiguous. Tiles fastest on channels-last dy, every read
// of a warp its own 32-byte sector, ran the fp32 NHWC row at 0.895 ms against 0.605 channels-first.
template <int Dims, bool CL>
struct WinogradInputBody {
  using H = WinogradRows<Dims>;
  ConvShape<int32_t> g;
  int32_t n0, tiles, tiles_pad, kg_pad;  // the pass's first sample, its tiles, and V's row count
  Divider<int32_t> by_tiles_pad, by_kg_pad, by_tiles_img, by_tiles_w;
  const float* dy;
  float* v;

  PG_HD void operator()(int32_t i) const {
    const auto [tile, k, group] = winograd_item<CL>(i, by_tiles_pad, by_kg_pad);
    float d[H::alpha][kWinogradAlpha] = {}, t[H::alpha][kWinogradAlpha], out[H::alpha][kWinogradAlpha];
    if (tile < tiles && k < g.kg) {
      const int32_t in_img = by_tiles_img.mod(tile), img = by_tiles_img.div(tile);
      const int32_t oh0 = by_tiles_w.div(in_img) * H::m + g.pad[1] - (H::r - 1);
      const int32_t ow0 = by_tiles_w.mod(in_img) * kWinogradM + g.pad[2] - (kWinogradR - 1);
      const float* plane = dy + g.y_offset(n0 + img, group * g.kg + k, 0, 0, 0);
      const int32_t col_step = CL ? g.k : 1, row_step = g.out[2] * col_step;
#pragma unroll
      for (int r = 0; r < H::alpha; ++r)
#pragma unroll
        for (int s = 0; s < kWinogradAlpha; ++s) {
          const int32_t oh = oh0 + r, ow = ow0 + s;
          if (oh >= 0 && oh < g.out[1] && ow >= 0 && ow < g.out[2]) d[r][s] = plane[oh * row_step + ow * col_step];
        }
    }
#pragma unroll
    for (int s = 0; s < kWinogradAlpha; ++s) {
      if (Dims == 2) winograd_bt(&d[0][s], kWinogradAlpha, &t[0][s], kWinogradAlpha);
      else t[0][s] = d[0][s];
    }
#pragma unroll
    for (int x0 = 0; x0 < H::alpha; ++x0) winograd_bt(&t[x0][0], 1, &out[x0][0], 1);
    const int32_t point_step = kg_pad * tiles_pad;
    float* dst = v + group * H::points * point_step + (CL ? tile * kg_pad + k : k * tiles_pad + tile);
#pragma unroll
    for (int xi = 0; xi < H::points; ++xi) dst[xi * point_step] = out[xi / kWinogradAlpha][xi % kWinogradAlpha];
  }
};

// Pass 4, one (group, c, tile) each: the tile's points of M to its 4 x 4 (1D: 4) dx values, those
// inside dx stored. Channels-first walks tiles fastest, channels-last c fastest: each the order
// in which both M (as the GEMM wrote it) and dx are contiguous.
template <int Dims, bool CL>
struct WinogradOutputBody {
  using H = WinogradRows<Dims>;
  ConvShape<int32_t> g;
  int32_t n0, tiles_pad, cg_pad;
  Divider<int32_t> by_tiles, by_cg, by_tiles_img, by_tiles_w;  // by_tiles: the pass's tiles
  const float* m;
  float* dx;

  PG_HD void operator()(int32_t i) const {
    const auto [tile, c, group] = winograd_item<CL>(i, by_tiles, by_cg);
    const int32_t point_step = cg_pad * tiles_pad;
    const float* src = m + group * H::points * point_step + (CL ? tile * cg_pad + c : c * tiles_pad + tile);
    float in[H::alpha][kWinogradAlpha], t[H::m][kWinogradAlpha], out[H::m][kWinogradM];
#pragma unroll
    for (int xi = 0; xi < H::points; ++xi) in[xi / kWinogradAlpha][xi % kWinogradAlpha] = src[xi * point_step];
#pragma unroll
    for (int s = 0; s < kWinogradAlpha; ++s) {
      if (Dims == 2) winograd_at(&in[0][s], kWinogradAlpha, &t[0][s], kWinogradAlpha);
      else t[0][s] = in[0][s];
    }
#pragma unroll
    for (int y0 = 0; y0 < H::m; ++y0) winograd_at(&t[y0][0], 1, &out[y0][0], 1);
    const int32_t in_img = by_tiles_img.mod(tile), img = by_tiles_img.div(tile);
    const int32_t h0 = by_tiles_w.div(in_img) * H::m, w0 = by_tiles_w.mod(in_img) * kWinogradM;
#pragma unroll
    for (int r = 0; r < H::m; ++r)
#pragma unroll
      for (int s = 0; s < kWinogradM; ++s)
        if (h0 + r < g.in[1] && w0 + s < g.in[2]) dx[g.x_offset(n0 + img, group * g.cg + c, 0, h0 + r, w0 + s)] = out[r][s];
  }
};

// Pass 3: per (group, point) = blockIdx.z, M = V^T U over a BM x BN tile of (tiles, c).
struct WinogradGemmArgs {
  int32_t kg_pad, cg_pad, tiles_pad;
  const float* v;  // [group][point][kg_pad][tiles_pad], channels-last [group][point][tiles_pad][kg_pad]
  const float* u;  // [group][point][kg_pad][cg_pad]
  float* m;        // [group][point][cg_pad][tiles_pad], channels-last [group][point][tiles_pad][cg_pad]
};

// A's rows are 4 floats longer than the tile: channels-last stores a row of 4 k's down a column,
// and the two threads that store one tile row's 8 k's then fall on different banks.
inline constexpr int kWinogradPadA = 4;

template <int BM, int BN>
struct WinogradGemmSmem {
  alignas(16) float a[2][kWinogradBK][BM + kWinogradPadA];
  alignas(16) float b[2][kWinogradBK][BN];
};

// One thread's steps for conv_gemm_schedule (kernels/conv/conv_gemm.hpp).
template <int BM, int BN, bool CL>
struct WinogradGemmThread {
  using Args = WinogradGemmArgs;
  using Smem = WinogradGemmSmem<BM, BN>;
  static constexpr int TX = BM / 8, TY = BN / 8;
  static_assert(TX * TY == kGemmThreads, "a block is 256 threads of 8 x 8");
  static constexpr int kAPacks = BM * kWinogradBK / kGemmThreads / 4;  // 16-byte loads of A per stage
  static constexpr int kBWidth = BN * kWinogradBK / kGemmThreads;      // floats of B per stage: 4 or 2

  int tid, iterations_left;
  int32_t batch, m_base, c_base, kg_pad, cg_pad, tiles_pad;
  const float* a_src;  // V at (the stage's first k, the block's first tile)
  const float* b_src;  // U at (the stage's first k, the tile's first c)
  float* m;
  Pack<float, 4> a_next[kAPacks];
  Pack<float, kBWidth> b_next;
  float acc[8][8];

  // Where A's 16-byte load l of a stage lies: channels-first 4 tiles of one k, channels-last 4 k's
  // of one tile (the stage's 8 k's of a tile are two loads, by neighbouring threads).
  PG_HD int a_k(int l) const { return CL ? (tid + l * kGemmThreads) % 2 * 4 : (tid + l * kGemmThreads) * 4 / BM; }
  PG_HD int a_m(int l) const { return CL ? (tid + l * kGemmThreads) / 2 : (tid + l * kGemmThreads) * 4 % BM; }
  PG_HD int b_k() const { return tid * kBWidth / BN; }
  PG_HD int b_c() const { return tid * kBWidth % BN; }
  PG_HD int tx() const { return tid % TX; }
  PG_HD int ty() const { return tid / TX; }
  PG_HD int m_of(int i) const { return (i < 4 ? 0 : BM / 2) + tx() * 4 + i % 4; }
  PG_HD int c_of(int j) const { return (j < 4 ? 0 : BN / 2) + ty() * 4 + j % 4; }

  PG_HD bool begin(const Args& args, Smem&, int thread, int bx, int by, int bz) {
    tid = thread;
    batch = bz;
    kg_pad = args.kg_pad;
    cg_pad = args.cg_pad;
    tiles_pad = args.tiles_pad;
    m_base = bx * BM;
    c_base = by * BN;
    a_src = args.v + batch * kg_pad * tiles_pad + (CL ? m_base * kg_pad : m_base);
    b_src = args.u + batch * kg_pad * cg_pad + c_base;
    m = args.m;
    iterations_left = kg_pad / kWinogradBK;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] = 0;
    return true;
  }

  PG_HD int iterations() const { return iterations_left; }

  PG_HD void fetch() {
#pragma unroll
    for (int l = 0; l < kAPacks; ++l)
      a_next[l] = load_pack<4>(a_src, CL ? a_m(l) * kg_pad + a_k(l) : a_k(l) * tiles_pad + a_m(l));
    b_next = load_pack<kBWidth>(b_src, b_k() * cg_pad + b_c());
  }

  PG_HD void stage(Smem& s, int buf) const {
#pragma unroll
    for (int l = 0; l < kAPacks; ++l) {
      if (CL) {
#pragma unroll
        for (int q = 0; q < 4; ++q) s.a[buf][a_k(l) + q][a_m(l)] = a_next[l].v[q];
      } else {
        store_pack<4>(&s.a[buf][a_k(l)][0], a_m(l), a_next[l]);
      }
    }
    store_pack<kBWidth>(&s.b[buf][b_k()][0], b_c(), b_next);
  }

  PG_HD void advance(const Smem&) {
    a_src += CL ? kWinogradBK : kWinogradBK * tiles_pad;
    b_src += kWinogradBK * cg_pad;
  }

  PG_HD void multiply(const Smem& s, int buf) {
#pragma unroll
    for (int kk = 0; kk < kWinogradBK; ++kk) {
      const Pack<float, 4> a0 = load_pack<4>(&s.a[buf][kk][0], m_of(0)), a1 = load_pack<4>(&s.a[buf][kk][0], m_of(4));
      const Pack<float, 4> b0 = load_pack<4>(&s.b[buf][kk][0], c_of(0)), b1 = load_pack<4>(&s.b[buf][kk][0], c_of(4));
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += (i < 4 ? a0.v[i] : a1.v[i - 4]) * (j < 4 ? b0.v[j] : b1.v[j - 4]);
    }
  }

  // The 8 x 8 results to M, 16 bytes at a time: M is padded to whole tiles, so no bounds check.
  PG_HD void finish(const Smem&) const {
    float* out = m + batch * cg_pad * tiles_pad;
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        Pack<float, 4> p;
#pragma unroll
        for (int q = 0; q < 4; ++q) p.v[q] = CL ? acc[e][4 * half + q] : acc[4 * half + q][e];
        if (CL) store_pack<4>(out, (m_base + m_of(e)) * cg_pad + c_base + c_of(4 * half), p);
        else store_pack<4>(out, (c_base + c_of(e)) * tiles_pad + m_base + m_of(4 * half), p);
      }
  }
};

#if PG_GPU_COMPILER
template <int BM, int BN, bool CL>
__global__ void PG_LAUNCH_BOUNDS(kGemmThreads, 2) conv_winograd_gemm_kernel(WinogradGemmArgs args) {
  using Thread = WinogradGemmThread<BM, BN, CL>;
  __shared__ typename Thread::Smem smem;
  Thread th;
  ConvGemmDeviceBlock<Thread> block{th, smem, args};
  conv_gemm_schedule(block);
}
#endif

struct ConvWinograd {
  static constexpr ConvTraits traits{
      .name = "conv.winograd", .deterministic = true, .error_model = ConvErrorModel::winograd_f4x4};
  // Sizes for the fuzz: past one 256-tile row block of the GEMM (3 samples of 40 x 44 take 363
  // tiles), C/groups now and then past the 64-wide column tile and past the 128-wide one (a
  // second column tile: c_base > 0), K/groups past one 8-step stage.
  static ConvDomain domain() {
    ConvDomain d;
    d.min_dims = 1;
    d.max_dims = 2;
    d.only_kernel = kWinogradR;
    d.dtypes = {DType::f32};
    d.reach[1] = 40;
    d.reach[2] = 44;
    d.max_c_per_group = 140;
    d.max_k_per_group = 20;
    return d;
  }

  static Support supports(const ConvProblem& p) {
    const WinogradPlan plan = plan_conv_winograd(p);
    const int64_t limit = int64_t{1} << 31;
    if (!conv_fits_int32(p) || plan.workspace_elems() >= limit) return Support::no("offsets beyond int32");
    if (p.groups * plan.points > 65535)
      return Support::no("grid too large: " + std::to_string(p.groups) + " groups x " + std::to_string(plan.points) +
                         " points (limit 65535)");
    return Support::yes();
  }

  static size_t workspace_bytes(const ConvProblem& p) {
    return static_cast<size_t>(plan_conv_winograd(p).workspace_elems()) * sizeof(float);
  }

  // The four passes on `ex`, the GEMM by gemm(plan, args, grid) with grid = {x, y, z} blocks.
  template <class Exec, class Gemm>
  static void run(const Exec& ex, const ConvProblem& p, const ConvBuffers& b, Gemm&& gemm) {
    if (p.x_elems() == 0) return;
    require_aligned16(traits.name, {{"the workspace", b.workspace}});
    const WinogradPlan plan = plan_conv_winograd(p, Exec::is_gpu ? kWinogradWorkspaceCap : kWinogradHostWorkspaceCap);
    const ConvShape<int32_t> g = make_conv_shape<int32_t>(p);
    const auto kg_pad = static_cast<int32_t>(plan.kg_pad), cg_pad = static_cast<int32_t>(plan.cg_pad);
    float* u = static_cast<float*>(b.workspace);
    const int64_t tiles_pad_max = plan.tiles_pad(plan.pass_n);
    float* v = u + plan.u_elems;
    float* m = v + plan.v_per_row * tiles_pad_max;
    const Divider<int32_t> by_tiles_img(plan.tiles_img), by_tiles_w(plan.tiles_w);
    with_winograd_shape(p, [&]<int Dims, bool CL>() {
      ex.template for_each<int32_t>(plan.u_elems / plan.points,
                                    WinogradWeightsBody<Dims>{g, kg_pad, cg_pad, static_cast<const float*>(b.w), u});
      for (int64_t n0 = 0; n0 < p.n; n0 += plan.pass_n) {
        const int64_t samples = std::min(plan.pass_n, p.n - n0), tiles = samples * plan.tiles_img;
        const auto tiles_pad = static_cast<int32_t>(plan.tiles_pad(samples));
        ex.template for_each<int32_t>(plan.v_per_row / plan.points * tiles_pad,
                                      WinogradInputBody<Dims, CL>{g, static_cast<int32_t>(n0), static_cast<int32_t>(tiles),
                                                                  tiles_pad, kg_pad, Divider<int32_t>(tiles_pad),
                                                                  Divider<int32_t>(kg_pad), by_tiles_img, by_tiles_w,
                                                                  static_cast<const float*>(b.dy), v});
        const int64_t grid[3] = {tiles_pad / plan.bm, plan.cg_pad / plan.bn, p.groups * plan.points};
        gemm(plan, WinogradGemmArgs{kg_pad, cg_pad, tiles_pad, v, u, m}, grid);
        ex.template for_each<int32_t>(p.groups * p.c_per_group() * tiles,
                                      WinogradOutputBody<Dims, CL>{g, static_cast<int32_t>(n0), tiles_pad, cg_pad,
                                                                   Divider<int32_t>(tiles), Divider<int32_t>(p.c_per_group()),
                                                                   by_tiles_img, by_tiles_w, m, static_cast<float*>(b.dx)});
      }
    });
  }

  // Calls f.template operator()<Dims, CL>() with the problem's dims (1 or 2) and layout.
  template <class F>
  static void with_winograd_shape(const ConvProblem& p, F&& f) {
    const bool cl = p.layout == Layout::channels_last;
    if (p.dims == 2) {
      if (cl) f.template operator()<2, true>();
      else f.template operator()<2, false>();
    } else {
      if (cl) f.template operator()<1, true>();
      else f.template operator()<1, false>();
    }
  }

#if !PG_GPU_COMPILER
  static void launch(const CpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    run(ex, p, b, [&](const WinogradPlan&, const WinogradGemmArgs& args, const int64_t* grid) {
      with_gemm_tile(p, [&]<int BM, int BN, bool CL>() {
        run_conv_gemm_grid_on_host<WinogradGemmThread<BM, BN, CL>>(ex, args, grid,
                                                                     [](auto& block) { conv_gemm_schedule(block); });
      });
    });
  }
#endif

#if PG_GPU_COMPILER
  static void launch(const GpuExec& ex, const ConvProblem& p, const ConvBuffers& b) {
    run(ex, p, b, [&](const WinogradPlan&, const WinogradGemmArgs& args, const int64_t* grid) {
      with_gemm_tile(p, [&]<int BM, int BN, bool CL>() {
        const dim3 blocks(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]));
        conv_winograd_gemm_kernel<BM, BN, CL><<<blocks, kGemmThreads, 0, ex.stream>>>(args);
        PG_LAUNCH_CHECK("conv_winograd_gemm_kernel");
      });
    });
  }
#endif
};

}  // namespace pg
