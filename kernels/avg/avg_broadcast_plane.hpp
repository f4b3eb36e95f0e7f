// avg.broadcast.plane: one window per plane (output size 1 on every axis: global average
// pooling, resnet's 7x7 head, an SPP level of one bin). Every dx element is then either a tap of
// its plane's only window, dx = dy / divisor with one rounding as the oracle computes it, or 0;
// so dx is a broadcast, written at full width: a work item is V consecutive dx elements of the
// flat tensor, wherever rows and planes begin (a 7x7 plane is 49 elements, which no 16-byte pack
// divides, and the row-wise packs of avg.direct fall back to one element per item there). An item
// finds its first element's coordinates once and steps the rest by carries, no division per
// element. Channels-first, the V lanes share their plane's quotient (one division per plane they
// touch); channels-last with C a whole number of packs, lanes are V channels of one position and
// read dy as one pack. Bytes moved: dx written once, dy read once per item at most.
#pragma once

#include <type_traits>

#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "src/model/variant.hpp"

namespace pg {

// The one window of every plane, per axis: its taps inside the input are first, first + dilation,
// ... up to last (none when first > last). `whole`: every input position is a tap.
template <class Idx>
struct PlaneWindow {
  Idx in[kAxes], first[kAxes], last[kAxes], dilation[kAxes];
  Divider<Idx> by_in[kAxes], by_dilation[kAxes];
  bool whole;

  PG_HD bool is_tap(const Idx* s) const {
    if (whole) return true;
    for (int a = 0; a < kAxes; ++a) {
      if (s[a] < first[a] || s[a] > last[a]) return false;
      if (dilation[a] != 1 && by_dilation[a].mod(s[a] - first[a]) != 0) return false;
    }
    return true;
  }

  // The next position in row-major order; true when it leaves the plane (back to its start).
  PG_HD bool step(Idx* s) const {
    for (int a = kAxes - 1; a >= 0; --a) {
      if (++s[a] < in[a]) return false;
      s[a] = 0;
    }
    return true;
  }
};

template <class Idx>
PlaneWindow<Idx> make_plane_window(const Problem& p) {
  const AvgShape<int64_t> g = make_avg_shape<int64_t>(p);
  PlaneWindow<Idx> w;
  w.whole = true;
  for (int a = 0; a < kAxes; ++a) {
    int64_t first, last;
    g.axis[a].inside_taps(0, &first, &last);
    w.in[a] = static_cast<Idx>(p.in[a]);
    w.first[a] = static_cast<Idx>(first);
    w.last[a] = static_cast<Idx>(last);
    w.dilation[a] = static_cast<Idx>(p.dilation[a]);
    w.by_in[a] = Divider<Idx>(w.in[a]);
    w.by_dilation[a] = Divider<Idx>(w.dilation[a]);
    w.whole = w.whole && first == 0 && last == p.in[a] - 1 && (p.dilation[a] == 1 || p.in[a] == 1);
  }
  return w;
}

// The divisor of the one window, in the accumulator type (the avg variants' per-axis rule).
template <class A>
A plane_window_divisor(const Problem& p) {
  const AvgShape<int64_t> g = make_avg_shape<int64_t>(p);
  return g.template divisor<A>(g.axis[0].count(g.rule, 0), g.axis[1].count(g.rule, 0), g.axis[2].count(g.rule, 0));
}

template <class T, class Idx, bool kChannelsLast, int V>
struct AvgBroadcastPlaneBody {
  using A = accum_t<T>;
  PlaneWindow<Idx> win;
  Idx c;
  Divider<Idx> by_c;
  A divisor;
  const T* dy;
  T* dx;

  PG_HD T quotient(Idx at) const { return from_accum<T>(static_cast<A>(to_float(dy[at])) / divisor); }

  PG_HD void operator()(Idx item) const {
    const Idx e = item * V;
    Idx rest = e, ch = 0, s[kAxes];
    if (kChannelsLast) {
      ch = by_c.mod(rest);
      rest = by_c.div(rest);
    }
    for (int a = kAxes - 1; a >= 0; --a) {
      s[a] = win.by_in[a].mod(rest);
      rest = win.by_in[a].div(rest);
    }
    Idx outer = rest;  // n * C + c channels-first, n channels-last
    Pack<T, V> out;
    if constexpr (kChannelsLast) {
      // The V lanes (C is a whole number of packs when V > 1) are channels ch..ch+V-1 of one
      // position: one tap test, dy read as one pack.
      if (win.is_tap(s)) {
        const Pack<T, V> d = load_pack<V>(dy, outer * c + ch);
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(A(0));
      }
    } else {
      // The lanes may cross rows and planes: each steps from the one before, and a plane's
      // quotient is computed once for the lanes inside it.
      Idx cached = -1;
      T q = from_accum<T>(A(0));
#pragma unroll
      for (int v = 0; v < V; ++v) {
        if (win.is_tap(s)) {
          if (outer != cached) {
            q = quotient(outer);
            cached = outer;
          }
          out.v[v] = q;
        } else {
          out.v[v] = from_accum<T>(A(0));
        }
        if (win.step(s)) ++outer;
      }
    }
    store_pack<V>(dx, e, out);
  }
};

struct AvgBroadcastPlane : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.broadcast.plane", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Any window, one per plane. Planes of a few elements up to a few dozen, so that packs straddle
  // rows and planes in every way.
  static Domain domain() { return {.windows = WindowRule::single, .shapes = {}}; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      using A = accum_t<T>;
      constexpr int V = kVecWidth<T>;
      const bool cl = p.layout == Layout::channels_last;
      // Full packs of dx: 16-byte aligned, and a whole number of them (channels-last: per
      // position, so that dy is read as packs too). The int64 path stays scalar.
      const bool packed = std::is_same_v<Idx, int32_t> && aligned16(b.dx) &&
                          (cl ? aligned16(b.dy) && p.c % V == 0 : p.in_elems() % V == 0);
      auto run = [&](auto channels_last, auto vec) {
        constexpr bool kChannelsLast = decltype(channels_last)::value;
        constexpr int W = decltype(vec)::value;
        ex.template for_each<Idx>(p.in_elems() / W, AvgBroadcastPlaneBody<T, Idx, kChannelsLast, W>{
            make_plane_window<Idx>(p), static_cast<Idx>(p.c), Divider<Idx>(static_cast<Idx>(p.c)),
            plane_window_divisor<A>(p), static_cast<const T*>(b.dy), static_cast<T*>(b.dx)});
      };
      if (packed) {
        if (cl) run(std::true_type{}, std::integral_constant<int, V>{});
        else run(std::false_type{}, std::integral_constant<int, V>{});
      } else {
        if (cl) run(std::true_type{}, std::integral_constant<int, 1>{});
        else run(std::false_type{}, std::integral_constant<int, 1>{});
      }
    });
  }
};

}  // namespace pg
