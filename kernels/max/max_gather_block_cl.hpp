// max.gather.block.cl: k3s2 windows (pad 0-2, one pad parity on every non-trivial axis, no
// dilation), channels-last with C a whole number of 16-byte packs, int64 plane or global_row
// indices, int32 offsets, f16/bf16/f32. A work item is a strip of positions (per D slice), 2
// rows by L pairs along W, for V channels (kClChannels). k3s2 windows cover 2 consecutive
// positions along an axis with as few windows as cover 1, and a pair's covering windows form 2
// columns whose right one is the next pair's left one, so a 2D strip loads one new column (2
// windows) per 4 positions, where one position at a time (max.gather.fixed.cl) reads 9 windows
// per position. 3D strips are one pair: a 2x2 block. Strips start in phase with the stride and
// the pad parity P is the same on every axis, so which window of the box covers which position
// is a compile-time fact (WindowPhase): only real (window, position) pairs are compared. In 3D, D
// may instead be a copy axis (kernel 1, stride 1, no padding: X3D's 1x3x3 windows): a position's
// windows are then those of its own slice, and strips are 2D strips of that slice.
// dy, indices and dx must be 16-byte aligned (the harness always allocates them so); launch
// throws otherwise.
#pragma once

#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_fixed_window.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"

namespace pg {

// Channels-last strip shape and dy policy: pairs of positions per 2D strip along W (1 is a 2x2
// block of positions; 3D strips are always 1 pair, as their columns hold 2 D windows each: 4
// pairs took 208 registers, 1 takes 64), and whether dy is loaded only for windows whose stored
// index names a strip position (f32 items) or for every window (16-bit items). Timed on an H100
// (2026-11-22, maxpool2d (64,64,112,112) k3s2p1 CL f32): 1 pair 0.1267 ms, 2 pairs 0.1247 (0.1245
// loading every dy), 4 pairs 0.1363 (0.1268 loading every dy); all rows without channels-last are
// unaffected. For 16-bit items the match compares, per window and channel, cost more than the
// 8-byte load they save (H200, 2026-12-02, bench/results/2026-12-02_h200_max_loads.md, matched dy
// / every dy: resnet50 stem CL bf16 48.9 / 42.5 us, X3D stem CL bf16 70.1 / 66.1, (16,128,80,80)
// CL f16 25.1 / 22.0).
inline constexpr int kClStripPairs = 2;
template <class T>
inline constexpr bool kClDyOnMatch = sizeof(T) == 4;
// Channels per work item: a 16-byte pack of f32, an 8-byte one of f16/bf16. The item holds an
// int64 index per channel of every window it loads, so a 16-byte pack of 8 bf16 channels cost it
// twice the index registers (H100, 2026-11-26, resnet50 stem (32,64,112,112) k3s2p1 CL bf16: 8
// channels 0.0819 ms, 4 channels 0.0689; the f32 row unchanged at 0.0674).
inline constexpr int kClChannels = 4;
// Launch bounds (minimum blocks of 256 threads per multiprocessor): without any, nvcc gave the
// 16-bit items 85 registers, two blocks per multiprocessor (25% occupancy, no eligible warp half
// the cycles: ncu, X3D stem). H100, 2026-11-27 (bench/results/2026-11-27_h100_launch_bounds.md),
// none / thread bound only / 3 / 4 blocks: resnet50 stem CL bf16 0.0688 / 0.0687 / 0.0586 /
// 0.0553 ms, X3D stem CL bf16 0.0864 / 0.0958 / 0.0774 / 0.0788, (16,128,80,80) CL f16 0.0297 /
// 0.0291 / 0.0314 / 0.0283; resnet50 stem CL f32 0.0673 / 0.0645 / 0.0646 / 0.0743.
// nvcc 13 gives the 16-bit 2D strips (L = 2) 79-80 registers: capped to 64 for 4 blocks they
// spill 52 bytes, so they take 3 blocks (80 registers, no spill); the 3D one-pair items keep 4
// (64 registers, 0-8 bytes spilled, 80 at 3 blocks). H100, 2026-12-06 (call E of
// bench/results/2026-12-06_h100_cl_bounds.md), 4 / 3 blocks for L = 2: X3D stem CL bf16 76.9 /
// 65.9 us, resnet50 stem CL bf16 49.6 / 45.2, (16,96,75,75) k3s2p0 CL bf16 19.9 / 16.5; the 3D
// k3s2p1 CL bf16 (4,64,16,56,56), L = 1, 27.9 at 4 blocks and 29.2 at 3.
template <class T, int L>
inline constexpr int kClLaunchBounds = sizeof(T) != 2 ? 0 : L > 1 ? 3 : 4;

// Channels-last: V channels of a strip of one D slice, B rows by L pairs of B positions along
// W, one pack of dx stored per position. kCopyD: D (A0 == 0) is a copy axis.
template <class T, int A0, int K, int S, int V, int P, int L, bool kDyOnMatch, bool kCopyD = false>
struct MaxGatherBlockClItem {
  static constexpr int B = 2;                  // rows per strip, positions per pair
  using AlongH = WindowPhase<K, S, B, P>;      // the strip's window rows
  using AlongW = WindowPhase<K, S, B * L, P>;  // the strip's window columns
  static constexpr int CH = AlongH::count, CW = AlongW::count;
  static constexpr int CD = A0 == 0 && !kCopyD ? covering_count<K, S>(1) : 1;  // windows covering a position along D

