// avg.direct.exact.cf: channels-first windows that tile the input exactly, k2 s2 p0 on every
// axis with even sizes (a flat D, or D and H, for 2D and 1D problems). Every dx element is then a
// tap of exactly one window and every window's divisor is the same (each convention counts the
// full kernel; divisor_override replaces it), so the backward is a broadcast of dy / divisor
// (one rounding, as the oracle computes it) with no per-element division of indices. W is a
// whole number of 16-byte packs, dy and dx are 16-byte aligned (launch throws otherwise) and
// offsets fit int32.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

// Kernel KW along W (V a multiple of KW, W of V): a work item is one V-pack of dx in the first
// plane of a window's D taps; it reads the V / KW dy it covers and writes the pack to each of the
// kernel's D planes. Consecutive items are consecutive packs of a plane, so every store
// instruction of a warp writes 32 x 16 contiguous bytes. (Items that each wrote the D x H taps of
// a dy group stored rows with gaps between them: f16 rows of 112 bytes end mid-sector. H100,
// avgpool3d (16,64,16,56,56) k2s2 f16: 0.057 ms then, 0.044 ms this way; f32 0.0855 -> 0.0831
// ms.) The item whose row pair shares a dy row reads it from cache.
template <class T, class Idx, int V, int KW>
struct AvgDirectExactPlanesBody {
  using A = accum_t<T>;
  static constexpr int G = V / KW;
  Divider<Idx> packs_per_plane;  // H * W / V
  Divider<Idx> packs_per_row;    // W / V
  Divider<Idx> rows_per_window;  // kernel along H
  Idx plane_in, plane_out, out_w, kernel_d;
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx gi) const {
    const Idx at = packs_per_plane.mod(gi);
    const Idx window_plane = packs_per_plane.div(gi);  // n * C * D_out + oz, as a dy plane index
    const Idx oy = rows_per_window.div(packs_per_row.div(at));
    const Pack<T, G> d = load_pack<G>(dy, window_plane * plane_out + oy * out_w + packs_per_row.mod(at) * G);
    // Convert each value once (half types convert in software), then replicate.
    T s[G];
#pragma unroll
    for (int v = 0; v < G; ++v) s[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = s[v / KW];
    const Idx first = window_plane * kernel_d * plane_in + at * V;
    for (Idx i = 0; i < kernel_d; ++i) store_pack<V>(dx, first + i * plane_in, out);
  }
};

struct AvgDirectExactCf : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.direct.exact.cf", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // The body is built for kernel 2 along W and takes any kernel == stride along D and H; a
  // listed domain names one shape for every axis, so this one admits k2 s2 p0 throughout.
  // Every axis is a whole number of windows (whole_windows), which the fuzz builds directly.
  static Domain domain() {
    return {.windows = WindowRule::listed,
            .shapes = {{.kernel = 2, .stride = 2}},
            .whole_windows = true,
            .trivial_leading = 2,
            .layouts = {Layout::channels_first},
            .contiguous_packs = true,
            .reach = {6, 9, 32}};
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
      using Idx = int32_t;
      constexpr int V = kVecWidth<T>;
      const A divisor = static_cast<A>(p.has_divisor_override ? p.divisor_override : p.taps());
      const int64_t plane_in = p.in[1] * p.in[2];
      ex.template for_each<Idx>(p.in_elems() / V / p.kernel[0], AvgDirectExactPlanesBody<T, Idx, V, 2>{
          Divider<Idx>(static_cast<Idx>(plane_in / V)), Divider<Idx>(static_cast<Idx>(p.in[2] / V)),
          Divider<Idx>(static_cast<Idx>(p.kernel[1])), static_cast<Idx>(plane_in), static_cast<Idx>(p.out[1] * p.out[2]),
          static_cast<Idx>(p.out[2]), static_cast<Idx>(p.kernel[0]), divisor, static_cast<const T*>(b.dy),
          static_cast<T*>(b.dx)});
    });
  }
};

}  // namespace pg
