// max.gather.block: max.gather.stored with k3s2 work items that cover more input positions,
// which share their covering windows (k3s2: 2 windows cover 2 consecutive positions along an
// axis, the same count as cover 1), so each stored index is loaded fewer times and the window
// arithmetic is paid once for more outputs.
// - Channels-last: a strip of positions (per D slice), 2 rows by L pairs along W, for V
//   channels. A pair's covering windows form 2 columns and the right one is the next pair's
//   left one, so a 2D strip loads one new column (2 windows) per 4 positions, where one
//   position at a time reads 9 windows per position. 3D strips are one pair: a 2x2 block.
// - Channels-first 3D: the fixed path's item (a run of R along W on 2 rows) on 2 D slices: the
//   same 2 x 2 x CW window box serves twice the outputs (the fixed path was issue-bound on the
//   3D k3s2 row).
// Both items start their positions in phase with the stride along every axis, and the pad has
// the same parity P on every axis, so which window of the box covers which position is a
// compile-time fact (WindowPhase): only real (window, position) pairs are compared. Other
// problems, mixed pad parities included, run max.gather.stored's own paths unchanged, so this
// variant is never slower there.
#pragma once

#include <cstdint>

#include "kernels/common/numeric.hpp"
#include "src/problem.hpp"
#include "src/registry.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_gather_fixed.hpp"
#include "kernels/max/max_gather_stored.hpp"
#include "kernels/common/pack.hpp"

namespace pg {

// Channels-last strip shape and dy policy: pairs of positions per 2D strip along W (1 is a 2x2
// block of positions; 3D strips are always 1 pair, as their columns hold 2 D windows each: 4
// pairs took 208 registers, 1 takes 64), and whether dy is loaded only for windows whose stored
// index names a strip position. Timed on an H100 (2026-11-22, maxpool2d (64,64,112,112) k3s2p1
// CL f32): 1 pair 0.1267 ms, 2 pairs 0.1247 (0.1245 loading every dy), 4 pairs 0.1363 (0.1268
// loading every dy); all rows without channels-last are unaffected.
inline constexpr int kClStripPairs = 2;
inline constexpr bool kClDyOnMatch = true;

// A stored index with a nonzero high word names nothing (encodings are < 2^31, int32 offsets):
// its relative offset becomes kNoPosition, above every position offset an item compares.
inline constexpr uint32_t kNoPosition = 0xffffffffu;

// Channels-last: V channels of a strip of one D slice, B rows by L pairs of B positions along
// W, one 16-byte dx store per position.
template <class T, int A0, int K, int S, int V, int P, int L, bool kDyOnMatch>
struct MaxGatherBlockClItem {
  static constexpr int B = 2;                  // rows per strip, positions per pair
  using AlongH = WindowPhase<K, S, B, P>;      // the strip's window rows
  using AlongW = WindowPhase<K, S, B * L, P>;  // the strip's window columns
  static constexpr int CH = AlongH::count, CW = AlongW::count;
  static constexpr int CD = A0 == 0 ? covering_count<K, S>(1) : 1;  // windows covering a position along D
  using Fixed = MaxGatherFixedItem<T, A0, K, S, V, 0>;

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
    const int32_t lo0 = A0 == 0 ? Fixed::first_window(d + pb[0]) : 0;
    const int32_t hi0 = A0 == 0 ? Fixed::last_window(d + pb[0], out[0]) : 0;
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

// Channels-first 3D: MaxGatherFixedItem's run of R dx elements on RH rows, on RD D slices.
// k3s2 f32: 54 real (window, element) pairs of the 2 x 2 x 3 box's 192.
template <class T, int K, int S, int R, int P>
struct MaxGatherBlockCfItem {
  static constexpr int RD = 2, RH = 2;
  using AlongD = WindowPhase<K, S, RD, P>;
  using AlongH = WindowPhase<K, S, RH, P>;
  using AlongW = WindowPhase<K, S, R, P>;
  static constexpr int CD = AlongD::count, CH = AlongH::count, CW = AlongW::count;

  const T* dy;
  const int64_t* indices;
  T* dx;
  Divider<int32_t> runs_div;    // runs per row: ceil(W / R)
  Divider<int32_t> groups_div;  // row groups per D slice: ceil(H / RH)
  Divider<int32_t> slabs_div;   // slice groups per (n, c): ceil(D / RD)
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t in_plane, out_plane;
  bool global_row;    // stored indices count from the tensor's origin, not the plane's
  bool packed_store;  // W % R == 0 and dx 16-byte aligned

