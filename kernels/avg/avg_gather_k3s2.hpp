// avg.gather.k3s2: the gather for kernel 3, stride 2, padding 1 on W, H and D (no dilation,
// channels-first), the common downsampling window. D and H may instead be flat (length 1,
// kernel 1), so 2D and 1D problems take it too. W is a whole number of 16-byte packs, dy and dx
// are 16-byte aligned (launch throws otherwise) and offsets fit int32.
//
// The generic gathers spend their time on index arithmetic per tap and per element. Here, with
// padding 1 and stride 2, window o covers positions 2o - 1 .. 2o + 1, so an even position is a
// tap of window i / 2 only and an odd one of windows (i - 1) / 2 and (i + 1) / 2: window j of a
// run serves positions 2j - 1, 2j, 2j + 1 of the run, known at compile time. A work item owns V
// consecutive dx along W (one pack store, x0 even) of R rows and walks a run of D planes: per
// window plane it reads the V / 2 + 1 dy of each of the R / 2 + 1 covering window rows once,
// scales them, and sums them along W and H in registers into that plane's contribution; dx
// plane 2oz is window plane oz's contribution and plane 2oz + 1 that plus window plane oz + 1's,
// which the item computes next. A dx element costs a few instructions and is written once. The
// loads of the next window plane are issued before the current pair of dx planes is computed
// and stored (software pipelining: the kernel waited on them).
//
// The divisor is the product of per-axis counts, and along each axis only the first and the
// last window can count differently from an interior one (the last on the ceil overhang), so the
// host computes the 27 reciprocals by class (first / interior / last per axis; divisor_override:
// all 1 / override). That needs interior windows inside the input: with padding 1 at the end, out
// is at most in / 2 + 1, so the last interior window's last tap 2 (out - 2) + 1 <= in - 1. (The
// body also takes padding 0 at the end, but a domain's pads are one range for both ends.) Each
// term is rounded twice (reciprocal and product), sums are at most 2+2+2 deep: inside the
// oracle's (terms + 2) u bound.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/variant_defaults.hpp"

namespace pg {

// R: dx rows per work item, which share R / 2 + 1 window rows. Even, so y0 is even.
template <class T, class Idx, int V, int R>
struct AvgK3S2Body {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> groups_per_row;  // W / V
  Divider<Idx> row_groups;      // ceil(H / R)
  Divider<Idx> chunks;          // runs of window planes per (n, c, row group)
  Idx chunk;                    // window planes per run
  // 1 / divisor by the window's class along D, H, W: 0 first, 1 interior, 2 last.
  A recip[3][3][3];
  const T* dy;
  T* dx;

  static PG_HD int window_class(Idx o, Idx out) { return o == 0 ? 0 : o == out - 1 ? 2 : 1; }

  // The dy of window plane oz that the item reads, as loaded: R / 2 + 1 window rows of V / 2 + 1
  // windows each; zero outside the output, and all zero when !wanted.
  struct WindowPlane {
    T t[R / 2 + 1][V / 2 + 1];
  };

  PG_HD void load(Idx outer, Idx oz, Idx y0, Idx x0, bool wanted, WindowPlane& w) const {
    const Idx OD = g.axis[0].out, OH = g.axis[1].out, OW = g.axis[2].out;
    const Idx ox0 = x0 / 2;
#pragma unroll
    for (int r = 0; r <= R / 2; ++r) {
      const Idx oy = y0 / 2 + r;
      const bool row_in = wanted && oz < OD && oy < OH;
      const Idx row = g.out_point(outer, oz, oy, 0);
#pragma unroll
      for (int j = 0; j <= V / 2; ++j) w.t[r][j] = row_in && ox0 + j < OW ? dy[row + ox0 + j] : T{};
    }
  }

