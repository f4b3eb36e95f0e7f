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
// Their weights come from a copy laid out [tap][K] in the workspace, so a tap's V weights are one
// access too: in the model's [K][C/groups][taps], a warp's V-channel items read each weight 18 x
// 8 bytes apart, 32 L1 wavefronts per load and eight loads per tap, eight times the wavefronts of
// all its dy loads.
// Each item writes its own positions once, in a fixed order: deterministic. Half types
// accumulate in f32 and round once. H100, 2026-11-26 (bench/results/2026-11-26_h100_conv_gemm_depthwise.md):
// the depthwise rows at 0.220 ms fp32, 0.167 bf16 and 0.088 bf16 channels-last, cuDNN 0.484,
// 0.446 and 0.102.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>

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
// At most 32 accumulators an item: 8 channels of 16 bytes take 4 positions. With the register
// window their 64 took 152 registers, one block per multiprocessor, and 0.153 ms on the bf16
// channels-last row; 4 positions with launch bounds for 3 blocks, 0.089 ms (H100, 2026-11-26,
// bench/results/2026-11-26_h100_conv_gemm_depthwise.md).
inline constexpr int depthwise_run(size_t elem_bytes, int lanes) { return elem_bytes == 2 ? std::min(8, 32 / lanes) : 4; }

// The items along W of one row: phases (min(stride, W)) x blocks of depthwise_run positions,
// enough for the phase with the most positions (i0 = 0).
inline int64_t depthwise_w_blocks_per_phase(const ConvProblem& p, int lanes) {
  const int64_t jn = (p.in[2] + p.stride[2] - 1) / p.stride[2], run = depthwise_run(dtype_size(p.dtype), lanes);
  return (jn + run - 1) / run;
}
inline int64_t depthwise_items(const ConvProblem& p, int lanes) {
  return p.n * (p.c / lanes) * p.in[0] * p.in[1] * std::min(p.stride[2], p.in[2]) * depthwise_w_blocks_per_phase(p, lanes);
}

// Launch bounds: registers for 3 blocks of 256 threads per multiprocessor (85 each). The items
// wait on their loads, not on issue (ncu: 24-44% of issue slots busy at 1-2 blocks); at 3 the
// bf16 rows ran 10-15% faster and fp32 7% (H100, 2026-11-26, same call).
inline constexpr int kDepthwiseBlocksPerSm = 3;

// The W taps a register window takes: up to kDepthwiseWindow taps per phase, one dy position
// apart (dilation / gcd(stride, dilation) = 1: every undilated window). 0: the generic walk.
inline constexpr int kDepthwiseWindow = 3;
inline int depthwise_window(const ConvProblem& p) {
  const int64_t s = p.stride[2], d = p.dilation[2], gcd = std::gcd(s, d);
  const int64_t most_taps = (p.kernel[2] + s / gcd - 1) / (s / gcd);
  return d / gcd == 1 && most_taps <= kDepthwiseWindow ? kDepthwiseWindow : 0;
}

// Channels per item: V > 1 only for pure depthwise channels-last problems, C a multiple of V and
// dy, dx and the workspace (the weights by tap) aligned to V elements.
template <class T>
int depthwise_lanes(const ConvProblem& p, const ConvBuffers& b) {
  if (p.layout != Layout::channels_last || p.c_per_group() != 1 || p.k_per_group() != 1) return 1;
  for (int v = static_cast<int>(16 / sizeof(T)); v > 1; v /= 2) {
    const auto aligned = [bytes = v * sizeof(T)](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; };
    if (p.c % v == 0 && b.workspace && aligned(b.dy) && aligned(b.dx) && aligned(b.workspace)) return v;
  }
  return 1;
}

// The weights of a pure depthwise problem as [tap][K] (the workspace of V-channel items).
template <class T, class Idx>
struct ConvDepthwiseWeightsBody {
  ConvShape<Idx> g;
  const T* w;
  T* out;

  PG_HD void operator()(Idx i) const {
    const Idx k = i % g.k, tap = i / g.k;
    out[i] = w[g.w_offset(k, 0, tap)];
  }
};

