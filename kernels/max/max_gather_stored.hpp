// max.gather.stored: one work item per input element visits only the windows whose span
// covers it and sums dy where the window's stored index names it. Deterministic (fixed
// summation order), no atomics, and every dx element is written exactly once, so there is no
// zeroing pass. PyTorch's 2D CUDA max-pool backward works this way.
#pragma once

#include "src/registry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_gather_fixed.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

template <class T, class Idx, int A0, int V>
struct MaxGatherStoredItem {
  MaxGeom<Idx> g;
  const T* dy;
  const void* indices;
  T* dx;

  PG_HD void operator()(Idx e) const {
    const Site<Idx> st = locate_input<A0, V>(g, e);
    Idx lo[kAxes] = {0, 0, 0}, hi[kAxes] = {0, 0, 0};
    for (int a = A0; a < kAxes; ++a) covering(g, a, st.q[a], &lo[a], &hi[a]);
    // The index a window stores when it picked this element; window format varies per window.
    int64_t mine[V];
#pragma unroll
    for (int j = 0; j < V; ++j) mine[j] = encode_position(g, st.q, st.lin, st.nc + j);
    const bool per_window = g.format == IndexFormat::window;
    accum_t<T> acc[V] = {};
    for (Idx o0 = lo[0]; o0 <= hi[0]; ++o0) {
      const Idx t0 = A0 == 0 ? tap_along(g, 0, st.q[0], o0) : 0;
      if (t0 < 0) continue;
      for (Idx o1 = lo[1]; o1 <= hi[1]; ++o1) {
        const Idx t1 = tap_along(g, 1, st.q[1], o1);
        if (t1 < 0) continue;
        const Idx row = (o0 * g.out[1] + o1) * g.out[2];
        for (Idx o2 = lo[2]; o2 <= hi[2]; ++o2) {
          const Idx t2 = tap_along(g, 2, st.q[2], o2);
          if (t2 < 0) continue;
          const Idx at = st.out_base + (row + o2) * g.step;
          int64_t stored[V];
          load_indices<V>(indices, g.index_type, at, stored);
          const int64_t tap = (t0 * g.k[1] + t1) * g.k[2] + t2;
          bool match[V], any = false;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            match[j] = stored[j] == (per_window ? tap : mine[j]);
            any = any || match[j];
          }
          if (!any) continue;
          const Pack<T, V> grad = load_pack<V>(dy, at);
#pragma unroll
          for (int j = 0; j < V; ++j)
            if (match[j]) acc[j] += to_float(grad.v[j]);
        }
      }
    }
    Pack<T, V> out;
#pragma unroll
    for (int j = 0; j < V; ++j) out.v[j] = from_accum<T>(acc[j]);
    store_pack<V>(dx, st.in_base + st.lin * g.step, out);
  }
};

// Channels-first, plane or global_row indices: a work item is a run of R consecutive dx
// elements along W. The run's covering windows along W overlap heavily (k3s2: 3 windows for 4
// elements instead of 6, k3s1: 6 instead of 12), so each stored index is read fewer times, and
// dx leaves in one 16-byte store. A window picked element w0 + j exactly when its stored index
// is this run's first encoding plus j, and w0 + j is one of its taps.
template <class T, class Idx, int A0, int R>
struct MaxGatherStoredRunItem {
  MaxGeom<Idx> g;
  const T* dy;
  const void* indices;
  T* dx;
  Divider<Idx> runs_div;  // runs per row: ceil(W / R)
  bool packed_store;      // W % R == 0 and dx 16-byte aligned

