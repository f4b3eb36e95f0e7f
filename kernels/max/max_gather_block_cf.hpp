// max.gather.block.cf: k3s2 windows (pad 0-2, one pad parity on every axis, no dilation), 3D
// channels-first, int64 plane or global_row indices, int32 offsets, f16/bf16/f32. A work item
// is max.gather.fixed.cf's run of R dx elements along W on 2 rows, on 2 D slices: k3s2 windows
// cover 2 consecutive positions along an axis with as few windows as cover 1, so the same
// 2 x 2 x CW window box serves twice the outputs (the fixed item was issue-bound on the 3D k3s2
// row). Runs start in phase with the stride and the pad parity P is the same on every axis, so
// which window of the box covers which position is a compile-time fact (WindowPhase): only real
// (window, position) pairs are compared. dx leaves in 16-byte stores when W % R == 0 and dx is
// 16-byte aligned, in element stores otherwise. D may instead be a copy axis (kernel 1, stride 1,
// no padding: I3D's 1x3x3 windows): each of the item's 2 slices then has its own windows, the
// same compile-time box with 1 window per slice along D.
#pragma once

#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_fixed_window.hpp"
#include "kernels/common/require.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"

namespace pg {

// MaxGatherFixedItem's run of R dx elements on RH rows, on RD D slices; along D windows of kernel
// KD and stride SD (K and S, or 1 and 1 for a copy axis) whose pad parity is PD.
// k3s2 f32: 54 real (window, element) pairs of the 2 x 2 x 3 box's 192.
template <class T, int K, int S, int R, int P, int KD = K, int SD = S, int PD = P>
struct MaxGatherBlockCfItem {
  static constexpr int RD = 2, RH = 2;
  using AlongD = WindowPhase<KD, SD, RD, PD>;
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

struct MaxGatherBlockCf : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "max.gather.block.cf", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Slabs are 2 D slices by 2 rows by a run of up to 8 along W: D and H odd and even across
  // several slabs, W several runs long with a short last one; D a copy axis half the time.
  static Domain domain() {
    Domain d = fixed_item_domain({WindowShape{3, 2, 0, 2}}, Layout::channels_first);
    d.min_dims = 3;
    d.same_pad_parity = true;
    d.trivial_leading = 0;
    d.copy_leading = true;
    d.reach[0] = 6;
    d.reach[1] = 6;
    d.reach[2] = 20;
    d.max_channels = 3;
    return d;
  }

  static Support supports(const Problem& p) { return int32_offsets_only(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    constexpr int K = 3, S = 2;
    require_supported<MaxGatherBlockCf>(p);
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (sizeof(T) <= 4) {
        with_bit(p.pad_begin[2] % S == 1, [&]<int P>() {
          with_bit(axis_copy(p, 0), [&]<int kCopyD>() {
            constexpr int V = vector_lanes<T>;
            using Item = MaxGatherBlockCfItem<T, K, S, V, P, kCopyD ? 1 : K, kCopyD ? 1 : S, kCopyD ? 0 : P>;
            Item item;
            set_fixed_item_frame<T>(item, p, b);
            const int64_t per_row = (p.in[2] + V - 1) / V, groups = (p.in[1] + Item::RH - 1) / Item::RH,
                          slabs = (p.in[0] + Item::RD - 1) / Item::RD;
            item.runs_div = Divider<int32_t>(per_row);
            item.groups_div = Divider<int32_t>(groups);
            item.slabs_div = Divider<int32_t>(slabs);
            item.packed_store = p.in[2] % V == 0 && aligned16(b.dx);
            ex.template for_each<int32_t>(p.n * p.c * slabs * groups * per_row, item);
          });
        });
      }
    });
  }
};

}  // namespace pg
