// The direct-store variants' unit of work when windows are disjoint (stride >= effective
// kernel on every axis): one work item per window writes every dx element of its cell, dy at
// the window's maximum and 0 elsewhere, so dx is written exactly once with no zeroing pass
// and no atomics.
//
// Along each axis, window o's cell runs from its own start to the next window's start; the
// first cell starts at 0 and the last runs to the end of the input, so inputs no window
// covers (gaps, the tail past the last window) get their 0 from a neighbouring cell.
#pragma once

#include "kernels/max/max_geometry.hpp"
#include "kernels/max/max_reads.hpp"

namespace pg {

template <class Idx>
PG_HD Idx clamp_to(Idx v, Idx hi) {
  return v < 0 ? 0 : v > hi ? hi : v;
}

template <class Idx>
PG_HD void cell_range(const MaxGeom<Idx>& g, int a, Idx o, Idx* begin, Idx* end) {
  const Idx start = o * g.s[a] - g.pb[a];
  *begin = o == 0 ? 0 : clamp_to(start, g.in[a]);
  *end = o == g.out[a] - 1 ? g.in[a] : clamp_to(start + g.s[a], g.in[a]);
}

// Writes window st.q's cell for V channels: grad at the position whose key (Keys, max_reads.hpp)
// is winner[j] (-1: none, the whole cell gets 0), zero elsewhere.
template <int A0, int V, class T, class Idx, class Keys>
PG_HD void write_cell(const MaxGeom<Idx>& g, const Site<Idx>& st, const Keys& keys, const Idx* winner,
                      const Pack<T, V>& grad, T* dx) {
  Idx begin[kAxes] = {0, 0, 0}, end[kAxes] = {1, 1, 1};
  for (int a = A0; a < kAxes; ++a) cell_range(g, a, st.q[a], &begin[a], &end[a]);
  // 0 + dy, as the summing variants compute it: a -0 gradient lands as +0 in every variant.
  Pack<T, V> routed;
#pragma unroll
  for (int j = 0; j < V; ++j) routed.v[j] = from_accum<T>(accum_t<T>(0) + to_float(grad.v[j]));
  const T zero = from_accum<T>(accum_t<T>(0));
  for (Idx q0 = begin[0]; q0 < end[0]; ++q0) {
    Idx k0 = 0;
    const bool tap0 = A0 > 0 || keys.along(g, 0, q0, st.q[0], &k0);
    for (Idx q1 = begin[1]; q1 < end[1]; ++q1) {
      Idx k1 = 0;
      const bool tap1 = keys.along(g, 1, q1, st.q[1], &k1) && tap0;
      const Idx row = (q0 * g.in[1] + q1) * g.in[2];
      for (Idx q2 = begin[2]; q2 < end[2]; ++q2) {
        Idx k2 = 0;
        const bool tap = keys.along(g, 2, q2, st.q[2], &k2) && tap1;
        const Idx at = k0 + k1 + k2;
        Pack<T, V> v;
#pragma unroll
        for (int j = 0; j < V; ++j) v.v[j] = tap && at == winner[j] ? routed.v[j] : zero;
        store_pack<V>(dx, st.in_base + (row + q2) * g.step, v);
      }
    }
  }
}

}  // namespace pg