  // True when window column g covers a position of pair q.
  static constexpr bool serves(int g, int q) {
    for (int k = 0; k < B; ++k)
      if (AlongW::tap(q * B + k, g)) return true;
    return false;
  }
  // Column g is loaded one pair before the first pair it serves, so its loads are in flight
  // while that pair's predecessor is summed and stored (the compiler keeps dy loads after
  // earlier dx stores, which may alias them).
  static constexpr int load_pair(int g) {
    int first = 0;
    while (first + 1 < L && !serves(g, first)) ++first;
    return first > 0 ? first - 1 : 0;
  }

  const T* dy;
  const int64_t* indices;
  T* dx;
  Divider<int32_t> groups_div;  // channel groups of V per position
  Divider<int32_t> strips_div;  // strips per row pair: ceil(W / (B * L))
  Divider<int32_t> rows_div;    // row pairs per slice: ceil(H / B)
  Divider<int32_t> depth_div;   // D
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t c, in_plane, out_plane;
  bool global_row;

  PG_HD void operator()(int32_t e) const {
    const int32_t strip = groups_div.div(e);
    const int32_t c0 = (e - strip * static_cast<int32_t>(groups_div.divisor)) * V;
    const int32_t r = strips_div.div(strip);
    const int32_t w0 = (strip - r * static_cast<int32_t>(strips_div.divisor)) * (B * L);
    const int32_t rest = rows_div.div(r);
    const int32_t h0 = (r - rest * static_cast<int32_t>(rows_div.divisor)) * B;
    int32_t n = rest, d = 0;
    if (A0 == 0) {
      n = depth_div.div(rest);
      d = rest - n * in[0];
    }
    const int32_t lo0 = A0 == 0 ? (kCopyD ? d : first_window<K, S>(d + pb[0])) : 0;
    const int32_t hi0 = A0 == 0 ? (kCopyD ? d : last_window<K, S>(d + pb[0], out[0])) : 0;
    const int32_t base_h = AlongH::first(h0 + pb[1]), base_w = AlongW::first(w0 + pb[2]);
    // Strip position (rr, x) lies at lin0 + rr * W + x; a window picked it for channel j exactly
    // when its stored index is mine[j] plus that offset and the position is one of its taps.
    // Below mine[j], the stored index's low word minus mine[j] wraps past 2^31, above every
    // offset. Positions past the plane's end (odd H, short last strip) may match too, but are
    // never stored.
    const int32_t lin0 = (d * in[1] + h0) * in[2] + w0;
    uint32_t mine[V];
#pragma unroll
    for (int j = 0; j < V; ++j)
      mine[j] = static_cast<uint32_t>((global_row ? (n * c + c0 + j) * in_plane : 0) + lin0);
    const int32_t out_base = n * out_plane * c + c0;
    // Every window loads from a clamped, always valid address; one outside the output drops its
    // matches through kNoPosition.
    int32_t box_row[CD][CH];
    bool row_ok[CD][CH];
#pragma unroll
    for (int i0 = 0; i0 < CD; ++i0)
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1) {
        const int32_t od = lo0 + i0, oh = base_h + i1;
        row_ok[i0][i1] = od <= hi0 && static_cast<uint32_t>(oh) < static_cast<uint32_t>(out[1]);
        box_row[i0][i1] = ((od < out[0] ? od : out[0] - 1) * out[1] + (oh < 0 ? 0 : oh < out[1] ? oh : out[1] - 1)) * out[2];
      }
    // Column g's windows: their stored indices relative to mine[j] and their dy.
    uint32_t rel[CW][CD][CH][V];
    Pack<T, V> grad[CW][CD][CH];
#pragma unroll
    for (int q = 0; q < L; ++q) {
#pragma unroll
      for (int g = 0; g < CW; ++g) {
        if (load_pair(g) != q) continue;
        const int32_t ow = base_w + g;
        const bool col_ok = static_cast<uint32_t>(ow) < static_cast<uint32_t>(out[2]);
        const int32_t col = ow < 0 ? 0 : ow < out[2] ? ow : out[2] - 1;
#pragma unroll
        for (int i0 = 0; i0 < CD; ++i0)
#pragma unroll
          for (int i1 = 0; i1 < CH; ++i1) {
            const int32_t at = out_base + (box_row[i0][i1] + col) * c;
            const Pack<int64_t, V> stored = load_pack<V>(indices, at);
            const bool ok = row_ok[i0][i1] && col_ok;
#pragma unroll
            for (int j = 0; j < V; ++j)
              rel[g][i0][i1][j] = ok && static_cast<uint64_t>(stored.v[j]) >> 32 == 0
                                      ? static_cast<uint32_t>(stored.v[j]) - mine[j]
                                      : kNoPosition;
            bool any = !kDyOnMatch;
#pragma unroll
            for (int rr = 0; rr < B; ++rr)
#pragma unroll
              for (int x = 0; x < B * L; ++x)
#pragma unroll
                for (int j = 0; j < V; ++j)
                  any = any || (AlongH::tap(rr, i1) && AlongW::tap(x, g) &&
                                rel[g][i0][i1][j] == static_cast<uint32_t>(rr * in[2] + x));
            grad[g][i0][i1] = any ? load_pack<V>(dy, at) : Pack<T, V>{};
          }
      }
      // Pair q: its windows in order (D, H, W), then its dx.
      accum_t<T> acc[B][B][V] = {};
#pragma unroll
      for (int i0 = 0; i0 < CD; ++i0)
#pragma unroll
        for (int i1 = 0; i1 < CH; ++i1)
#pragma unroll
          for (int g = 0; g < CW; ++g)
#pragma unroll
            for (int rr = 0; rr < B; ++rr)
#pragma unroll
              for (int k = 0; k < B; ++k)
#pragma unroll
                for (int j = 0; j < V; ++j)
                  if (AlongH::tap(rr, i1) && AlongW::tap(q * B + k, g) &&
                      rel[g][i0][i1][j] == static_cast<uint32_t>(rr * in[2] + q * B + k))
                    acc[rr][k][j] += to_float(grad[g][i0][i1].v[j]);
#pragma unroll
      for (int rr = 0; rr < B; ++rr)
#pragma unroll
        for (int k = 0; k < B; ++k) {
          if (h0 + rr >= in[1] || w0 + q * B + k >= in[2]) continue;
          Pack<T, V> v;
#pragma unroll
          for (int j = 0; j < V; ++j) v.v[j] = from_accum<T>(acc[rr][k][j]);
          store_pack<V>(dx, (n * in_plane + lin0 + rr * in[2] + q * B + k) * c + c0, v);
        }
    }
  }
};

