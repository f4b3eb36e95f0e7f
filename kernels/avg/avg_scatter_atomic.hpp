// avg.scatter.atomic: one work item per dy element; dy / divisor is atomically added to every
// in-bounds tap of its window. Works for every problem; the order of the adds, and so the last
// bits of dx, depend on scheduling. Half types accumulate in an f32 workspace converted at the
// end, so a dx element is rounded to its storage type once, as in every other variant.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/accum_workspace.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

template <class T, class Idx>
struct AvgScatterAtomicBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  bool channels_last;
  const T* dy;
  A* acc;

  PG_HD void operator()(Idx i) const {
    Idx rest = i, c = 0;
    if (channels_last) {
      c = g.by_c.mod(rest);
      rest = g.by_c.div(rest);
    }
    Idx o[kAxes];
    for (int a = kAxes - 1; a >= 0; --a) {
      o[a] = g.by_out[a].mod(rest);
      rest = g.by_out[a].div(rest);
    }
    Idx first[kAxes], last[kAxes], count[kAxes];
    for (int a = 0; a < kAxes; ++a) {
      g.axis[a].inside_taps(o[a], &first[a], &last[a]);
      if (first[a] > last[a]) return;  // no tap inside the input: the window routes nothing
      count[a] = g.axis[a].count(g.rule, o[a]);
    }
    const A term = static_cast<A>(to_float(dy[i])) / g.template divisor<A>(count[0], count[1], count[2]);
    for (Idx z = first[0]; z <= last[0]; z += g.axis[0].dilation)
      for (Idx y = first[1]; y <= last[1]; y += g.axis[1].dilation)
        for (Idx x = first[2]; x <= last[2]; x += g.axis[2].dilation) {
          const Idx point = g.in_point(rest, z, y, x);
          atomic_add(acc + (channels_last ? point * g.c + c : point), term);
        }
  }
};

struct AvgScatterAtomic : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.scatter.atomic", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = false};
  // Every problem, at the default reach (a few windows per axis): one item per dy element, with
  // no structure to span.
  // Atomics race only on problems big enough for several CPU threads (kernels/common/exec.hpp).
  static Domain domain() {
    Domain d;
    d.reach[1] = 16;
    d.reach[2] = 40;
    return d;
  }

  static size_t workspace_bytes(const Problem& p) { return accum_workspace_bytes(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      accum_t<T>* acc = zeroed_accumulator<T>(ex, p, b);
      ex.template for_each<Idx>(p.out_elems(), AvgScatterAtomicBody<T, Idx>{
          make_avg_shape<Idx>(p), p.layout == Layout::channels_last, static_cast<const T*>(b.dy), acc});
      narrow_workspace<T, Idx>(ex, p, b);
    });
  }
};

}  // namespace pg