  PG_HD void operator()(int32_t e) const {
    const int32_t group = runs_div.div(e);
    const int32_t w0 = (e - group * static_cast<int32_t>(runs_div.divisor)) * R;
    const int32_t slab = groups_div.div(group);
    const int32_t h0 = (group - slab * static_cast<int32_t>(groups_div.divisor)) * RH;
    const int32_t nc = slabs_div.div(slab);
    const int32_t d0 = (slab - nc * static_cast<int32_t>(slabs_div.divisor)) * RD;
    const int32_t base_d = AlongD::first(d0 + pb[0]), base_h = AlongH::first(h0 + pb[1]),
                  base_w = AlongW::first(w0 + pb[2]);
    const int32_t lin0 = (d0 * in[1] + h0) * in[2] + w0;
    // As in the fixed item: positions past the tensor's end (odd D, H or W) may match too, but
    // are never stored.
    const uint32_t first = static_cast<uint32_t>((global_row ? nc * in_plane : 0) + lin0);
    const int32_t run_len = in[2] - w0 < R ? in[2] - w0 : R;
    const int32_t out_base = nc * out_plane;
    // Box loads as in the fixed item: clamped, branch-free; a window outside the output drops
    // its matches through kNoPosition.
    int32_t col[CW];
    bool col_ok[CW];
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      const int32_t ow = base_w + c;
      col_ok[c] = static_cast<uint32_t>(ow) < static_cast<uint32_t>(out[2]);
      col[c] = ow < 0 ? 0 : ow < out[2] ? ow : out[2] - 1;
    }
    accum_t<T> acc[RD][RH][R] = {};
#pragma unroll
    for (int i0 = 0; i0 < CD; ++i0) {
      const int32_t od = base_d + i0;
      const bool slice_ok = static_cast<uint32_t>(od) < static_cast<uint32_t>(out[0]);
      const int32_t od_at = od < 0 ? 0 : od < out[0] ? od : out[0] - 1;
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1) {
        const int32_t oh = base_h + i1;
        const bool row_ok = slice_ok && static_cast<uint32_t>(oh) < static_cast<uint32_t>(out[1]);
        const int32_t row_at = out_base + (od_at * out[1] + (oh < 0 ? 0 : oh < out[1] ? oh : out[1] - 1)) * out[2];
        uint32_t low[CW];
        accum_t<T> grad[CW];
#pragma unroll
        for (int c = 0; c < CW; ++c) {
          const int64_t stored = indices[row_at + col[c]];
          grad[c] = to_float(dy[row_at + col[c]]);
          low[c] = row_ok && col_ok[c] && static_cast<uint64_t>(stored) >> 32 == 0 ? static_cast<uint32_t>(stored)
                                                                                    : kNoPosition;
        }
#pragma unroll
        for (int rd = 0; rd < RD; ++rd)
#pragma unroll
          for (int rr = 0; rr < RH; ++rr)
#pragma unroll
            for (int k = 0; k < R; ++k)
#pragma unroll
              for (int c = 0; c < CW; ++c)
                if (AlongD::tap(rd, i0) && AlongH::tap(rr, i1) && AlongW::tap(k, c) &&
                    low[c] == first + (rd * in[1] + rr) * in[2] + k)
                  acc[rd][rr][k] += grad[c];
      }
    }
#pragma unroll
    for (int rd = 0; rd < RD; ++rd)
#pragma unroll
      for (int rr = 0; rr < RH; ++rr) {
        if (d0 + rd >= in[0] || h0 + rr >= in[1]) continue;
        const int32_t at = nc * in_plane + lin0 + (rd * in[1] + rr) * in[2];
        if (packed_store) {
          Pack<T, R> v;
#pragma unroll
          for (int k = 0; k < R; ++k) v.v[k] = from_accum<T>(acc[rd][rr][k]);
          store_pack<R>(dx, at, v);
        } else {
#pragma unroll
          for (int k = 0; k < R; ++k)
            if (k < run_len) dx[at + k] = from_accum<T>(acc[rd][rr][k]);
        }
      }
  }
};