struct MaxGatherBlockCl : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "max.gather.block.cl", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // 2D strips are 2 rows by 2 * kClStripPairs positions: W well past 2 strips and odd at times,
  // H odd and even, D several slices; C of several packs.
  static Domain domain() {
    Domain d = fixed_item_domain({WindowShape{3, 2, 0, 2}}, Layout::channels_last);
    d.min_dims = 2;
    d.same_pad_parity = true;
    d.trivial_leading = 1;
    d.copy_leading = true;
    d.reach[0] = 5;
    d.reach[1] = 7;
    d.reach[2] = 4 * kClStripPairs + 5;
    d.max_channels = 24;
    return d;
  }

  static Support supports(const Problem& p) { return int32_offsets_only(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    constexpr int K = 3, S = 2;
    require_supported<MaxGatherBlockCl>(p);
    require_aligned16(traits.name, {{"dy", b.dy}, {"indices", b.indices}, {"dx", b.dx}});
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (sizeof(T) <= 4) {
        with_bit(leading_axis_trivial(p), [&]<int A0>() {
          with_bit(p.pad_begin[2] % S == 1, [&]<int P>() {
            with_bit(A0 == 0 && axis_copy(p, 0), [&]<int kCopyD>() {
              constexpr int V = kClChannels;
              // 2D strips where a position has one D window: a 2D problem, or D a copy axis.
              constexpr int L = A0 == 1 || kCopyD ? kClStripPairs : 1;
              using Item = MaxGatherBlockClItem<T, A0, K, S, V, P, L, kClDyOnMatch<T>, kCopyD == 1>;
              Item item;
              set_fixed_item_frame<T>(item, p, b);
              constexpr int B = Item::B, strip_len = B * L;
              const int64_t groups = p.c / V, strips = (p.in[2] + strip_len - 1) / strip_len,
                            rows = (p.in[1] + B - 1) / B;
              item.groups_div = Divider<int32_t>(groups);
              item.strips_div = Divider<int32_t>(strips);
              item.rows_div = Divider<int32_t>(rows);
              item.depth_div = Divider<int32_t>(p.in[0]);
              item.c = static_cast<int32_t>(p.c);
              ex.template for_each<int32_t, kClLaunchBounds<T, L>>(p.n * p.in[0] * rows * strips * groups, item);
            });
          });
        });
      }
    });
  }
};

}  // namespace pg
