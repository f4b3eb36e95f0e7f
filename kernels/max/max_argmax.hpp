// A window's maximum recomputed from x under the problem's tie and NaN rules, for the
// recompute variants (cuDNN's way: no stored indices, x re-read instead).
//
// Candidates are the window's taps inside the input in row-major order. The first starts as
// the maximum; a later value v replaces the current maximum m when
//   propagate: v is NaN, or v beats m              (a NaN wins, the last NaN wins: PyTorch)
//   ignore:    v is a number and m is NaN or v beats m   (an all-NaN window keeps its first tap)
// where "beats" is v > m under tie-first and v >= m under tie-last; nothing beats a NaN m.
#pragma once

#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class A>
PG_HD bool max_replaces(A v, A m, TieRule tie, NanRule nan) {
  const bool beats = tie == TieRule::first ? v > m : v >= m;
  return nan == NanRule::propagate ? (is_nan(v) || beats) : (!is_nan(v) && (is_nan(m) || beats));
}

// Row-major input-plane positions of window o's maximum for V consecutive channels whose
// plane origin in x is `base`; -1 for a window with no tap inside the input.
template <int A0, int V, class T, class Idx>
PG_HD void window_argmax(const MaxGeom<Idx>& g, const T* x, Idx base, const Idx* o, Idx* best) {
  using A = accum_t<T>;
  Idx klo[kAxes] = {0, 0, 0}, khi[kAxes] = {1, 1, 1}, start[kAxes] = {0, 0, 0};
  for (int a = A0; a < kAxes; ++a) start[a] = inside_taps(g, a, o[a], &klo[a], &khi[a]);
  A m[V];
  for (int j = 0; j < V; ++j) {
    best[j] = -1;
    m[j] = 0;
  }
  for (Idx k0 = klo[0]; k0 < khi[0]; ++k0) {
    const Idx row0 = (start[0] + k0 * g.d[0]) * g.in[1];
    for (Idx k1 = klo[1]; k1 < khi[1]; ++k1) {
      const Idx row1 = (row0 + start[1] + k1 * g.d[1]) * g.in[2];
      for (Idx k2 = klo[2]; k2 < khi[2]; ++k2) {
        const Idx lin = row1 + start[2] + k2 * g.d[2];
        const Pack<T, V> v = load_pack<V>(x, base + lin * g.step);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const A val = to_float(v.v[j]);
          if (best[j] < 0 || max_replaces(val, m[j], g.tie, g.nan)) {
            best[j] = lin;
            m[j] = val;
          }
        }
      }
    }
  }
}

}  // namespace pg
