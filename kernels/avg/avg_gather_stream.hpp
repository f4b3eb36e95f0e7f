// avg.gather.stream: the overlapping stride-1 average pool (k3 s1, padding 0 or 1, every divisor
// convention) as a block-streaming gather (plane_stream.hpp). A window plane is staged as
// s = dy / divisor, one division per window; a thread sums its 3 x (RY + 2) staged windows
// along W, then H (the 3 x 3 box of each of its RY dx rows), and the box goes to all KD dx
// planes the window plane reaches. dx of plane z is then box(z + pad - 2) + box(z + pad - 1) +
// box(z + pad), added in that order: deterministic, 3 + 3 + 3 deep per element (inside the
// oracle's bound), every dx element written once, no zeroing pass.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/plane_stream.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

template <class T, class Idx>
struct AvgStreamBody {
  using Acc = accum_t<T>;
  using Slot = Acc;
  struct Pre {
    Acc hw;  // the window's divisor count along H times that along W
  };
  AvgShape<Idx> g;
  const T* dy;
  T* dx;

  PG_HD Pre prepare(const StreamSlot<Idx>& s) const {
    if (!s.inside) return {Acc(0)};
    return {static_cast<Acc>(g.axis[1].count(g.rule, s.oh)) * static_cast<Acc>(g.axis[2].count(g.rule, s.ow))};
  }
  PG_HD Slot empty() const { return Acc(0); }
  using Raw = T;
  PG_HD Raw load(Idx outer, Idx od, const StreamSlot<Idx>& s) const {
    return dy[(outer * g.axis[0].out + od) * (g.axis[1].out * g.axis[2].out) + s.at];
  }
  PG_HD Slot finish(const Raw& v, Idx, Idx od, const StreamSlot<Idx>&, const Pre& pre) const {
    // Counts are at most 3 per axis: the products are exact in any accumulator type.
    const Acc divisor = g.has_override ? static_cast<Acc>(g.override_value)
                                       : static_cast<Acc>(g.axis[0].count(g.rule, od)) * pre.hw;
    return static_cast<Acc>(to_float(v)) / divisor;
  }

  template <int KD, int RY>
  PG_HD void gather(const Slot* s, int pitch, Acc (&ring)[KD][RY]) const {
    Acc w[RY + 2];
#pragma unroll
    for (int r = 0; r < RY + 2; ++r) w[r] = (s[r * pitch] + s[r * pitch + 1]) + s[r * pitch + 2];
#pragma unroll
    for (int k = 0; k < RY; ++k) {
      const Acc box = (w[k] + w[k + 1]) + w[k + 2];
#pragma unroll
      for (int t = 0; t < KD; ++t) ring[t][k] += box;
    }
  }

  PG_HD void store(Idx at, Acc v) const { dx[at] = from_accum<T>(v); }
};

struct AvgGatherStream : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.stream", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // stream_applies (plane_stream.hpp) as a domain. It also takes a kernel-1 D of any length,
  // which a listed domain cannot name beside k3 on H and W: that case is left out here. Sizes for
  // the fuzz: H and W across 32 x 32 tiles with partial ones, D over a few planes.
  static Domain domain() {
    return {.min_dims = 2,
            .windows = WindowRule::listed,
            .shapes = {{.kernel = 3, .stride = 1, .pad_min = 0, .pad_max = 1}},
            .trivial_leading = 1,
            .layouts = {Layout::channels_first},
            .reach = {7, 40, 70}};
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      const AvgStreamBody<T, Idx> body{make_avg_shape<Idx>(p), static_cast<const T*>(b.dy), static_cast<T*>(b.dx)};
      if (p.kernel[0] == 3) launch_plane_stream<Idx, 3>(ex, p, body);
      else launch_plane_stream<Idx, 1>(ex, p, body);
    });
  }
};

}  // namespace pg
