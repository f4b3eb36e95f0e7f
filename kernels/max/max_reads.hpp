// What an output-centric max variant reads, and where it finds each window's argmax: dy and
// the stored indices (max.*.stored: decoded per lane, -1 for an index that names no tap of the
// window), or x and dy (max.*.recompute: the maximum recomputed under the tie and NaN rules,
// max_argmax.hpp). A body is written once over this choice and registered under both names.
// The pointers keep the order the separate stored and recompute bodies had, so the kernels'
// parameters, and their code, are what they were before the fold.
#pragma once

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

template <class T, class Idx>
struct MaxReads<ArgmaxFrom::stored, T, Idx> {
  const T* dy;
  const void* indices;

  static MaxReads from(const BwdBuffers& b) { return {static_cast<const T*>(b.dy), b.indices}; }
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
  template <int A0, int V>
  PG_HD Pack<T, V> winners_and_grad(const MaxGeom<Idx>& g, const Site<Idx>& st, Idx* winner) const {
    window_argmax<A0, V>(g, x, st.in_base, st.q, winner);
    return load_pack<V>(dy, st.out_base + st.lin * g.step);
  }
};

}  // namespace pg
