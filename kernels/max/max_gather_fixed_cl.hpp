// max.gather.fixed.cl: the channels-last counterpart of max.gather.fixed.cf (same windows,
// indices, offsets and dtypes), for C a whole number of 16-byte packs. A work item is one
// 16-byte pack of channels of one input position; each covering window's indices for those
// channels are contiguous, so they arrive as 16-byte loads too. dy, indices and dx must be
// 16-byte aligned (the harness always allocates them so); launch throws otherwise.
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

// A work item is V consecutive channels of one input position (16-byte dx
// store); each covering window's V indices are contiguous, so they arrive as 16-byte loads.
// The position is a tap of every window in the box (no dilation), so a window picked channel j
// exactly when its stored index is that channel's encoding of this position.
template <class T, int A0, int K, int S, int V>
struct MaxGatherFixedClItem {
  const T* dy;
  const int64_t* indices;
  T* dx;
  Divider<int32_t> groups_div;   // channel groups of V per position
  Divider<int32_t> in_div[kAxes];
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t c, in_plane, out_plane;
  bool global_row;

  PG_HD void operator()(int32_t e) const {
    const int32_t pos = groups_div.div(e);
    const int32_t c0 = (e - pos * static_cast<int32_t>(groups_div.divisor)) * V;
    int32_t q[kAxes] = {0, 0, 0}, r = pos;
    for (int a = kAxes - 1; a >= A0; --a) {
      const int32_t rest = in_div[a].div(r);
      q[a] = r - rest * in[a];
      r = rest;
    }
    const int32_t n = r;
    int32_t lo[kAxes] = {0, 0, 0}, hi[kAxes] = {0, 0, 0};
    for (int a = A0; a < kAxes; ++a) {
      lo[a] = first_window<K, S>(q[a] + pb[a]);
      hi[a] = last_window<K, S>(q[a] + pb[a], out[a]);
    }
    const int32_t lin = (q[0] * in[1] + q[1]) * in[2] + q[2];
    int64_t mine[V];
#pragma unroll
    for (int j = 0; j < V; ++j)
      mine[j] = (global_row ? static_cast<int64_t>(n * c + c0 + j) * in_plane : 0) + lin;
    const int32_t out_base = n * out_plane * c + c0;
    constexpr int CH = covering_count<K, S>(1), CD = A0 == 0 ? CH : 1;
    accum_t<T> acc[V] = {};
    // Unlike the channels-first item, windows outside the box are branched around: clamped
    // branch-free loads measured slower here (0.184-0.200 vs 0.169 ms on the 2D k3s2p1 CL row).
#pragma unroll
    for (int i0 = 0; i0 < CD; ++i0)
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1)
#pragma unroll
        for (int i2 = 0; i2 < CH; ++i2) {
          if (lo[0] + i0 > hi[0] || lo[1] + i1 > hi[1] || lo[2] + i2 > hi[2]) continue;
          const int32_t at = out_base + (((lo[0] + i0) * out[1] + lo[1] + i1) * out[2] + lo[2] + i2) * c;
          const Pack<int64_t, V> stored = load_pack<V>(indices, at);
          bool match[V], any = false;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            match[j] = stored.v[j] == mine[j];
            any = any || match[j];
          }
          // dy only where a channel matched (loading it for every window measured slower).
          if (!any) continue;
          const Pack<T, V> grad = load_pack<V>(dy, at);
#pragma unroll
          for (int j = 0; j < V; ++j)
            if (match[j]) acc[j] += to_float(grad.v[j]);
        }
    Pack<T, V> v;
#pragma unroll
    for (int j = 0; j < V; ++j) v.v[j] = from_accum<T>(acc[j]);
    store_pack<V>(dx, (n * in_plane + lin) * c + c0, v);
  }
};

struct MaxGatherFixedCl : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "max.gather.fixed.cl", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // One position per work item: C of several packs (up to 8 lanes each), boxes clipped at
  // every edge.
  static Domain domain() {
    Domain d = fixed_item_domain(fixed_window_shapes(), Layout::channels_last);
    d.min_dims = 2;
    d.trivial_leading = 1;
    d.reach[0] = 4;
    d.reach[1] = 6;
    d.reach[2] = 8;
    d.max_channels = 24;
    return d;
  }

  static Support supports(const Problem& p) { return int32_offsets_only(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<MaxGatherFixedCl>(p);
    require_aligned16(traits.name, {{"dy", b.dy}, {"indices", b.indices}, {"dx", b.dx}});
    with_fixed_window(p, [&]<int K, int S>() {
      with_dtype(p.dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (sizeof(T) <= 4) {
          with_bit(leading_axis_trivial(p), [&]<int A0>() {
            constexpr int R = vector_lanes<T>;
            MaxGatherFixedClItem<T, A0, K, S, R> item;
            set_fixed_item_frame<T>(item, p, b);
            item.groups_div = Divider<int32_t>(p.c / R);
            for (int a = 0; a < kAxes; ++a) item.in_div[a] = Divider<int32_t>(p.in[a]);
            item.c = static_cast<int32_t>(p.c);
            ex.template for_each<int32_t>(p.in_elems() / R, item);
          });
        }
      });
    });
  }
};

}  // namespace pg
