// max.gather.block: max.gather.stored with k3s2 work items that cover more input positions,
// which share their covering windows (k3s2: 2 windows cover 2 consecutive positions along an
// axis, the same count as cover 1), so each stored index is loaded fewer times and the window
// arithmetic is paid once for more outputs.
// - Channels-last: a 2x2 block of positions (per D slice) for V channels instead of one
//   position: at most 2 x 2 windows for four positions, where one position at a time reads 9
//   windows per 4 positions.
// - Channels-first 3D: the fixed path's item (a run of R along W on 2 rows) on 2 D slices: the
//   same 2 x 2 x CW window box serves twice the outputs (the fixed path was issue-bound on the
//   3D k3s2 row).
// Other problems run max.gather.stored's own paths unchanged, so this variant is never slower
// there.
#pragma once

#include <cstdint>

#include "../src/numeric.hpp"
#include "../src/problem.hpp"
#include "../src/registry.hpp"
#include "divider.hpp"
#include "max_dispatch.hpp"
#include "max_gather_fixed.hpp"
#include "max_gather_stored.hpp"
#include "pack.hpp"

namespace pg {

// Channels-last: a 2x2 block of input positions of one D slice, V channels, one 16-byte dx
// store per position.
template <class T, int A0, int K, int S, int V>
struct MaxGatherBlockClItem {
  static constexpr int B = 2;                                       // positions per block along H and W
  static constexpr int CB = covering_count<K, S>(B);                // windows covering a block along H or W
  static constexpr int CD = A0 == 0 ? covering_count<K, S>(1) : 1;  // windows covering a position along D
  using Fixed = MaxGatherFixedItem<T, A0, K, S, V, 0>;

  const T* dy;
  const int64_t* indices;
  T* dx;
  Divider<int32_t> groups_div;  // channel groups of V per position
  Divider<int32_t> wb_div;      // blocks per row: ceil(W / B)
  Divider<int32_t> hb_div;      // block rows per slice: ceil(H / B)
  Divider<int32_t> depth_div;   // D
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t c, in_plane, out_plane;
  bool global_row;

