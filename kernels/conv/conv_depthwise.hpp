// conv.depthwise: backward-data for depthwise and other small groups (C/groups <= 8), where the
// implicit GEMM has no reduction to speak of (K/groups taps x channels) and conv.gather spends
// its time on index arithmetic per element.
//
// A work item computes a run of dx positions (depthwise_run) of one (sample, channel, D, H) row along W, all
// in the same stride phase: positions i0 + j*stride for j in [j0, j0 + run). Along W
// those positions are reached by the same taps t0 + q*t_step, from dy at j + off0 - q*o_step
// (kernels/conv/conv_geometry.hpp), so the item finds its taps once, reads each weight once for
// all its positions, and reads `run` consecutive dy elements per tap. The D and H taps
// come as arithmetic runs (taps_reaching) with every division by a divisor fixed at launch.
// Channels-first items are consecutive along W (coalesced along the row), channels-last ones
// along C (coalesced across channels). Pure depthwise channels-last problems (C/groups =
// K/groups = 1) give an item V consecutive channels, moved as one access of up to 16 bytes
// (the largest V of 8, 4, 2 that divides C and that the buffers' alignment allows): with one
// channel per item the bf16 channels-last row ran at 0.287 ms, with 8 at 0.138 (cuDNN 0.102).
// Each item writes its own positions once, in a fixed order: deterministic. Half types
// accumulate in f32 and round once. The fp32 depthwise row: 0.239 ms, conv.gather 0.875, cuDNN
// 0.483 (H100, 2026-11-25, bench/results/2026-11-25_h100_conv_tc.md).
#pragma once

#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "kernels/conv/conv_gather.hpp"  // ConvGatherDividers
#include "kernels/conv/conv_geometry.hpp"
#include "src/model/conv_variant.hpp"

namespace pg {

inline constexpr int64_t kDepthwiseMaxCPerGroup = 8;  // past it conv.gemm reuses dy across channels

// dx positions along W per work item: 8 for 16-bit types, whose weights (one load per channel
// lane and tap) then serve twice the positions: the bf16 rows went from 0.251 to 0.185 ms
// (channels-first) and 0.137 to 0.116 ms (channels-last, 8 channels per item); fp32 went from
// 0.238 to 0.269 ms, so it keeps 4 (H100, 2026-11-26, bench/results/2026-11-26_h100_conv_wgmma.md).
inline constexpr int depthwise_run(size_t elem_bytes) { return elem_bytes == 2 ? 8 : 4; }

// The items along W of one row: phases (min(stride, W)) x blocks of depthwise_run positions,
// enough for the phase with the most positions (i0 = 0).
inline int64_t depthwise_w_blocks_per_phase(const ConvProblem& p) {
  const int64_t jn = (p.in[2] + p.stride[2] - 1) / p.stride[2], run = depthwise_run(dtype_size(p.dtype));
  return (jn + run - 1) / run;
}
inline int64_t depthwise_items(const ConvProblem& p, int lanes) {
  return p.n * (p.c / lanes) * p.in[0] * p.in[1] * std::min(p.stride[2], p.in[2]) * depthwise_w_blocks_per_phase(p);
}

// Channels per item: V > 1 only for pure depthwise channels-last problems, C a multiple of V and
// dy and dx aligned to V elements.
template <class T>
int depthwise_lanes(const ConvProblem& p, const void* dy, const void* dx) {
  if (p.layout != Layout::channels_last || p.c_per_group() != 1 || p.k_per_group() != 1) return 1;
  for (int v = static_cast<int>(16 / sizeof(T)); v > 1; v /= 2) {
    const size_t bytes = v * sizeof(T);
    if (p.c % v == 0 && reinterpret_cast<uintptr_t>(dy) % bytes == 0 && reinterpret_cast<uintptr_t>(dx) % bytes == 0)
      return v;
  }
  return 1;
}

// V channels per item (see depthwise_lanes): channel c of the item is the group's only channel,
// reached from dy channel c with the weights of output channel c.
template <class T, class Idx, int V>
struct ConvDepthwiseBody {
  using A = accum_t<T>;
  static constexpr int kRun = depthwise_run(sizeof(T));
  ConvShape<Idx> g;
  ConvGatherDividers<Idx> by;
  Divider<Idx> by_w_items, by_blocks;  // items per row along W; blocks per phase
  const T* dy;
  const T* w;
  T* dx;

