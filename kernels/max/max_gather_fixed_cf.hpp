// max.gather.fixed.cf: max.gather.stored for the windows networks use (fixed_window_shapes():
// k3s2, k2s2, k3s1, the same on every non-trivial axis, no dilation), channels-first, int64
// plane or global_row indices, int32 offsets, f16/bf16/f32. A work item is a run of R dx
// elements along W on 2 rows that leaves in one 16-byte store per row when W % R == 0 and dx is
// 16-byte aligned (element stores otherwise). With K and S known at compile time the windows
// that cover the run form a box of at most CH x CW windows (CH per row axis, CW along W). The
// box is unrolled, so all its loads can be in flight at once instead of one per iteration of
// runtime-bounded loops, the division by S is a multiply, and no index type or format is
// switched on per load. In 3D, D may instead be a copy axis (kernel 1, stride 1, no padding: C3D's
// and nnU-Net's 1x2x2): a run's windows are then those of its own slice.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

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

// Launch bounds (minimum blocks of 256 threads per multiprocessor) by stride: stride-1 items hold
// the widest box of windows. H100, 2026-11-27 (bench/results/2026-11-27_h100_launch_bounds.md),
// none / 3 blocks: GoogLeNet's k3s1p1 (32,480,28,28) 0.0975 / 0.0939 ms, (32,256,35,35) k3s1p1
// f16 0.0786 / 0.0760; the stride-2 rows within -2% to +2% of none either way, so they keep none.
template <int S>
inline constexpr int kFixedCfLaunchBounds = S == 1 ? 3 : kNoLaunchBounds;

// PH = pad_begin along W modulo S. Runs start at multiples of R (a multiple of S), so PH fixes
// where each window of the run's box starts relative to the run (AlongW). kCopyD: D (A0 == 0)
// is a copy axis. kRH: rows per work item (max.gather.fixed.cf 2, max.gather.fixed.row.cf 1).
template <class T, int A0, int K, int S, int R, int PH, bool kCopyD, int kRH>
struct MaxGatherFixedItem {
  static_assert(R % S == 0, "runs must start in phase with the stride");
  using AlongW = WindowPhase<K, S, R, PH>;
  static constexpr int CW = AlongW::count;

  const T* dy;
  const int64_t* indices;
  T* dx;
  // A work item covers the run on RH consecutive rows: rows h and h + 1 share most of their
  // windows (k3s2: 2 box rows for 2 rows instead of 2 each), so loads and address arithmetic
  // are paid once for twice the outputs. One row holds fewer registers (max.gather.fixed.row.cf).
  static constexpr int RH = kRH;
  Divider<int32_t> runs_div;    // runs per row: ceil(W / R)
  Divider<int32_t> groups_div;  // row groups per (n, c, d) slice: ceil(H / RH)
  Divider<int32_t> depth_div;   // D
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t in_plane, out_plane;
  bool global_row;    // stored indices count from the tensor's origin, not the plane's
  bool packed_store;  // W % R == 0 and dx 16-byte aligned