  // sum[k] = window plane oz's contribution (loaded in w) to dx row y0 + k, columns x0 .. x0 + V - 1.
  PG_HD void reduce(const WindowPlane& w, Idx oz, Idx y0, Idx x0, A (*sum)[V]) const {
    const Idx OD = g.axis[0].out, OH = g.axis[1].out, OW = g.axis[2].out;
#pragma unroll
    for (int k = 0; k < R; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) sum[k][v] = A(0);
    // Constant indices only: a runtime index into the parameter array would copy it to memory.
    const int cz = window_class(oz, OD);
    A rz[3][3];
#pragma unroll
    for (int a = 0; a < 3; ++a)
#pragma unroll
      for (int b = 0; b < 3; ++b) rz[a][b] = cz == 0 ? recip[0][a][b] : cz == 2 ? recip[2][a][b] : recip[1][a][b];
    const Idx ox0 = x0 / 2;
    int cx[V / 2 + 1];
#pragma unroll
    for (int j = 0; j <= V / 2; ++j) cx[j] = window_class(ox0 + j, OW);
#pragma unroll
    for (int r = 0; r <= R / 2; ++r) {
      const int cy = window_class(y0 / 2 + r, OH);
      A ry[3];
#pragma unroll
      for (int b = 0; b < 3; ++b) ry[b] = cy == 0 ? rz[0][b] : cy == 2 ? rz[2][b] : rz[1][b];
      A t[V / 2 + 1];
#pragma unroll
      for (int j = 0; j <= V / 2; ++j) t[j] = static_cast<A>(to_float(w.t[r][j])) * (cx[j] == 0 ? ry[0] : cx[j] == 2 ? ry[2] : ry[1]);
      // Window column j serves dx columns 2j - 1, 2j, 2j + 1.
      A cols[V];
#pragma unroll
      for (int v = 0; v < V; ++v) cols[v] = v % 2 == 0 ? t[v / 2] : t[v / 2] + t[v / 2 + 1];
      // Window row r serves dx rows 2r - 1, 2r, 2r + 1.
#pragma unroll
      for (int k = 2 * r - 1; k <= 2 * r + 1; ++k)
        if (k >= 0 && k < R)
#pragma unroll
          for (int v = 0; v < V; ++v) sum[k][v] += cols[v];
    }
  }

  // dx plane z, rows y0 .. y0 + R - 1 (those inside), = a + b (b == nullptr: a alone).
  PG_HD void store(Idx outer, Idx z, Idx y0, Idx x0, const A (*a)[V], const A (*b)[V]) const {
    const Idx H = g.axis[1].in;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      Pack<T, V> out;
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(b ? a[k][v] + b[k][v] : a[k][v]);
      if (y0 + k < H) store_pack<V>(dx, g.in_point(outer, z, y0 + k, x0), out);
    }
  }

  PG_HD void operator()(Idx gi) const {
    const Idx x0 = groups_per_row.mod(gi) * V;
    Idx rest = groups_per_row.div(gi);
    const Idx y0 = row_groups.mod(rest) * R;
    rest = row_groups.div(rest);
    const Idx oz_begin = chunks.mod(rest) * chunk;
    const Idx outer = chunks.div(rest);
    const Idx D = g.axis[0].in;
    // Window plane oz writes dx planes 2oz and 2oz + 1 (a flat D: plane 0 only).
    const Idx pairs = (D + 1) / 2;
    const Idx oz_end = oz_begin + chunk < pairs ? oz_begin + chunk : pairs;
    A here[R][V], next[R][V];
    WindowPlane w;
    load(outer, oz_begin, y0, x0, true, w);
    reduce(w, oz_begin, y0, x0, here);
    load(outer, oz_begin + 1, y0, x0, true, w);
    for (Idx oz = oz_begin; oz < oz_end; ++oz) {
      // Software pipelining: window plane oz + 2 (needed by the next pair of dx planes) is
      // loaded before this pair is reduced and stored, so its loads are in flight meanwhile.
      WindowPlane after;
      load(outer, oz + 2, y0, x0, oz + 1 < oz_end, after);
      store(outer, 2 * oz, y0, x0, here, nullptr);
      if (2 * oz + 1 >= D) break;
      reduce(w, oz + 1, y0, x0, next);
      store(outer, 2 * oz + 1, y0, x0, here, next);
#pragma unroll
      for (int k = 0; k < R; ++k)
#pragma unroll
        for (int v = 0; v < V; ++v) here[k][v] = next[k][v];
      w = after;
    }
  }
};