  PG_HD void operator()(int32_t e) const {
    const int32_t blk = groups_div.div(e);
    const int32_t c0 = (e - blk * static_cast<int32_t>(groups_div.divisor)) * V;
    int32_t r = wb_div.div(blk);
    const int32_t w0 = (blk - r * static_cast<int32_t>(wb_div.divisor)) * B;
    const int32_t rest = hb_div.div(r);
    const int32_t h0 = (r - rest * static_cast<int32_t>(hb_div.divisor)) * B;
    int32_t n = rest, d = 0;
    if (A0 == 0) {
      n = depth_div.div(rest);
      d = rest - n * in[0];
    }
    // The block's last row and column may lie past the plane (odd H or W): they match nothing.
    const int32_t nh = in[1] - h0 < B ? 1 : B, nw = in[2] - w0 < B ? 1 : B;
    const int32_t lo0 = A0 == 0 ? Fixed::first_window(d + pb[0]) : 0;
    const int32_t hi0 = A0 == 0 ? Fixed::last_window(d + pb[0], out[0]) : 0;
    const int32_t lo1 = Fixed::first_window(h0 + pb[1]), hi1 = Fixed::last_window(h0 + nh - 1 + pb[1], out[1]);
    const int32_t lo2 = Fixed::first_window(w0 + pb[2]), hi2 = Fixed::last_window(w0 + nw - 1 + pb[2], out[2]);
    // Block position (bh, bw) lies at lin0 + bh * W + bw; a window picked it for channel j exactly
    // when its stored index is base[j] plus that offset and the position is one of its taps.
    // Encodings are < 2^31 (int32 offsets), so a stored index with a nonzero high word names
    // nothing, and below base[j] its low word minus base[j] wraps past 2^31, above every offset.
    const int32_t lin0 = (d * in[1] + h0) * in[2] + w0;
    uint32_t base[V];
#pragma unroll
    for (int j = 0; j < V; ++j) base[j] = global_row ? static_cast<uint32_t>((n * c + c0 + j) * in_plane) : 0;
    const int32_t out_base = n * out_plane * c + c0;
    accum_t<T> acc[B][B][V] = {};
    // D slices run one after another to bound the registers the box holds (as in the
    // channels-first fixed item).
#pragma unroll 1
    for (int i0 = 0; i0 < CD; ++i0) {
      const int32_t od = lo0 + i0;
      if (od > hi0) break;
      // Phase 1: every window of the H x W box loads its V indices from a clamped, always valid
      // address, all at once; a window outside the box matches nothing. rel holds each stored
      // index's block-relative offset, or kNone (matches no offset) when it has a high word.
      constexpr uint32_t kNone = 0xffffffffu;
      bool tap[CB][CB][B][B];
      uint32_t rel[CB][CB][V];
      int32_t at[CB][CB];
#pragma unroll
      for (int i1 = 0; i1 < CB; ++i1)
#pragma unroll
        for (int i2 = 0; i2 < CB; ++i2) {
          const int32_t oh = lo1 + i1, ow = lo2 + i2;
          const bool in_box = oh <= hi1 && ow <= hi2;
          at[i1][i2] = out_base + ((od * out[1] + (oh < out[1] ? oh : out[1] - 1)) * out[2] +
                                   (ow < out[2] ? ow : out[2] - 1)) * c;
#pragma unroll
          for (int bh = 0; bh < B; ++bh)
#pragma unroll
            for (int bw = 0; bw < B; ++bw) {
              const int32_t th = h0 + bh + pb[1] - oh * S, tw = w0 + bw + pb[2] - ow * S;
              tap[i1][i2][bh][bw] = in_box && bh < nh && bw < nw && th >= 0 && th < K && tw >= 0 && tw < K;
            }
          const Pack<int64_t, V> stored = load_pack<V>(indices, at[i1][i2]);
#pragma unroll
          for (int j = 0; j < V; ++j)
            rel[i1][i2][j] = static_cast<uint64_t>(stored.v[j]) >> 32 == 0 ? static_cast<uint32_t>(stored.v[j]) - base[j]
                                                                           : kNone;
        }
      // Phase 2: dy only for windows that picked a block position in some channel (loading it
      // for every window measured slower on the one-position item). The loads are selected into
      // grad before any is used, so they need not wait for one another as the one-position
      // item's `continue` made them.
      Pack<T, V> grad[CB][CB];
#pragma unroll
      for (int i1 = 0; i1 < CB; ++i1)
#pragma unroll
        for (int i2 = 0; i2 < CB; ++i2) {
          bool any = false;
#pragma unroll
          for (int bh = 0; bh < B; ++bh)
#pragma unroll
            for (int bw = 0; bw < B; ++bw)
#pragma unroll
              for (int j = 0; j < V; ++j)
                any = any || (tap[i1][i2][bh][bw] && rel[i1][i2][j] == static_cast<uint32_t>(lin0 + bh * in[2] + bw));
          grad[i1][i2] = any ? load_pack<V>(dy, at[i1][i2]) : Pack<T, V>{};
        }
#pragma unroll
      for (int i1 = 0; i1 < CB; ++i1)
#pragma unroll
        for (int i2 = 0; i2 < CB; ++i2)
#pragma unroll
          for (int bh = 0; bh < B; ++bh)
#pragma unroll
            for (int bw = 0; bw < B; ++bw)
#pragma unroll
              for (int j = 0; j < V; ++j)
                if (tap[i1][i2][bh][bw] && rel[i1][i2][j] == static_cast<uint32_t>(lin0 + bh * in[2] + bw))
                  acc[bh][bw][j] += to_float(grad[i1][i2].v[j]);
    }
#pragma unroll
    for (int bh = 0; bh < B; ++bh)
#pragma unroll
      for (int bw = 0; bw < B; ++bw) {
        if (bh >= nh || bw >= nw) continue;
        Pack<T, V> v;
#pragma unroll
        for (int j = 0; j < V; ++j) v.v[j] = from_accum<T>(acc[bh][bw][j]);
        store_pack<V>(dx, (n * in_plane + lin0 + bh * in[2] + bw) * c + c0, v);
      }
  }
};

// Channels-first 3D: MaxGatherFixedItem's run of R dx elements on RH rows, on RD D slices.
template <class T, int K, int S, int R, int PH>
struct MaxGatherBlockCfItem {
  using Fixed = MaxGatherFixedItem<T, 0, K, S, R, PH>;
  static constexpr int RD = 2, RH = Fixed::RH, CW = Fixed::CW;
  static constexpr int CD = covering_count<K, S>(RD), CH = covering_count<K, S>(RH);

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
    const int32_t lo0 = Fixed::first_window(d0 + pb[0]), hi0 = Fixed::last_window(d0 + RD - 1 + pb[0], out[0]);
    const int32_t lo1 = Fixed::first_window(h0 + pb[1]), hi1 = Fixed::last_window(h0 + RH - 1 + pb[1], out[1]);
    const int32_t base_w = (w0 + pb[2] - PH) / S + Fixed::kFirstW;  // exact: w0 + pad = PH (mod S)
    const int32_t lin0 = (d0 * in[1] + h0) * in[2] + w0;
    // As in the fixed item: positions past the tensor's end (odd H or D) may match too, but are
    // never stored.
    const uint32_t first = static_cast<uint32_t>((global_row ? nc * in_plane : 0) + lin0);
    const int32_t run_len = in[2] - w0 < R ? in[2] - w0 : R;
    const int32_t out_base = nc * out_plane;
    accum_t<T> acc[RD][RH][R] = {};
    // Box loads as in the fixed item: clamped, branch-free, all of a D slice at once; D slices
    // one after another to bound the registers.
#pragma unroll 1
    for (int i0 = 0; i0 < CD; ++i0) {
      bool slice_tap[RD];  // input slice d0 + rd is a tap of this box slice
#pragma unroll
      for (int rd = 0; rd < RD; ++rd) {
        const int32_t t = d0 + rd + pb[0] - (lo0 + i0) * S;
        slice_tap[rd] = lo0 + i0 <= hi0 && t >= 0 && t < K;
      }
      const int32_t od = lo0 + i0 < out[0] ? lo0 + i0 : out[0] - 1;
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1) {
        const int32_t oh = lo1 + i1 < out[1] ? lo1 + i1 : out[1] - 1;
        const int32_t row_at = out_base + (od * out[1] + oh) * out[2];
        bool tap[RD][RH];  // input row (d0 + rd, h0 + rr) is a tap of this box row
#pragma unroll
        for (int rr = 0; rr < RH; ++rr) {
          const int32_t t = h0 + rr + pb[1] - (lo1 + i1) * S;
          const bool row_tap = lo1 + i1 <= hi1 && t >= 0 && t < K;
#pragma unroll
          for (int rd = 0; rd < RD; ++rd) tap[rd][rr] = slice_tap[rd] && row_tap;
        }
        bool ok[CW];
        uint32_t low[CW];
        accum_t<T> grad[CW];
#pragma unroll
        for (int c = 0; c < CW; ++c) {
          const int32_t ow = base_w + c;
          const int32_t at = row_at + (ow < 0 ? 0 : ow < out[2] ? ow : out[2] - 1);
          const int64_t stored = indices[at];
          grad[c] = to_float(dy[at]);
          ok[c] = ow >= 0 && ow < out[2] && static_cast<uint64_t>(stored) >> 32 == 0;
          low[c] = static_cast<uint32_t>(stored);
        }
#pragma unroll
        for (int rd = 0; rd < RD; ++rd)
#pragma unroll
          for (int rr = 0; rr < RH; ++rr)
#pragma unroll
            for (int k = 0; k < R; ++k)
#pragma unroll
              for (int c = 0; c < CW; ++c)
                if (Fixed::tap_w(k, c) && tap[rd][rr] && ok[c] &&
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
// serve (channels-last, or channels-first 3D); false leaves p to max.gather.stored.
template <class Exec>
bool launch_max_gather_block(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
  constexpr int K = 3, S = 2;
  if (p.index_type != IndexType::i64 || !uses_int32(p, width) ||
      (p.index_format != IndexFormat::plane && p.index_format != IndexFormat::global_row))
    return false;
  const int a0 = leading_axis_trivial(p) ? 1 : 0;
  for (int a = a0; a < kAxes; ++a)
    if (p.dilation[a] != 1 || p.kernel[a] != K || p.stride[a] != S) return false;
  const bool cl = p.layout == Layout::channels_last;
  if (cl && (!aligned16(b.dy) || !aligned16(b.indices) || !aligned16(b.dx))) return false;
  if (!cl && a0 == 1) return false;
  bool ran = false;
  with_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) <= 4) {
      constexpr int V = vector_lanes<T>;
      if (cl && p.c % V != 0) return;
      const auto go_cl = [&]<int A0>() {
        using Item = MaxGatherBlockClItem<T, A0, K, S, V>;
        Item item;
        item.dy = static_cast<const T*>(b.dy);
        item.indices = static_cast<const int64_t*>(b.indices);
        item.dx = static_cast<T*>(b.dx);
        const int64_t groups = p.c / V, wb = (p.in[2] + Item::B - 1) / Item::B, hb = (p.in[1] + Item::B - 1) / Item::B;
        item.groups_div = Divider<int32_t>(groups);
        item.wb_div = Divider<int32_t>(wb);
        item.hb_div = Divider<int32_t>(hb);
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
        ex.template for_each<int32_t>(p.n * p.in[0] * hb * wb * groups, item);
        ran = true;
      };
      const auto go_cf = [&]<int PH>() {
        using Item = MaxGatherBlockCfItem<T, K, S, V, PH>;
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
      if (cl && a0 == 1) go_cl.template operator()<1>();
      else if (cl) go_cl.template operator()<0>();
      else if (p.pad_begin[2] % 2 == 1) go_cf.template operator()<1>();
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

  static Support supports(const Problem&) { return Support::yes(); }
  static size_t workspace_bytes(const Problem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    if (launch_max_gather_block(ex, p, b, IndexWidth::fit)) return;
    MaxGatherStored::launch(ex, p, b);
  }
};

}  // namespace pg