  PG_HD void operator()(Idx e) const {
    const Idx row = runs_div.div(e);
    const Idx w0 = (e - row * static_cast<Idx>(runs_div.divisor)) * R;
    Idx q[kAxes] = {0, 0, w0}, r = row;
    for (int a = kAxes - 2; a >= A0; --a) {
      const Idx rest = g.in_div[a].div(r);
      q[a] = r - rest * g.in[a];
      r = rest;
    }
    const Idx nc = r;
    const Idx w_last = w0 + R - 1 < g.in[2] - 1 ? w0 + R - 1 : g.in[2] - 1;
    Idx lo[kAxes] = {0, 0, 0}, hi[kAxes] = {0, 0, 0}, unused;
    for (int a = A0; a < 2; ++a) covering(g, a, q[a], &lo[a], &hi[a]);
    covering(g, 2, w0, &lo[2], &unused);
    covering(g, 2, w_last, &unused, &hi[2]);
    const Idx lin0 = in_lin(g, q);
    const int64_t first = (g.format == IndexFormat::plane ? 0 : static_cast<int64_t>(nc) * g.in_plane) + lin0;
    const Idx out_base = nc * g.out_plane;
    accum_t<T> acc[R] = {};
    for (Idx o0 = lo[0]; o0 <= hi[0]; ++o0) {
      if (A0 == 0 && tap_along(g, 0, q[0], o0) < 0) continue;
      for (Idx o1 = lo[1]; o1 <= hi[1]; ++o1) {
        if (tap_along(g, 1, q[1], o1) < 0) continue;
        const Idx row_at = out_base + (o0 * g.out[1] + o1) * g.out[2];
        for (Idx o2 = lo[2]; o2 <= hi[2]; ++o2) {
          int64_t stored;
          load_indices<1>(indices, g.index_type, row_at + o2, &stored);
          const int64_t j = stored - first;
          if (j < 0 || j >= R || w0 + j >= g.in[2] || !is_tap(g, 2, w0 + static_cast<Idx>(j), o2)) continue;
          const accum_t<T> grad = to_float(dy[row_at + o2]);
#pragma unroll
          for (int k = 0; k < R; ++k)
            if (k == j) acc[k] += grad;
        }
      }
    }
    const Idx at = nc * g.in_plane + lin0;
    if (packed_store) {
      Pack<T, R> out;
#pragma unroll
      for (int k = 0; k < R; ++k) out.v[k] = from_accum<T>(acc[k]);
      store_pack<R>(dx, at, out);
    } else {
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (w0 + k < g.in[2]) dx[at + k] = from_accum<T>(acc[k]);
    }
  }
};

struct MaxGatherStored {
  static constexpr const char* name = "max.gather.stored";
  static constexpr Op op = Op::max;
  static constexpr Inputs inputs = Inputs::dy_and_indices;
  static constexpr bool deterministic = true;
  static constexpr bool gpu_only = false;
  static Domain domain() { return {}; }

  static Support supports(const Problem&) { return Support::yes(); }
  static size_t workspace_bytes(const Problem&) { return 0; }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    launch_with(ex, p, b, IndexWidth::fit);
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    if (launch_max_gather_fixed(ex, p, b, width)) return;
    const bool runs = p.layout == Layout::channels_first &&
                      (p.index_format == IndexFormat::plane || p.index_format == IndexFormat::global_row);
    dispatch_max(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const MaxGeom<Idx> g = make_max_geom<Idx>(p, V);
      const T* dy = static_cast<const T*>(b.dy);
      T* dx = static_cast<T*>(b.dx);
      if constexpr (V == 1) {
        if (runs) {
          constexpr int R = vector_lanes<T>;
          const int64_t per_row = (p.in[2] + R - 1) / R;
          const MaxGatherStoredRunItem<T, Idx, A0, R> item{g, dy, b.indices, dx, Divider<Idx>(per_row),
                                                           p.in[2] % R == 0 && aligned16(dx)};
          ex.template for_each<Idx>(p.in_elems() / p.in[2] * per_row, item);
          return;
        }
      }
      ex.template for_each<Idx>(p.in_elems() / V, MaxGatherStoredItem<T, Idx, A0, V>{g, dy, b.indices, dx});
    });
  }
};

}  // namespace pg