// V channels per item (see depthwise_lanes): channel c of the item is the group's only channel,
// reached from dy channel c with the weights of output channel c, read from `w` as [tap][K]
// when V > 1 (ConvDepthwiseWeightsBody), else in the model's layout.
//
// kWindow > 0: every W phase has at most kWindow taps, one dy position apart (depthwise_window):
// each dy position of a row is read and converted once for all the taps that reach it (the
// generic walk reads it once per tap: three times on 3x3 stride-1 windows).
template <class T, class Idx, int V, int kWindow>
struct ConvDepthwiseBody {
  using A = accum_t<T>;
  static constexpr int kRun = depthwise_run(sizeof(T), V);
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
          // Tap qw's weights of the item's V channels.
          const auto weights = [&](Idx qw, A (&wv)[V]) {
            const Idx tap = tap_zy + t0 + qw * g.t_step[2];
            if constexpr (V > 1) {
              const Pack<T, V> wp = load_pack<V>(w, tap * g.k + c);
#pragma unroll
              for (int v = 0; v < V; ++v) wv[v] = static_cast<A>(to_float(wp.v[v]));
            } else {
              wv[0] = static_cast<A>(to_float(w[g.w_offset(k_first + k, c_in_group, tap)]));
            }
          };
          const auto in_w = [&](Idx o) { return o >= 0 && o < g.out[2]; };
          if constexpr (kWindow > 0) {
            // W taps one dy position apart (o_step 1), at most kWindow of them: position o =
            // j0 + off0 - qw + r is read once, at e = r + kWindow - 1 - qw of the window
            // starting kWindow - 1 before j0 + off0, and serves every (r, qw) that meets there.
            A wv[kWindow][V] = {};
#pragma unroll
            for (int qw = 0; qw < kWindow; ++qw)
              if (qw < taps_w) weights(qw, wv[qw]);
            const Idx first = j0 + off0 - (kWindow - 1);
#pragma unroll
            for (int e = 0; e < kRun + kWindow - 1; ++e) {
              // Positions before kWindow - taps_w serve only taps the phase does not have.
              if (taps_w == 0 || e < kWindow - taps_w || !in_w(first + e)) continue;
              const Pack<T, V> d = load_pack<V>(dy, row + (first + e) * w_step);
              A x[V];
#pragma unroll
              for (int v = 0; v < V; ++v) x[v] = static_cast<A>(to_float(d.v[v]));
#pragma unroll
              for (int qw = 0; qw < kWindow; ++qw) {
                const int r = e - (kWindow - 1) + qw;
                if (r < 0 || r >= kRun || qw >= taps_w) continue;
#pragma unroll
                for (int v = 0; v < V; ++v) acc[r][v] += wv[qw][v] * x[v];
              }
            }
          } else {
            for (Idx qw = 0; qw < taps_w; ++qw) {
              A wv[V];
              weights(qw, wv);
              const Idx o = j0 + off0 - qw * g.o_step[2];
#pragma unroll
              for (int r = 0; r < kRun; ++r)
                if (in_w(o + r)) {
                  const Pack<T, V> d = load_pack<V>(dy, row + (o + r) * w_step);
#pragma unroll
                  for (int v = 0; v < V; ++v) acc[r][v] += wv[v] * static_cast<A>(to_float(d.v[v]));
                }
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
  // The [tap][K] weights of V-channel items (pure depthwise channels-last).
  static size_t workspace_bytes(const ConvProblem& p) {
    const bool lanes = p.layout == Layout::channels_last && p.c_per_group() == 1 && p.k_per_group() == 1;
    return lanes ? static_cast<size_t>(p.taps() * p.k) * dtype_size(p.dtype) : 0;
  }

  template <class Exec>
  static void launch(const Exec& ex, const ConvProblem& p, const ConvBuffers& b) {
    if (p.x_elems() == 0) return;
    const auto go = [&]<int V>(auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      const int64_t blocks = depthwise_w_blocks_per_phase(p, V);
      ConvShape<Idx> shape = make_conv_shape<Idx>(p);
      ConvGatherDividers<Idx> by = make_gather_dividers(shape);
      by.c = Divider<Idx>(p.c / V);
      const T* w = static_cast<const T*>(b.w);
      if constexpr (V > 1) {
        T* by_tap = static_cast<T*>(b.workspace);
        ex.template for_each<Idx>(p.taps() * p.k, ConvDepthwiseWeightsBody<T, Idx>{shape, w, by_tap});
        w = by_tap;
      }
      const auto run = [&]<int kWindow>() {
        ex.template for_each<Idx, kDepthwiseBlocksPerSm>(
            depthwise_items(p, V),
            ConvDepthwiseBody<T, Idx, V, kWindow>{shape, by, Divider<Idx>(std::min(p.stride[2], p.in[2]) * blocks),
                                                  Divider<Idx>(blocks), static_cast<const T*>(b.dy), w, static_cast<T*>(b.dx)});
      };
      if (depthwise_window(p) > 0) run.template operator()<kDepthwiseWindow>();
      else run.template operator()<0>();
    };
    with_conv_types(p, [&](auto tag, auto fitting) {
      using T = decltype(tag);
      const auto with_idx = [&](auto idx) {
        switch (depthwise_lanes<T>(p, b)) {
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
