// avg.direct.exact.cl: channels-last windows that tile the input exactly (kernel == stride, no
// padding, no dilation, every axis a whole number of windows: k2 s2 p0 on even sizes). Every dx
// element is then a tap of exactly one window and every window's divisor is the same (each
// convention counts the full kernel; divisor_override replaces it), so the backward is a
// broadcast of dy / divisor (one rounding, as the oracle computes it) with no per-element
// division of indices. C is a whole number of 16-byte packs, dy and dx are 16-byte aligned
// (launch throws otherwise) and offsets fit int32.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

// A work item reads V channels of one dy point and writes them to each of the kernel-volume dx
// points of its window.
template <class T, class Idx, int V>
struct AvgDirectExactPointsBody {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> packs_per_point;  // C / V
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const Pack<T, V> d = load_pack<V>(dy, gi * V);
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);

    const AvgAxis<Idx>& az = g.axis[0];
    const AvgAxis<Idx>& ay = g.axis[1];
    const AvgAxis<Idx>& ax = g.axis[2];
    const Idx c0 = packs_per_point.mod(gi) * V;
    Idx rest = packs_per_point.div(gi);
    const Idx ox = g.by_out[2].mod(rest);
    rest = g.by_out[2].div(rest);
    const Idx oy = g.by_out[1].mod(rest);
    rest = g.by_out[1].div(rest);
    const Idx oz = g.by_out[0].mod(rest);
    const Idx outer = g.by_out[0].div(rest);
    for (Idx i = 0; i < az.kernel; ++i)
      for (Idx j = 0; j < ay.kernel; ++j)
        for (Idx l = 0; l < ax.kernel; ++l)
          store_pack<V>(dx, g.in_point(outer, oz * az.kernel + i, oy * ay.kernel + j, ox * ax.kernel + l) * g.c + c0, out);
  }
};

struct AvgDirectExactCl : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.direct.exact.cl", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // The body takes any kernel == stride per axis; a listed domain names one shape for every axis,
  // so this one admits the common ones, the same on every axis. Every axis is a
  // whole number of windows (whole_windows), which the fuzz builds directly.
  // Channels are packs (items), up to three f16 packs.
  static Domain domain() {
    return {.windows = WindowRule::listed,
            .shapes = {{.kernel = 2, .stride = 2}, {.kernel = 3, .stride = 3}, {.kernel = 4, .stride = 4}},
            .whole_windows = true,
            .trivial_leading = 2,
            .layouts = {Layout::channels_last},
            .contiguous_packs = true,
            .reach = {6, 9, 12},
            .max_channels = 24};
  }

  static Support supports(const Problem& p) {
    return avg_fits_int32(p) ? Support::yes() : Support::no("offsets beyond int32");
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_aligned16(traits.name, {{"dy", b.dy}, {"dx", b.dx}});  // 16-byte packs of both
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      using A = accum_t<T>;
      constexpr int V = kVecWidth<T>;
      const A divisor = static_cast<A>(p.has_divisor_override ? p.divisor_override : p.taps());
      ex.template for_each<int32_t>(p.out_elems() / V, AvgDirectExactPointsBody<T, int32_t, V>{
          make_avg_shape<int32_t>(p), Divider<int32_t>(static_cast<int32_t>(p.c / V)), divisor,
          static_cast<const T*>(b.dy), static_cast<T*>(b.dx)});
    });
  }
};

}  // namespace pg