  PG_HD void operator()(Idx i) const {
    Idx rest = i, c = 0;
    if (g.channels_last) {
      c = by.c.mod(rest) * V;  // by.c divides by C / V
      rest = by.c.div(rest);
    }
    const Idx w_item = by_w_items.mod(rest);
    rest = by_w_items.div(rest);
    const Idx y = by.in[1].mod(rest);
    rest = by.in[1].div(rest);
    const Idx z = by.in[0].mod(rest);
    rest = by.in[0].div(rest);
    if (!g.channels_last) {
      c = by.c.mod(rest);
      rest = by.c.div(rest);
    }
    const Idx n = rest;
    const Idx i0 = by_blocks.div(w_item), j0 = by_blocks.mod(w_item) * kRun;
    const Idx s = g.stride[2], dil = g.dilation[2];
    const Idx jn = by.stride[2].div(g.in[2] - i0 + s - 1);
    if (j0 >= jn) return;  // this phase has fewer positions than the longest one
    // The W taps of the phase: t*dilation = i0 + pad (mod stride).
    const Idx reach = i0 + g.pad[2];
    Idx t0 = 0;
    while (t0 < g.t_step[2] && by.stride[2].mod(reach - t0 * dil + s * g.kernel[2] * dil) != 0) ++t0;
    const bool any = by.gcd[2].mod(reach) == 0 && t0 < g.kernel[2];
    const Idx taps_w = any ? by.t_step[2].div(g.kernel[2] - 1 - t0) + 1 : 0;
    const Idx off0 = any ? (reach - t0 * dil >= 0 ? by.stride[2].div(reach - t0 * dil)
                                                  : -by.stride[2].div(t0 * dil - reach + s - 1))
                         : 0;
    TapRun<Idx> run[2];
    for (int a = 0; a < 2; ++a) {
      const Idx pos = a == 0 ? z : y;
      run[a] = taps_reaching<Idx>(pos, g.kernel[a], g.dilation[a], g.pad[a], g.out[a], g.t_step[a], g.o_step[a],
                                  by.stride[a], by.gcd[a], by.t_step[a], by.o_step[a]);
    }
    const Idx group = by.cg.div(c), c_in_group = c - group * g.cg, k_first = group * g.kg;
    const Idx w_step = g.channels_last ? g.k : 1;  // dy elements from one W position to the next
    A acc[kRun][V];
#pragma unroll
    for (int r = 0; r < kRun; ++r)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[r][v] = 0;
    for (Idx k = 0; k < g.kg; ++k)
      for (Idx q0 = 0; q0 < run[0].count; ++q0)
        for (Idx q1 = 0; q1 < run[1].count; ++q1) {
          const Idx row = g.y_offset(n, k_first + k, run[0].o0 - q0 * run[0].o_step, run[1].o0 - q1 * run[1].o_step, 0);
          const Idx tap_zy = g.tap_index(run[0].t0 + q0 * run[0].t_step, run[1].t0 + q1 * run[1].t_step, 0);
          for (Idx qw = 0; qw < taps_w; ++qw) {
            const Idx tap = tap_zy + t0 + qw * g.t_step[2];
            A wv[V];
#pragma unroll
            for (int v = 0; v < V; ++v) wv[v] = static_cast<A>(to_float(w[g.w_offset(k_first + k + v, c_in_group, tap)]));
            const Idx o = j0 + off0 - qw * g.o_step[2];
#pragma unroll
            for (int r = 0; r < kRun; ++r)
              if (o + r >= 0 && o + r < g.out[2]) {
                const Pack<T, V> d = load_pack<V>(dy, row + (o + r) * w_step);
#pragma unroll
                for (int v = 0; v < V; ++v) acc[r][v] += wv[v] * static_cast<A>(to_float(d.v[v]));
              }
          }
        }
#pragma unroll
    for (int r = 0; r < kRun; ++r)
      if (j0 + r < jn) {
        Pack<T, V> out;
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(acc[r][v]);
        store_pack<V>(dx, g.x_offset(n, c, z, y, i0 + (j0 + r) * s), out);
      }
  }
};

struct ConvDepthwise {
  static constexpr ConvTraits traits{.name = "conv.depthwise", .deterministic = true};
  // Rows long enough for several items per phase and a partial last one.
  static ConvDomain domain() {
    ConvDomain d;
    d.reach[2] = 24;
    d.max_c_per_group = kDepthwiseMaxCPerGroup;
    return d;
  }

  static Support supports(const ConvProblem& p) {
    if (p.c_per_group() > kDepthwiseMaxCPerGroup)
      return Support::no("C/groups " + std::to_string(p.c_per_group()) + " > " + std::to_string(kDepthwiseMaxCPerGroup) +
                         ": small groups only (conv.gemm reuses dy across channels)");
    return Support::yes();
  }
  static size_t workspace_bytes(const ConvProblem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const ConvProblem& p, const ConvBuffers& b) {
    if (p.x_elems() == 0) return;
    const int64_t blocks = depthwise_w_blocks_per_phase(p);
    const auto go = [&]<int V>(auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      ConvShape<Idx> shape = make_conv_shape<Idx>(p);
      ConvGatherDividers<Idx> by = make_gather_dividers(shape);
      by.c = Divider<Idx>(p.c / V);
      ex.template for_each<Idx>(depthwise_items(p, V),
                                ConvDepthwiseBody<T, Idx, V>{shape, by, Divider<Idx>(std::min(p.stride[2], p.in[2]) * blocks),
                                                             Divider<Idx>(blocks), static_cast<const T*>(b.dy),
                                                             static_cast<const T*>(b.w), static_cast<T*>(b.dx)});
    };
    with_conv_types(p, [&](auto tag, auto fitting) {
      using T = decltype(tag);
      const auto with_idx = [&](auto idx) {
        switch (depthwise_lanes<T>(p, b.dy, b.dx)) {
          case 8: if constexpr (sizeof(T) <= 2) go.template operator()<8>(tag, idx); break;
          case 4: if constexpr (sizeof(T) <= 4) go.template operator()<4>(tag, idx); break;
          case 2: go.template operator()<2>(tag, idx); break;
          default: go.template operator()<1>(tag, idx);
        }
      };
      if (depthwise_items(p, 1) >= (int64_t{1} << 31)) with_idx(int64_t{});
      else with_idx(fitting);
    });
  }
};

}  // namespace pg
