// max.direct.rows: max-pool backward from stored indices for 1D channels-first problems whose
// windows are disjoint (stride >= effective kernel: audio front ends, SoundNet's k8s8, M5's
// k4s4), any kernel, stride, dilation, padding, ceil mode, dtype, index format and type.
//
// Why: max.direct.stored writes a window's cell element by element (four 4-byte stores for a k4s4
// cell, eight for k8s8) behind a general N-D locate and decode, and the row variants keep tiles
// in shared memory: 51-64% of the copy ceiling on M5 and SoundNet (H200, 2026-11-28), where a
// plain kernel that reads an index and a dy and writes one 16-byte cell runs at 96%
// (bench/results/2026-11-28_h200_broadcast.md). Here a work item is V consecutive elements of the
// flat dx tensor (one 16-byte store), wherever rows and windows begin: with disjoint windows an
// element x lies in the span of window o = (x + pad) / stride only, and gets that window's dy
// where its index names x, else 0. A pack inside one row that meets at most two windows decodes
// each once and selects per lane; any other (one that crosses a row, or meets more windows
// than two) steps x, o and the offset in o's span by carries (no division per lane) and decodes a
// window's index once for the lanes that share it.
// Deterministic (each dx element written once, one term: 0 + dy, as the summing variants round
// it), no atomics, no zeroing pass.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "src/model/variant.hpp"

namespace pg {

template <class T, class Idx, int V>
struct MaxDirectRowsItem {
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  Divider<Idx> by_w;      // W, the length of a row
  Idx first_o, first_t;   // element 0's window and its offset in that window's span: pad / stride, pad % stride
  const T* dy;
  const void* indices;
  T* dx;

  // The element of row `row` that stored index v of window o names, or -1 when v names none of
  // the window's taps inside the row (a foreign index is skipped). decode_index_at for one axis,
  // each format in a few instructions: a 1D plane is its row, and global row- and column-major
  // orders agree there.
  PG_HD Idx named_in_row(int64_t v, Idx row, Idx o) const {
    const Idx start = o * g.s[2] - g.pb[2], W = g.in[2];
    if (g.format == IndexFormat::window) {
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(g.k[2])) return -1;
      const Idx q = start + static_cast<Idx>(v) * g.d[2];
      return q >= 0 && q < W ? q : Idx{-1};
    }
    const int64_t local = g.format == IndexFormat::plane ? v : v - static_cast<int64_t>(row) * W;
    if (static_cast<uint64_t>(local) >= static_cast<uint64_t>(W)) return -1;
    const Idx q = static_cast<Idx>(local);
    return is_tap(g, 2, q, o) ? q : Idx{-1};
  }

  // Window o of row `row`: the element its index names (-1: none of its taps, or no window o)
  // and its dy as it lands. dy is loaded beside the index, not once the index has decoded: a
  // disjoint window's dy is needed by one of the packs that read it, so loading it always costs
  // no DRAM bytes, and the pack waits for one round trip instead of two (H200, 2026-12-02:
  // SoundNet 120.4 -> 105.6 us, M5 135.0 -> 122.0; bench/results/2026-12-02_h200_max_loads.md).
  PG_HD void window(Idx row, Idx o, Idx* named, T* grad) const {
    *named = -1;
    if (o >= g.out[2]) return;
    const Idx at = row * g.out[2] + o;
    const T d = dy[at];
    int64_t stored;
    load_indices<1>(indices, g.index_type, at, &stored);
    *named = named_in_row(stored, row, o);
    if (*named >= 0) *grad = from_accum<T>(A(0) + to_float(d));
  }

  PG_HD void operator()(Idx item) const {
    const Idx e = item * V, W = g.in[2], s = g.s[2];
    Idx row = by_w.div(e);
    Idx x = e - row * W;
    Idx o = g.s_div[2].div(x + g.pb[2]);
    Idx t = x + g.pb[2] - o * s;
    const T zero = from_accum<T>(A(0));
    Idx seen_row = -1, seen_o = -1, named = -1;
    T grad = zero;
    Pack<T, V> out;
    // A pack inside one row that meets at most two windows' strides (every in-row pack when the
    // stride is at least V: M5's k4s4, SoundNet's k8s8, k3s3 f32): one decode per window and V
    // selects, without the lanes' carries (H200, 2026-11-28: the general walk below issues ~200
    // instructions per 4-lane pack).
    if (x + V <= W && t + V <= 2 * s) {
      window(row, o, &named, &grad);
      if (t + V <= s) {
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = named == x + v ? grad : zero;
      } else {
        Idx named_next;
        T grad_next = zero;
        window(row, o + 1, &named_next, &grad_next);
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const bool first = t + v < s;
          out.v[v] = (first ? named : named_next) == x + v ? (first ? grad : grad_next) : zero;
        }
      }
      store_pack<V>(dx, e, out);
      return;
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (o != seen_o || row != seen_row) {
        window(row, o, &named, &grad);
        seen_row = row;
        seen_o = o;
      }
      out.v[v] = named == x ? grad : zero;
      if (++x == W) {
        x = 0;
        ++row;
        o = first_o;
        t = first_t;
      } else if (++t == s) {
        t = 0;
        ++o;
      }
    }
    store_pack<V>(dx, e, out);
  }
};

struct MaxDirectRows : MaxVariant<MaxDirectRows> {
  static constexpr PoolTraits traits{
      .name = "max.direct.rows", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // 1D channels-first, disjoint windows; rows from a few elements to a few dozen, so that packs
  // straddle windows, rows and planes in every way.
  static Domain domain() {
    Domain d = channels_first_rows();
    d.windows = WindowRule::disjoint;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxDirectRows>(p);
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V1>() {
      constexpr int VW = vector_lanes<T>;
      // Full 16-byte packs of dx: aligned, and a whole number of them. The int64 path stays scalar.
      const bool packed = std::is_same_v<Idx, int32_t> && aligned16(b.dx) && p.in_elems() % VW == 0;
      const auto run = [&]<int V>() {
        const MaxDirectRowsItem<T, Idx, V> item{make_max_geom<Idx>(p, 1),
                                                Divider<Idx>(static_cast<Idx>(p.in[2])),
                                                static_cast<Idx>(p.pad_begin[2] / p.stride[2]),
                                                static_cast<Idx>(p.pad_begin[2] % p.stride[2]),
                                                static_cast<const T*>(b.dy),
                                                b.indices,
                                                static_cast<T*>(b.dx)};
        ex.template for_each<Idx>(p.in_elems() / V, item);
      };
      if (packed) run.template operator()<VW>();
      else run.template operator()<1>();
    });
  }
};

}  // namespace pg
