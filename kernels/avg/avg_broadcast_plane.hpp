// avg.broadcast.plane: one window per plane (output size 1 on every axis: global average
// pooling, resnet's 7x7 head, an SPP level of one bin). Every dx element is then either a tap of
// its plane's only window, dx = dy / divisor with one rounding as the oracle computes it, or 0;
// so dx is a broadcast, written at full width with stores marked evict-first (dx is never read
// back; pack.hpp says what they gained). Channels-first, a work item is V consecutive dx
// elements of the flat tensor, wherever rows and planes begin (a 7x7 plane is 49 elements, which
// no 16-byte pack divides, and the row-wise packs of avg.direct fall back to one element per item
// there): the lanes share their plane's quotient (one division per plane they touch) and step
// their coordinates by carries. Channels-last, a work item is V channels at a few consecutive
// positions: dy read as one pack, its quotients computed once and stored at each position. Bytes
// moved: dx written once, dy read once per item at most.
#pragma once

#include <type_traits>

#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
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

// The divided dy of V lanes, in the storage type.
template <class T, int V, class A>
PG_HD Pack<T, V> divided(const Pack<T, V>& d, A divisor) {
  Pack<T, V> q;
#pragma unroll
  for (int v = 0; v < V; ++v) q.v[v] = from_accum<T>(static_cast<A>(to_float(d.v[v])) / divisor);
  return q;
}

// Channels-first: a work item is V consecutive dx elements of the flat tensor, wherever rows and
// planes begin (a 7x7 plane is 49 elements, which no 16-byte pack divides). kWhole: every
// position of a plane is a tap (global pooling without dilation gaps), so an item needs no
// coordinates: its first element's plane by one division, no tap tests. Without it, the item
// builds the coordinates and tests each lane; with it, the item is about a fifth of the
// instructions (an instruction-bound kernel before: resnet50's head took the same 0.026 ms on an
// H100 and an H200).
template <class T, class Idx, int V, bool kWhole>
struct AvgBroadcastPlaneBody {
  using A = accum_t<T>;
  PlaneWindow<Idx> win;
  Idx plane;  // elements of a plane
  Divider<Idx> by_plane;
  A divisor;
  const T* dy;
  T* dx;

  PG_HD T quotient(Idx at) const { return from_accum<T>(static_cast<A>(to_float(dy[at])) / divisor); }

  PG_HD void operator()(Idx item) const {
    const Idx e = item * V;
    Pack<T, V> out;
    if constexpr (kWhole) {
      // The lanes may cross into the next planes: `into` counts the lane's place in its plane.
      Idx outer = by_plane.div(e);
      Idx into = e - outer * plane;
      T q = quotient(outer);
#pragma unroll
      for (int v = 0; v < V; ++v) {
        if (into == plane) {
          into = 0;
          q = quotient(++outer);
        }
        out.v[v] = q;
        ++into;
      }
    } else {
      Idx rest = e, s[kAxes];
      for (int a = kAxes - 1; a >= 0; --a) {
        s[a] = win.by_in[a].mod(rest);
        rest = win.by_in[a].div(rest);
      }
      Idx outer = rest;  // n * C + c
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
    store_pack_streaming<V>(dx, e, out);
  }
};

// Channels-last positions a work item writes: its lanes' quotients are computed once and stored
// at this many consecutive positions. One position per item ran at half the speed of a plain
// fill, 4 to 16 at 80-95% of it (H200, 2026-11-28: resnet50's head f16 14.9 -> 9.0 us, 4 best or
// within 5% on four shapes; bench/results/2026-11-28_h200_broadcast.md).
inline constexpr int kBroadcastPositions = 4;

// Channels-last: a work item is V channels (C a whole number of packs; V = 1 otherwise) at
// kBroadcastPositions consecutive positions of one batch element: dy read once as one pack, the
// quotients stored at each position that is a tap (kWhole: all of them), 0 at the others.
template <class T, class Idx, int V, bool kWhole>
struct AvgBroadcastPositionsBody {
  using A = accum_t<T>;
  PlaneWindow<Idx> win;
  Idx c;
  Idx packs;  // packs of V channels per position
  Divider<Idx> by_packs;
  Idx chunks;  // runs of kBroadcastPositions positions per plane, the last one partial
  Divider<Idx> by_chunks;
  Idx positions;  // positions of a plane
  A divisor;
  const T* dy;
  T* dx;

  PG_HD void operator()(Idx item) const {
    const Idx rest = by_packs.div(item), pack = item - rest * packs;
    const Idx n = by_chunks.div(rest), first = (rest - n * chunks) * kBroadcastPositions;
    const Idx ch = pack * V;
    const Pack<T, V> q = divided<T, V>(load_pack<V>(dy, n * c + ch), divisor);
    Pack<T, V> zero;
    Idx s[kAxes];
    if constexpr (!kWhole) {
#pragma unroll
      for (int v = 0; v < V; ++v) zero.v[v] = from_accum<T>(A(0));
      Idx r = first;
      for (int a = kAxes - 1; a >= 0; --a) {
        s[a] = win.by_in[a].mod(r);
        r = win.by_in[a].div(r);
      }
    }
    const Idx at = (n * positions + first) * c + ch;
#pragma unroll
    for (int k = 0; k < kBroadcastPositions; ++k) {
      if (first + k >= positions) break;
      if constexpr (kWhole) {
        store_pack_streaming<V>(dx, at + k * c, q);
      } else {
        store_pack_streaming<V>(dx, at + k * c, win.is_tap(s) ? q : zero);
        win.step(s);
      }
    }
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
      const PlaneWindow<Idx> win = make_plane_window<Idx>(p);
      const A divisor = plane_window_divisor<A>(p);
      const T* dy = static_cast<const T*>(b.dy);
      T* dx = static_cast<T*>(b.dx);
      auto run = [&](auto vec, auto whole) {
        constexpr int W = decltype(vec)::value;
        constexpr bool kWhole = decltype(whole)::value;
        if (cl) {
          const Idx packs = static_cast<Idx>(p.c / W);
          const Idx chunks = static_cast<Idx>((p.in_plane() + kBroadcastPositions - 1) / kBroadcastPositions);
          ex.template for_each<Idx>(p.n * chunks * packs, AvgBroadcastPositionsBody<T, Idx, W, kWhole>{
              win, static_cast<Idx>(p.c), packs, Divider<Idx>(packs), chunks, Divider<Idx>(chunks),
              static_cast<Idx>(p.in_plane()), divisor, dy, dx});
        } else {
          const Idx plane = static_cast<Idx>(p.in_plane());
          ex.template for_each<Idx>(p.in_elems() / W,
                                    AvgBroadcastPlaneBody<T, Idx, W, kWhole>{win, plane, Divider<Idx>(plane), divisor, dy, dx});
        }
      };
      if (packed && win.whole) run(std::integral_constant<int, V>{}, std::true_type{});
      else if (packed) run(std::integral_constant<int, V>{}, std::false_type{});
      else run(std::integral_constant<int, 1>{}, std::false_type{});
    });
  }
};

}  // namespace pg
