// What an output-centric max variant reads, and where it finds each window's argmax: dy and
// the stored indices (max.*.stored: decoded per lane, -1 for an index that names no tap of the
// window), or x and dy (max.*.recompute: the maximum recomputed under the tie and NaN rules,
// max_argmax.hpp). A body is written once over this choice and registered under both names.
// The pointers keep the order the separate stored and recompute bodies had, so the kernels'
// parameters, and their code, are what they were before the fold.
//
// The direct-store variants match a window's cell positions against each lane's winner by key.
// Decoded and recomputed winners are row-major positions in the plane (PlaneKeys). Stored
// indices of a channels-last pack of lanes are instead matched as they are (TapKeys): a stored
// index is an affine function of the position it names, or of its tap number, so comparing it
// with the cell's few taps costs a multiply-add per tap, shared by the lanes, and no division per
// lane. H200, 2026-12-02 (bench/results/2026-12-02_h200_direct_keys.md): the decode was ~35
// thread instructions per dx element on vgg16 pool1 (32,64,224,224) k2s2 CL f16 (ncu), the issue
// bound of a row that moves 4.5 bytes an element; matched by key, 0.156 -> 0.114 ms. A lane alone
// (V = 1: channels-first) decodes once and compares positions, which costs it less than a key per
// tap (0.65-0.85x when it took the keys).
#pragma once

#include <type_traits>

#include "src/model/variant.hpp"
#include "kernels/max/max_argmax.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

enum class ArgmaxFrom { stored, recompute };

// What a max variant of each source reads besides dy, and that buffer (dispatch_max checks its
// alignment with the others').
template <ArgmaxFrom S>
inline constexpr Inputs kArgmaxInputs = S == ArgmaxFrom::stored ? Inputs::dy_and_indices : Inputs::dy_and_x;

template <ArgmaxFrom S>
const void* argmax_buffer(const BwdBuffers& b) {
  return S == ArgmaxFrom::stored ? b.indices : b.x;
}

template <ArgmaxFrom S, class T, class Idx>
struct MaxReads;

// A cell position's key, formed per axis (write_cell): `along` says whether coordinate q is a
// tap of window o on axis a (positions that are not are never matched) and adds that axis' part
// of the key. A lane's winner key is the key of the position its window's maximum is at, or -1,
// which no key is.

// Keys that are row-major positions in the plane: recomputed winners, decoded stored indices.
// Every cell position is compared: a winner is always a tap.
struct PlaneKeys {
  template <class Idx>
  PG_HD bool along(const MaxGeom<Idx>& g, int a, Idx q, Idx, Idx* part) const {
    *part = a == 0 ? q * g.in[1] * g.in[2] : a == 1 ? q * g.in[2] : q;
    return true;
  }
};

// Keys that are stored indices as they are: sum over axes of coef[a] * u[a], where u[a] is the
// coordinate q[a] or, when by_tap, its tap number along a in the window. Only taps are compared:
// a stored index naming a cell position that is no tap of the window (a gap, a dilation hole)
// matches nothing, as decode_index refuses it.
template <class Idx>
struct TapKeys {
  Idx coef[kAxes];
  bool by_tap;

  PG_HD bool along(const MaxGeom<Idx>& g, int a, Idx q, Idx o, Idx* part) const {
    const Idx t = q - (o * g.s[a] - g.pb[a]);
    if (t < 0 || t > g.reach[a]) return false;
    Idx u = q;
    if (g.d[a] != 1) {
      const Idx k = g.d_div[a].div(t);
      if (k * g.d[a] != t) return false;
      if (by_tap) u = k;
    } else if (by_tap) {
      u = t;
    }
    *part = coef[a] * u;
    return true;
  }
};

template <class T, class Idx>
struct MaxReads<ArgmaxFrom::stored, T, Idx> {
  const T* dy;
  const void* indices;

  static MaxReads from(const BwdBuffers& b) { return {static_cast<const T*>(b.dy), b.indices}; }

  template <int V>
  using Keys = std::conditional_t<(V > 1), TapKeys<Idx>, PlaneKeys>;

  // The keys stored indices carry, per format (encode_position's maps as coefficients):
  // row-major or column-major positions in the plane, or tap numbers (row-major over the kernel).
  template <int V>
  static Keys<V> keys(const MaxGeom<Idx>& g) {
    if constexpr (V == 1) {
      return {};
    } else {
      switch (g.format) {
        case IndexFormat::global_col:
          return {{1, g.in[0], g.in[0] * g.in[1]}, false};
        case IndexFormat::window:
          return {{g.k[1] * g.k[2], g.k[2], 1}, true};
        case IndexFormat::plane:
        case IndexFormat::global_row:
          break;
      }
      return {{g.in[1] * g.in[2], g.in[2], 1}, false};
    }
  }

  // Per lane, the key of Keys<V> its window's maximum is at, and the window's dy. A pack of
  // lanes keeps each stored index as it is (-1 outside the format's range: no position of the
  // plane, no tap of the kernel); whether it names a tap of the window inside the input is left
  // to the cell, which compares its taps only.
  template <int A0, int V>
  PG_HD Pack<T, V> keys_and_grad(const MaxGeom<Idx>& g, const Site<Idx>& st, Idx* key) const {
    if constexpr (V == 1) return winners_and_grad<A0, V>(g, st, key);
    const Idx at = st.out_base + st.lin * g.step;
    int64_t stored[V];
    load_indices<V>(indices, g.index_type, at, stored);
    const bool window = g.format == IndexFormat::window;
    const bool global = g.format == IndexFormat::global_row || g.format == IndexFormat::global_col;
    const int64_t range = window ? static_cast<int64_t>(g.taps) : static_cast<int64_t>(g.in_plane);
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const int64_t local = global ? stored[j] - static_cast<int64_t>(st.nc + j) * g.in_plane : stored[j];
      key[j] = local >= 0 && local < range ? static_cast<Idx>(local) : Idx{-1};
    }
    return load_pack<V>(dy, at);
  }

  // The input-plane positions of the maxima of the window at output site st (-1: none), and
  // its dy.
  template <int A0, int V>
  PG_HD Pack<T, V> winners_and_grad(const MaxGeom<Idx>& g, const Site<Idx>& st, Idx* winner) const {
    const Idx at = st.out_base + st.lin * g.step;
    int64_t stored[V];
    load_indices<V>(indices, g.index_type, at, stored);
#pragma unroll
    for (int j = 0; j < V; ++j) winner[j] = decode_index(g, stored[j], st.nc + j, st.q);
    return load_pack<V>(dy, at);
  }
};

template <class T, class Idx>
struct MaxReads<ArgmaxFrom::recompute, T, Idx> {
  const T* x;
  const T* dy;

  static MaxReads from(const BwdBuffers& b) { return {static_cast<const T*>(b.x), static_cast<const T*>(b.dy)}; }
  // Recomputed winners are row-major positions in the plane.
  template <int V>
  using Keys = PlaneKeys;
  template <int V>
  static Keys<V> keys(const MaxGeom<Idx>&) {
    return {};
  }
  template <int A0, int V>
  PG_HD Pack<T, V> keys_and_grad(const MaxGeom<Idx>& g, const Site<Idx>& st, Idx* key) const {
    return winners_and_grad<A0, V>(g, st, key);
  }
  template <int A0, int V>
  PG_HD Pack<T, V> winners_and_grad(const MaxGeom<Idx>& g, const Site<Idx>& st, Idx* winner) const {
    window_argmax<A0, V>(g, x, st.in_base, st.q, winner);
    return load_pack<V>(dy, st.out_base + st.lin * g.step);
  }
};

}  // namespace pg