// Launches a block item when p is a k3s2 problem of the fixed path's kind that the blocks
// serve (channels-last, or channels-first 3D) with one pad parity on every axis; false leaves
// p to max.gather.stored.
template <class Exec>
bool launch_max_gather_block(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
  constexpr int K = 3, S = 2;
  if (p.index_type != IndexType::i64 || !uses_int32(p, width) ||
      (p.index_format != IndexFormat::plane && p.index_format != IndexFormat::global_row))
    return false;
  const int a0 = leading_axis_trivial(p) ? 1 : 0;
  for (int a = a0; a < kAxes; ++a)
    if (p.dilation[a] != 1 || p.kernel[a] != K || p.stride[a] != S || p.pad_begin[a] % S != p.pad_begin[2] % S)
      return false;
  const bool cl = p.layout == Layout::channels_last;
  if (cl && (!aligned16(b.dy) || !aligned16(b.indices) || !aligned16(b.dx))) return false;
  if (!cl && a0 == 1) return false;
  bool ran = false;
  with_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) <= 4) {
      constexpr int V = vector_lanes<T>;
      if (cl && p.c % V != 0) return;
      const auto go_cl = [&]<int A0, int P>() {
        constexpr int L = A0 == 1 ? kClStripPairs : 1;
        using Item = MaxGatherBlockClItem<T, A0, K, S, V, P, L, kClDyOnMatch>;
        Item item;
        item.dy = static_cast<const T*>(b.dy);
        item.indices = static_cast<const int64_t*>(b.indices);
        item.dx = static_cast<T*>(b.dx);
        constexpr int B = Item::B, strip_len = B * L;
        const int64_t groups = p.c / V, strips = (p.in[2] + strip_len - 1) / strip_len, rows = (p.in[1] + B - 1) / B;
        item.groups_div = Divider<int32_t>(groups);
        item.strips_div = Divider<int32_t>(strips);
        item.rows_div = Divider<int32_t>(rows);
        item.depth_div = Divider<int32_t>(p.in[0]);
        for (int a = 0; a < kAxes; ++a) {
          item.in[a] = static_cast<int32_t>(p.in[a]);
          item.out[a] = static_cast<int32_t>(p.out[a]);
          item.pb[a] = static_cast<int32_t>(p.pad_begin[a]);
        }
        item.c = static_cast<int32_t>(p.c);
        item.in_plane = static_cast<int32_t>(p.in_plane());
        item.out_plane = static_cast<int32_t>(p.out_plane());
        item.global_row = p.index_format == IndexFormat::global_row;
        ex.template for_each<int32_t>(p.n * p.in[0] * rows * strips * groups, item);
        ran = true;
      };
      const auto go_cf = [&]<int P>() {
        using Item = MaxGatherBlockCfItem<T, K, S, V, P>;
        Item item;
        item.dy = static_cast<const T*>(b.dy);
        item.indices = static_cast<const int64_t*>(b.indices);
        item.dx = static_cast<T*>(b.dx);
        const int64_t per_row = (p.in[2] + V - 1) / V, groups = (p.in[1] + Item::RH - 1) / Item::RH,
                      slabs = (p.in[0] + Item::RD - 1) / Item::RD;
        item.runs_div = Divider<int32_t>(per_row);
        item.groups_div = Divider<int32_t>(groups);
        item.slabs_div = Divider<int32_t>(slabs);
        for (int a = 0; a < kAxes; ++a) {
          item.in[a] = static_cast<int32_t>(p.in[a]);
          item.out[a] = static_cast<int32_t>(p.out[a]);
          item.pb[a] = static_cast<int32_t>(p.pad_begin[a]);
        }
        item.in_plane = static_cast<int32_t>(p.in_plane());
        item.out_plane = static_cast<int32_t>(p.out_plane());
        item.global_row = p.index_format == IndexFormat::global_row;
        item.packed_store = p.in[2] % V == 0 && aligned16(b.dx);
        ex.template for_each<int32_t>(p.n * p.c * slabs * groups * per_row, item);
        ran = true;
      };
      const bool odd_pad = p.pad_begin[2] % S == 1;
      if (cl && a0 == 1 && odd_pad) go_cl.template operator()<1, 1>();
      else if (cl && a0 == 1) go_cl.template operator()<1, 0>();
      else if (cl && odd_pad) go_cl.template operator()<0, 1>();
      else if (cl) go_cl.template operator()<0, 0>();
      else if (odd_pad) go_cf.template operator()<1>();
      else go_cf.template operator()<0>();
    }
  });
  return ran;
}

struct MaxGatherBlock {
  static constexpr const char* name = "max.gather.block";
  static constexpr Op op = Op::max;
  static constexpr Inputs inputs = Inputs::dy_and_indices;
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;
  static Domain domain() { return {}; }

  static Support supports(const Problem&) { return Support::yes(); }
  static size_t workspace_bytes(const Problem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    if (launch_max_gather_block(ex, p, b, IndexWidth::fit)) return;
    MaxGatherStored::launch(ex, p, b);
  }
};

}  // namespace pg
