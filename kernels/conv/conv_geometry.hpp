// What every conv backward-data body needs: the problem's sizes as a trivially copyable struct
// in the body's index type, tensor offsets in either layout, and which taps reach an input
// position.
//
// The tap arithmetic: along one axis, input position i receives dy[o] * w[t] when
// o*stride - pad + t*dilation = i, that is t*dilation = i + pad (mod stride). With
// g = gcd(stride, dilation) the taps that satisfy it are t0, t0 + stride/g, t0 + 2*stride/g, ...
// (none when g does not divide i + pad), and each step lowers o by dilation/g. So the taps that
// reach a position form one arithmetic run per axis, found without a division per tap.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "kernels/common/numeric.hpp"
#include "src/model/conv_problem.hpp"

namespace pg {

template <class Idx>
PG_HD Idx gcd_of(Idx a, Idx b) {
  while (b != 0) {
    const Idx r = a % b;
    a = b;
    b = r;
  }
  return a;
}

// Along one axis, the taps t = t0 + q*t_step (q in [0, count)) that put a term into a position,
// reaching dy at o = o0 - q*o_step.
template <class Idx>
struct TapRun {
  Idx t0 = 0, t_step = 1, o0 = 0, o_step = 1, count = 0;
};

// The taps that reach position `pos` along one axis from dy positions inside [0, out). `Div`
// divides (plain division, or a Divider fixed at launch): by_stride, by_gcd, by_t_step and
// by_o_step divide by the stride, g = gcd(stride, dilation), stride / g and dilation / g.
template <class Idx, class Div>
PG_HD TapRun<Idx> taps_reaching(Idx pos, Idx kernel, Idx dilation, Idx pad, Idx out, Idx t_step, Idx o_step,
                                const Div& by_stride, const Div& by_gcd, const Div& by_t_step, const Div& by_o_step) {
  TapRun<Idx> r;
  r.t_step = t_step;
  r.o_step = o_step;
  const Idx reach = pos + pad;  // = o*stride + t*dilation
  if (by_gcd.mod(reach) != 0) return r;
  Idx t0 = 0;
  while (t0 < r.t_step && reach - t0 * dilation >= 0 && by_stride.mod(reach - t0 * dilation) != 0) ++t0;
  if (t0 >= kernel || reach - t0 * dilation < 0) return r;
  Idx o0 = by_stride.div(reach - t0 * dilation);
  Idx count = by_t_step.div(kernel - 1 - t0) + 1;  // taps inside the kernel
  const Idx nonneg = by_o_step.div(o0) + 1;        // taps with o >= 0
  if (nonneg < count) count = nonneg;
  Idx skip = 0;                                    // leading taps with o >= out
  if (o0 >= out) skip = by_o_step.div(o0 - out) + 1;
  if (skip >= count) return r;
  r.t0 = t0 + skip * r.t_step;
  r.o0 = o0 - skip * r.o_step;
  r.count = count - skip;
  return r;
}

template <class Idx>
struct ConvShape {
  Idx n, c, k, groups, cg, kg;
  Idx in[kAxes], out[kAxes], kernel[kAxes], stride[kAxes], dilation[kAxes], pad[kAxes];
  Idx step_gcd[kAxes], t_step[kAxes], o_step[kAxes];  // gcd(stride, dilation), stride / gcd, dilation / gcd
  bool channels_last;

  PG_HD Idx in_plane() const { return in[0] * in[1] * in[2]; }
  PG_HD Idx out_plane() const { return out[0] * out[1] * out[2]; }
  PG_HD Idx taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  PG_HD Idx x_offset(Idx n_, Idx c_, Idx z, Idx y, Idx x) const {
    const Idx point = (z * in[1] + y) * in[2] + x;
    return channels_last ? (n_ * in_plane() + point) * c + c_ : (n_ * c + c_) * in_plane() + point;
  }
  PG_HD Idx y_offset(Idx n_, Idx k_, Idx z, Idx y, Idx x) const {
    const Idx point = (z * out[1] + y) * out[2] + x;
    return channels_last ? (n_ * out_plane() + point) * k + k_ : (n_ * k + k_) * out_plane() + point;
  }
  // w is (K, C/groups, taps) channels-first, (K, taps, C/groups) channels-last; `c_in_group`
  // counts from the group's first channel.
  PG_HD Idx w_offset(Idx k_, Idx c_in_group, Idx tap) const {
    return channels_last ? (k_ * taps() + tap) * cg + c_in_group : (k_ * cg + c_in_group) * taps() + tap;
  }
  PG_HD Idx tap_index(Idx t0, Idx t1, Idx t2) const { return (t0 * kernel[1] + t1) * kernel[2] + t2; }
};

template <class Idx>
ConvShape<Idx> make_conv_shape(const ConvProblem& p) {
  ConvShape<Idx> s;
  s.n = static_cast<Idx>(p.n);
  s.c = static_cast<Idx>(p.c);
  s.k = static_cast<Idx>(p.k);
  s.groups = static_cast<Idx>(p.groups);
  s.cg = static_cast<Idx>(p.c_per_group());
  s.kg = static_cast<Idx>(p.k_per_group());
  for (int a = 0; a < kAxes; ++a) {
    s.in[a] = static_cast<Idx>(p.in[a]);
    s.out[a] = static_cast<Idx>(p.out[a]);
    s.kernel[a] = static_cast<Idx>(p.kernel[a]);
    s.stride[a] = static_cast<Idx>(p.stride[a]);
    s.dilation[a] = static_cast<Idx>(p.dilation[a]);
    s.pad[a] = static_cast<Idx>(p.pad_begin[a]);
    s.step_gcd[a] = gcd_of(s.stride[a], s.dilation[a]);
    s.t_step[a] = s.stride[a] / s.step_gcd[a];
    s.o_step[a] = s.dilation[a] / s.step_gcd[a];
  }
  s.channels_last = p.layout == Layout::channels_last;
  return s;
}

// int32 index arithmetic is safe when every tensor's element count fits.
inline bool conv_fits_int32(const ConvProblem& p) {
  const int64_t limit = int64_t{1} << 31;
  return p.x_elems() < limit && p.y_elems() < limit && p.w_elems() < limit;
}

// Calls f(T{}, Idx{}) with the storage type and the narrowest safe index type.
template <class F>
void with_conv_types(const ConvProblem& p, F&& f) {
  with_dtype(p.dtype, [&](auto tag) {
    if (conv_fits_int32(p)) f(tag, int32_t{});
    else f(tag, int64_t{});
  });
}

}  // namespace pg
