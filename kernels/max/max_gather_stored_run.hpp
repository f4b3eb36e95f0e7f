// max.gather.stored.run: max.gather.stored for channels-first problems with plane or
// global_row indices (any window, dtype and index width). A work item is a run of R = 16 bytes
// of consecutive dx elements along W: the run's covering windows along W overlap heavily (k3s2:
// 3 windows for 4 elements instead of 6, k3s1: 6 instead of 12), so each stored index is read
// fewer times, and dx leaves in one 16-byte store when W % R == 0 and dx is 16-byte aligned
// (element stores otherwise).
#pragma once

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

// A window picked element w0 + j exactly when its stored index is this run's first encoding
// plus j, and w0 + j is one of its taps.
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

struct MaxGatherStoredRun : MaxVariant<MaxGatherStoredRun> {
  static constexpr PoolTraits traits{
      .name = "max.gather.stored.run", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Runs are up to 8 elements: W several runs long with a short last one.
  static Domain domain() {
    Domain d;
    d.layouts = {Layout::channels_first};
    d.index_formats = {IndexFormat::plane, IndexFormat::global_row};
    d.index_types = {IndexType::i64, IndexType::i32};
    d.reach[0] = 4;
    d.reach[1] = 6;
    d.reach[2] = 20;
    d.max_channels = 3;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxGatherStoredRun>(p);
    dispatch_max<false>(p, width, {}, [&]<class T, class Idx, int A0, int>() {
      constexpr int R = vector_lanes<T>;
      const int64_t per_row = (p.in[2] + R - 1) / R;
      const MaxGatherStoredRunItem<T, Idx, A0, R> item{make_max_geom<Idx>(p, 1),
                                                       static_cast<const T*>(b.dy),
                                                       b.indices,
                                                       static_cast<T*>(b.dx),
                                                       Divider<Idx>(per_row),
                                                       p.in[2] % R == 0 && aligned16(b.dx)};
      ex.template for_each<Idx>(p.in_elems() / p.in[2] * per_row, item);
    });
  }
};

}  // namespace pg
