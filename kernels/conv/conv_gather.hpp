// conv.gather: one work item per dx element, summing dy * w over every (tap, output channel of
// its group) that reaches it. The taps come as one arithmetic run per axis (taps_reaching), so
// no tap is tried that contributes nothing; each item writes its own element once, in a fixed
// order, with no atomics: deterministic. Half types accumulate in f32 and round once.
//
// The direct strategy every problem can take; it reads the K/groups dy values of each tap
// without reuse across items beyond what the caches give, so it is the fast one only when
// there is little to reuse: depthwise and other small groups.
#pragma once

#include "kernels/common/exec.hpp"
#include "kernels/conv/conv_geometry.hpp"
#include "src/conv_registry.hpp"

namespace pg {

template <class T, class Idx>
struct ConvGatherBody {
  using A = accum_t<T>;
  ConvShape<Idx> g;
  const T* dy;
  const T* w;
  T* dx;

  PG_HD void operator()(Idx i) const {
    Idx rest = i, c = 0, pos[kAxes];
    if (g.channels_last) {
      c = rest % g.c;
      rest /= g.c;
    }
    for (int a = kAxes - 1; a >= 0; --a) {
      pos[a] = rest % g.in[a];
      rest /= g.in[a];
    }
    if (!g.channels_last) {
      c = rest % g.c;
      rest /= g.c;
    }
    const Idx n = rest, group = c / g.cg, c_in_group = c - group * g.cg, k_first = group * g.kg;
    TapRun<Idx> run[kAxes];
    for (int a = 0; a < kAxes; ++a)
      run[a] = g.taps_reaching_axis(pos[a], a);
    A sum = 0;
    for (Idx q0 = 0; q0 < run[0].count; ++q0)
      for (Idx q1 = 0; q1 < run[1].count; ++q1)
        for (Idx q2 = 0; q2 < run[2].count; ++q2) {
          const Idx tap = g.tap_index(run[0].t0 + q0 * run[0].t_step, run[1].t0 + q1 * run[1].t_step,
                                      run[2].t0 + q2 * run[2].t_step);
          const Idx at = g.y_offset(n, k_first, run[0].o0 - q0 * run[0].o_step, run[1].o0 - q1 * run[1].o_step,
                                    run[2].o0 - q2 * run[2].o_step);
          const Idx dy_step = g.channels_last ? 1 : g.out_plane();
          for (Idx k = 0; k < g.kg; ++k)
            sum += static_cast<A>(to_float(dy[at + k * dy_step])) *
                   static_cast<A>(to_float(w[g.w_offset(k_first + k, c_in_group, tap)]));
        }
    dx[i] = from_accum<T>(sum);
  }
};

struct ConvGather {
  static constexpr const char* name = "conv.gather";
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;
  static ConvDomain domain() { return {}; }
  static Support supports(const ConvProblem&) { return Support::yes(); }
  static size_t workspace_bytes(const ConvProblem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_conv_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      ex.template for_each<Idx>(p.x_elems(), ConvGatherBody<T, Idx>{make_conv_shape<Idx>(p), static_cast<const T*>(b.dy),
                                                                    static_cast<const T*>(b.w), static_cast<T*>(b.dx)});
    });
  }
};

}  // namespace pg