struct AvgGatherK3S2 : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.k3s2", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // Sizes for the fuzz: D up to 12 (three runs of kMinRunPlanes window planes), H over a few
  // groups of kRows rows with a partial last one, W a few packs.
  static Domain domain() {
    return {.windows = WindowRule::listed,
            .shapes = {{.kernel = 3, .stride = 2, .pad_min = 1, .pad_max = 1}},
            .trivial_leading = 2,
            .layouts = {Layout::channels_first},
            .contiguous_packs = true,
            .reach = {11, 13, 32}};
  }
  static constexpr int kRows = 4;

  static Support supports(const Problem& p) {
    if (!undilated_windows_overlap(p))
      return Support::no("no position is a tap of two windows (one window along every axis)");
    if (!avg_fits_int32(p)) return Support::no("offsets beyond int32");
    return Support::yes();
  }

  // Work items: W / V * ceil(H / R) * N * C per run of window planes, D cut into runs until
  // there are kWantItems, several waves (plan_plane_runs; each run computes one window plane
  // twice, so runs are at least kMinRunPlanes long: the row below keeps its 8 runs of 8).
  //
  // H100, avgpool3d (2,32,128,128,128) k3s2p1 ceil f32 (2^16 items per run of window planes),
  // 2026-11-23. Before prefetching (64 registers, 4 blocks per SM) 2^17 items: 0.240 ms. With it
  // (the loop in AvgK3S2Body), 71 registers, 3 blocks per SM: 2^16 items 0.2323, 2^17 0.2404,
  // 2^18 0.2355, 2^19 0.2306; the 256-thread launch bound gives 64 registers: 2^17 0.2321 (the
  // same grid and occupancy as before prefetching, 3.5% faster). Capped to 5 or 6 blocks it
  // spills (0.313, 0.365). Whole waves matter: 2^17 items are 1.3 waves at 3 blocks per SM.
  static constexpr int64_t kWantItems = int64_t{1} << 19;
  static constexpr int64_t kMinRunPlanes = 2;  // twice the one window plane a run re-reads

  template <class T, class Idx, int V, class Exec>
  static void launch_k3s2(const Exec& ex, const Problem& p, const T* dy, T* dx) {
    constexpr int R = kRows;
    const int64_t pairs = (p.in[0] + 1) / 2;
    const int64_t row_groups = (p.in[1] + R - 1) / R;
    const int64_t per_run = p.n * p.c * row_groups * (p.in[2] / V);
    if (per_run == 0) return;  // no (n, c) planes: nothing to write
    const PlaneRuns runs = plan_plane_runs(pairs, per_run, kWantItems, kMinRunPlanes);
    AvgK3S2Body<T, Idx, V, R> body{make_avg_shape<Idx>(p), Divider<Idx>(static_cast<Idx>(p.in[2] / V)),
                                   Divider<Idx>(static_cast<Idx>(row_groups)), Divider<Idx>(static_cast<Idx>(runs.count)),
                                   static_cast<Idx>(runs.length), {}, dy, dx};
    // Per axis: the counts of the first, an interior and the last window.
    Idx count[kAxes][3];
    for (int a = 0; a < kAxes; ++a) {
      const AvgAxis<Idx>& ax = body.g.axis[a];
      count[a][0] = ax.count(body.g.rule, 0);
      count[a][1] = ax.out > 2 ? ax.count(body.g.rule, 1) : count[a][0];
      count[a][2] = ax.count(body.g.rule, ax.out - 1);
    }
    using A = accum_t<T>;
    for (int cz = 0; cz < 3; ++cz)
      for (int cy = 0; cy < 3; ++cy)
        for (int cx = 0; cx < 3; ++cx)
          body.recip[cz][cy][cx] = A(1) / body.g.template divisor<A>(count[0][cz], count[1][cy], count[2][cx]);
    ex.template for_each<Idx>(per_run * runs.count, body);
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_aligned16(traits.name, {{"dy", b.dy}, {"dx", b.dx}});  // 16-byte packs of both
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      launch_k3s2<T, int32_t, kVecWidth<T>>(ex, p, static_cast<const T*>(b.dy), static_cast<T*>(b.dx));
    });
  }
};

}  // namespace pg
