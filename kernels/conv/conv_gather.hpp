// conv.gather: one work item per dx element, summing dy * w over every (tap, output channel of
// its group) that reaches it. The taps come as one arithmetic run per axis (taps_reaching), so
// no tap is tried that contributes nothing, and every division is by a divisor fixed at launch
// (on the H100's depthwise row with plain divisions, the index arithmetic made it 1.5 ms, twice
// the atomic scatter). Each item writes its own element once, in a fixed order, with no
// atomics: deterministic. Half types accumulate in f32 and round once.
//
// The direct strategy every problem can take; it reads the K/groups dy values of each tap
// without reuse across items beyond what the caches give, so it is the fast one only when
// there is little to reuse: depthwise and other small groups.
#pragma once

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "kernels/conv/conv_geometry.hpp"
#include "src/model/conv_variant.hpp"

namespace pg {

// Every division the body makes, by a value fixed at launch (kernels/common/divider.hpp).
template <class Idx>
struct ConvGatherDividers {
  Divider<Idx> c, in[kAxes], cg, stride[kAxes], gcd[kAxes], t_step[kAxes], o_step[kAxes];
};

template <class Idx>
ConvGatherDividers<Idx> make_gather_dividers(const ConvShape<Idx>& g) {
  ConvGatherDividers<Idx> d;
  d.c = Divider<Idx>(g.c);
  d.cg = Divider<Idx>(g.cg);
  for (int a = 0; a < kAxes; ++a) {
    d.in[a] = Divider<Idx>(g.in[a]);
    d.stride[a] = Divider<Idx>(g.stride[a]);
    d.gcd[a] = Divider<Idx>(g.step_gcd[a]);
    d.t_step[a] = Divider<Idx>(g.t_step[a]);
    d.o_step[a] = Divider<Idx>(g.o_step[a]);
  }
  return d;
}

template <class T, class Idx>
struct ConvGatherBody {
  using A = accum_t<T>;
  ConvShape<Idx> g;
  ConvGatherDividers<Idx> by;
  const T* dy;
  const T* w;
  T* dx;

  PG_HD void operator()(Idx i) const {
    Idx rest = i, c = 0, pos[kAxes];
    if (g.channels_last) {
      c = by.c.mod(rest);
      rest = by.c.div(rest);
    }
    for (int a = kAxes - 1; a >= 0; --a) {
      pos[a] = by.in[a].mod(rest);
      rest = by.in[a].div(rest);
    }
    if (!g.channels_last) {
      c = by.c.mod(rest);
      rest = by.c.div(rest);
    }
    const Idx n = rest, group = by.cg.div(c), c_in_group = c - group * g.cg, k_first = group * g.kg;
    TapRun<Idx> run[kAxes];
    for (int a = 0; a < kAxes; ++a)
      run[a] = taps_reaching<Idx>(pos[a], g.kernel[a], g.dilation[a], g.pad[a], g.out[a], g.t_step[a], g.o_step[a],
                                  by.stride[a], by.gcd[a], by.t_step[a], by.o_step[a]);
    const Idx dy_step = g.channels_last ? 1 : g.out_plane();
    A sum = 0;
    for (Idx q0 = 0; q0 < run[0].count; ++q0)
      for (Idx q1 = 0; q1 < run[1].count; ++q1)
        for (Idx q2 = 0; q2 < run[2].count; ++q2) {
          const Idx tap = g.tap_index(run[0].t0 + q0 * run[0].t_step, run[1].t0 + q1 * run[1].t_step,
                                      run[2].t0 + q2 * run[2].t_step);
          const Idx at = g.y_offset(n, k_first, run[0].o0 - q0 * run[0].o_step, run[1].o0 - q1 * run[1].o_step,
                                    run[2].o0 - q2 * run[2].o_step);
          for (Idx k = 0; k < g.kg; ++k)
            sum += static_cast<A>(to_float(dy[at + k * dy_step])) *
                   static_cast<A>(to_float(w[g.w_offset(k_first + k, c_in_group, tap)]));
        }
    dx[i] = from_accum<T>(sum);
  }
};

struct ConvGather : ConvVariantDefaults {
  static constexpr ConvTraits traits{.name = "conv.gather", .deterministic = true};
  static ConvDomain domain() { return {}; }

  template <class Exec>
  static void launch(const Exec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_conv_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      const ConvShape<Idx> shape = make_conv_shape<Idx>(p);
      ex.template for_each<Idx>(p.x_elems(), ConvGatherBody<T, Idx>{shape, make_gather_dividers(shape), static_cast<const T*>(b.dy),
                                                                    static_cast<const T*>(b.w), static_cast<T*>(b.dx)});
    });
  }
};

}  // namespace pg