  PG_HD void operator()(int32_t e) const {
    const int32_t group = runs_div.div(e);
    const int32_t w0 = (e - group * static_cast<int32_t>(runs_div.divisor)) * R;
    int32_t r = groups_div.div(group);
    const int32_t h0 = (group - r * static_cast<int32_t>(groups_div.divisor)) * RH;
    int32_t d = 0;
    if (A0 == 0) {
      const int32_t rest = depth_div.div(r);
      d = r - rest * in[0];
      r = rest;
    }
    const int32_t nc = r;
    const int32_t lo[2] = {A0 == 0 ? (kCopyD ? d : first_window<K, S>(d + pb[0])) : 0, first_window<K, S>(h0 + pb[1])};
    const int32_t hi[2] = {A0 == 0 ? (kCopyD ? d : last_window<K, S>(d + pb[0], out[0])) : 0,
                           last_window<K, S>(h0 + RH - 1 + pb[1], out[1])};
    const int32_t base_w = AlongW::first(w0 + pb[2]);
    const int32_t lin0 = (d * in[1] + h0) * in[2] + w0;
    // Run element k's stored index: < 2^31 (int32 offsets), so a window's index names it exactly
    // when its high word is 0 and its low word matches. Elements past the row's end (k >=
    // run_len) may match too, but are never stored.
    const uint32_t first = static_cast<uint32_t>((global_row ? nc * in_plane : 0) + lin0);
    const int32_t run_len = in[2] - w0 < R ? in[2] - w0 : R;  // the last run of a row may be short
    const int32_t out_base = nc * out_plane;
    constexpr int CH = covering_count<K, S>(RH), CD = A0 == 0 && !kCopyD ? covering_count<K, S>(1) : 1;
    accum_t<T> acc[RH][R] = {};
    // Every slot of the box loads from a clamped, always valid window and a slot outside the
    // box only drops its matches, so the loads carry no branch and all issue at once. D slices
    // run one after another to bound the registers the box holds.
#pragma unroll 1
    for (int i0 = 0; i0 < CD; ++i0) {
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1) {
        const bool row_ok = lo[0] + i0 <= hi[0] && lo[1] + i1 <= hi[1];
        const int32_t od = lo[0] + i0 < out[0] ? lo[0] + i0 : out[0] - 1;
        const int32_t oh = lo[1] + i1 < out[1] ? lo[1] + i1 : out[1] - 1;
        const int32_t row_at = out_base + (od * out[1] + oh) * out[2];
        bool row_tap[RH];  // input row h0 + rr is a tap of this box row
#pragma unroll
        for (int rr = 0; rr < RH; ++rr) {
          const int32_t t = h0 + rr + pb[1] - (lo[1] + i1) * S;
          row_tap[rr] = row_ok && t >= 0 && t < K;
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
        for (int rr = 0; rr < RH; ++rr)
#pragma unroll
          for (int k = 0; k < R; ++k)
#pragma unroll
            for (int c = 0; c < CW; ++c)
              if (AlongW::tap(k, c) && row_tap[rr] && ok[c] && low[c] == first + rr * in[2] + k) acc[rr][k] += grad[c];
      }
    }
    // Rows past the plane's end (odd H) match nothing real and are not stored.
#pragma unroll
    for (int rr = 0; rr < RH; ++rr) {
      if (h0 + rr >= in[1]) break;
      const int32_t at = nc * in_plane + lin0 + rr * in[2];
      if (packed_store) {
        Pack<T, R> v;
#pragma unroll
        for (int k = 0; k < R; ++k) v.v[k] = from_accum<T>(acc[rr][k]);
        store_pack<R>(dx, at, v);
      } else {
#pragma unroll
        for (int k = 0; k < R; ++k)
          if (k < run_len) dx[at + k] = from_accum<T>(acc[rr][k]);
      }
    }
  }
};

// Launches RH-row MaxGatherFixedItems of window K, S over p, which the calling variant's domain
// admits.
template <int K, int S, int RH, class Exec>
void launch_fixed_cf_items(const Exec& ex, const Problem& p, const BwdBuffers& b) {
  with_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) <= 4) {
      with_bit(leading_axis_trivial(p), [&]<int A0>() {
        with_bit(p.pad_begin[2] % S == 1, [&]<int PH>() {
          with_bit(A0 == 0 && axis_copy(p, 0), [&]<int kCopyD>() {
            if constexpr (PH < S) {
              constexpr int R = vector_lanes<T>;
              using Item = MaxGatherFixedItem<T, A0, K, S, R, PH, kCopyD == 1, RH>;
              Item item;
              set_fixed_item_frame<T>(item, p, b);
              const int64_t per_row = (p.in[2] + R - 1) / R;
              const int64_t groups = (p.in[1] + RH - 1) / RH;
              item.runs_div = Divider<int32_t>(per_row);
              item.groups_div = Divider<int32_t>(groups);
              item.depth_div = Divider<int32_t>(p.in[0]);
              item.packed_store = p.in[2] % R == 0 && aligned16(b.dx);
              ex.template for_each<int32_t, kFixedCfLaunchBounds<S>>(p.in_elems() / (p.in[1] * p.in[2]) * groups * per_row, item);
            }
          });
        });
      });
    }
  });
}

// What max.gather.fixed.cf and .row.cf draw. Work items are runs of up to 8 along W on 1 or 2
// rows: W several runs long with a short last one, H odd and even; in 3D, D a copy axis half the
// time.
inline Domain fixed_cf_domain(std::vector<WindowShape> shapes) {
  Domain d = fixed_item_domain(std::move(shapes), Layout::channels_first);
  d.min_dims = 2;
  d.trivial_leading = 1;
  d.copy_leading = true;
  d.reach[0] = 4;
  d.reach[1] = 7;
  d.reach[2] = 20;
  d.max_channels = 3;
  return d;
}

struct MaxGatherFixedCf : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "max.gather.fixed.cf", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  static Domain domain() { return fixed_cf_domain(fixed_window_shapes()); }

  static Support supports(const Problem& p) { return int32_offsets_only(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<MaxGatherFixedCf>(p);
    with_fixed_window(p, [&]<int K, int S>() { launch_fixed_cf_items<K, S, 2>(ex, p, b); });
  }
};

}  // namespace pg
