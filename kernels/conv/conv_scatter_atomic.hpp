// conv.scatter.atomic: one work item per dy element, spreading dy * w through every tap whose
// input position lies inside the input, to every input channel of its group, with atomic adds.
// The order of the adds, and so the last bits of dx, depend on scheduling. Half types add into
// an f32 workspace that is rounded into dx once at the end, as every other variant rounds.
#pragma once

#include "kernels/common/accum_workspace.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "kernels/conv/conv_geometry.hpp"
#include "src/model/conv_variant.hpp"

namespace pg {

template <class T, class Idx>
struct ConvScatterAtomicBody {
  using A = accum_t<T>;
  ConvShape<Idx> g;
  const T* dy;
  const T* w;
  A* acc;

  PG_HD void operator()(Idx i) const {
    Idx rest = i, k = 0, o[kAxes];
    if (g.channels_last) {
      k = rest % g.k;
      rest /= g.k;
    }
    for (int a = kAxes - 1; a >= 0; --a) {
      o[a] = rest % g.out[a];
      rest /= g.out[a];
    }
    if (!g.channels_last) {
      k = rest % g.k;
      rest /= g.k;
    }
    const Idx n = rest, c_first = k / g.kg * g.cg;
    const A term = static_cast<A>(to_float(dy[i]));
    // Along each axis the taps inside the input are one contiguous range: first..last.
    Idx first[kAxes], last[kAxes];
    for (int a = 0; a < kAxes; ++a) {
      const Idx start = o[a] * g.stride[a] - g.pad[a];
      first[a] = start >= 0 ? 0 : (-start + g.dilation[a] - 1) / g.dilation[a];
      const Idx room = g.in[a] - 1 - start;
      if (room < 0) return;
      last[a] = room / g.dilation[a] < g.kernel[a] - 1 ? room / g.dilation[a] : g.kernel[a] - 1;
      if (first[a] > last[a]) return;
    }
    for (Idx t0 = first[0]; t0 <= last[0]; ++t0)
      for (Idx t1 = first[1]; t1 <= last[1]; ++t1)
        for (Idx t2 = first[2]; t2 <= last[2]; ++t2) {
          const Idx tap = g.tap_index(t0, t1, t2);
          const Idx at = g.x_offset(n, c_first, o[0] * g.stride[0] - g.pad[0] + t0 * g.dilation[0],
                                    o[1] * g.stride[1] - g.pad[1] + t1 * g.dilation[1],
                                    o[2] * g.stride[2] - g.pad[2] + t2 * g.dilation[2]);
          const Idx dx_step = g.channels_last ? 1 : g.in_plane();
          for (Idx c = 0; c < g.cg; ++c)
            atomic_add(acc + at + c * dx_step, term * static_cast<A>(to_float(w[g.w_offset(k, c, tap)])));
        }
  }
};

struct ConvScatterAtomic : ConvVariantDefaults {
  static constexpr ConvTraits traits{.name = "conv.scatter.atomic", .deterministic = false};
  // Atomics race on the CPU backend only from 1024 items per thread (kernels/common/exec.hpp):
  // a longer W axis reaches that often.
  static ConvDomain domain() {
    ConvDomain d;
    d.reach[2] = 40;
    return d;
  }
  static size_t workspace_bytes(const ConvProblem& p) {
    return dtype_size(p.dtype) == 2 ? static_cast<size_t>(p.x_elems()) * sizeof(float) : 0;
  }

  template <class Exec>
  static void launch(const Exec& ex, const ConvProblem& p, const ConvBuffers& b) {
    with_conv_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      accum_t<T>* acc = zeroed_accumulator<T>(ex, p.x_elems(), b.dx, b.workspace);
      ex.template for_each<Idx>(p.y_elems(), ConvScatterAtomicBody<T, Idx>{make_conv_shape<Idx>(p), static_cast<const T*>(b.dy),
                                                                            static_cast<const T*>(b.w), acc});
      narrow_workspace<T, Idx>(ex, p.x_elems(), b.workspace, b.dx);
    });
  }
};

}  // namespace pg
