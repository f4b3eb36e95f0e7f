// avg.gather.flat: the average pool backward of 2D and 3D channels-first problems with stride-1,
// undilated windows (Inception's k3s1p1 branch pools, the 3D k3s1p1 blocks), any kernel, padding,
// divisor rule and divisor_override, every dtype, as 16-byte packs of flat dx.
//
// Why: the gathers before it stage dy in shared memory: avg.gather.columns and .planes ran
// Inception's k3s1p1 rows at 64-67% of the copy ceiling on the H100 (2026-12-05), columns waiting
// on its barriers with no eligible warp 63% of the time and its blocks filling 1.11 waves; a
// 35 x 35 row is no whole number of packs, so avg.gather.box3 declines it. avg.gather.rows, a
// pack of flat dx reading the windows that cover it straight from dy (L1 holds what neighbouring
// packs share), runs Conformer's 1D k3s1p1 row at 89%. Here the same pack, for D and H too: a
// work item is V consecutive elements of flat dx, wherever rows begin.
//   - Where out == in on every axis ("same" padding, Inception's rows) and the W kernel K is 2, 3
//     or 5 (same()): a window row's V + K - 1 windows covering the pack are one run of flat dy at
//     a fixed offset from the pack, even where the pack crosses into the next row, so each run is
//     loaded once as the aligned 16-byte packs of dy that hold it, picked out at an offset that is
//     the same for every thread of the launch (no divergence), and summed column by column over
//     the window rows; lane v then adds its K taps whose window column lies in its own row. Every
//     pack of such a launch takes this path, those at a plane's edges too (masked columns): the
//     first GPU build sent those to part() and ran Inception's rows at 7-30% of copy (H100,
//     2026-12-06: a warp waited on its one edge thread's part(), 16.7 of 32 threads active).
//   - Elsewhere (part()): a pack is gathered once per row it holds, a window row's run loaded as
//     single values (its offset in a pack differs from thread to thread) and windows outside the
//     row masked to zero; other W kernels walk each lane's windows.
// Terms: where windows share elements, the raw dy summed and multiplied once by the reciprocal
// divisor where every window counts the same (an override, include_pad's k3s1p1), or each dy times
// its window's reciprocal (two roundings; inside the oracle's (terms + 2) u, as avg.gather.rows'
// and .columns' terms); where no element is a tap of two windows, dy / divisor, one rounding as
// every avg variant computes it: bitwise equal to avg.gather there. Each lane sums in a fixed
// order: deterministic, no atomics, each dx element written once.
// Measured (H100, 2026-12-06, bench/results/2026-12-06_h100_avg_flat.md): Inception's Mixed_5b and
// Mixed_6b at 54% and 52% of copy (avg.gather.planes and .columns: 67-69%), the exclude_pad rows
// at 10-16%; the best variant on a 1 x 3 row (75%). Issue-bound at about 108 thread instructions
// per element on Mixed_6b, against the 67 the SASS of ptxas 11.8 predicted. The same day
// (bench/results/2026-12-06_h100_flat_box.md): window rows that add raw as a box inside one loop
// and exclude_pad's edge column counts from a table, 1.09-1.41x on the one-divisor rows (Mixed_5b
// and 6b 59% of copy, 79 thread instructions per element) and 2.0-2.2x on the exclude_pad rows
// (31-36%); still behind the staged gathers on Inception's rows.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/avg/avg_geometry.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "src/model/variant.hpp"

namespace pg {

// Calls f(std::integral_constant<int, S>{}) for S = sh, 0 <= sh < V: a pick at a run-time offset,
// which each case makes at fixed register places (the last case takes what is left).
template <int V, int S = 0, class F>
PG_HD void flat_pick_at(int sh, F& f) {
  if constexpr (S + 1 == V) f(std::integral_constant<int, S>{});
  else if (sh == S) f(std::integral_constant<int, S>{});
  else flat_pick_at<V, S + 1>(sh, f);
}

// Launch bounds of the same() bodies (blocks of 256 threads a multiprocessor). Uncapped, ptxas
// 11.8 gave f32 k3 kFlatOne 52 registers (four blocks; five at 48 before the edge rows' branch)
// and kFlatDivisors 84 (three blocks).
inline constexpr int kFlatOneBlocks = 5;
inline constexpr int kFlatDivisorsBlocks = 4;

// same()'s W counts of the window columns at a row's ends: out == in leaves pad_begin columns
// before the whole-kernel ones and pad_end after, each below the kernel (at most 4).
inline constexpr int kFlatEdge = 8;

// same()'s reciprocal divisors by value: kernel volumes up to 5 x 5 x 5.
inline constexpr int kRecipTable = 126;

// What every body of a launch shares, whatever its pack and kernel: the launch fills it once.
template <class T, class Idx>
struct FlatFields {
  using A = accum_t<T>;
  AvgShape<Idx> g;
  Divider<Idx> by_w;  // flat dx element -> row of W
  A full_recip;       // 1 / the divisor of a window with every tap inside the input (kernel volume, or the override)
  A uniform_recip;    // where every window has one divisor (kFlatOne): 1 / it
  bool packed_dy;     // dy is 16-byte aligned and a whole number of packs: runs are loaded as packs
  Idx dy_elems;
  A recip_of[kRecipTable];  // same() where windows differ in divisor: 1 / d by divisor d (0 at 0)
  // same() where windows differ in divisor: per axis, the windows that count the whole kernel
  // along it, [full_lo, full_hi] (counts rise toward the middle of an axis, so they are one range;
  // empty when full_lo > full_hi), and the W counts of the window columns before it (edge_w[0][x]
  // for column x) and after it (edge_w[1][i] for column W - 1 - i).
  Idx full_lo[kAxes], full_hi[kAxes];
  Idx edge_w[2][kFlatEdge];
  const T* dy;
  T* dx;
};

// How a launch's packs are gathered: per row they hold (part()), or where out == in on every axis
// as flat runs (same()) with a divisor per window, or with one divisor for every window (raw
// sums, one multiply: a template case, so that its loop carries none of the per-window work).
enum FlatMode : int { kFlatParts, kFlatDivisors, kFlatOne };

template <class T, class Idx, int V, int K, bool kRecip, int kFlat>
struct AvgGatherFlatBody : FlatFields<T, Idx> {
  using F = FlatFields<T, Idx>;
  using typename F::A;
  using F::by_w;
  using F::dx;
  using F::dy;
  using F::dy_elems;
  using F::full_recip;
  using F::g;
  using F::packed_dy;
  using F::recip_of;
  using F::uniform_recip;
  // A pack's windows along one window row with an unrolled K (the walk keeps none).
  static constexpr int kRun = K > 0 ? V + K - 1 : 1;
  // Aligned packs of dy that hold a run of kRun values at any offset in its first.
  static constexpr int kLoads = (3 * V + K - 3) / V;

  // Window (oz, oy, ox)'s term for its dy value d; cz, cy: its counts along D and H.
  PG_HD A term(A d, Idx cz, Idx cy, Idx ox) const {
    const A divisor = g.template divisor<A>(cz, cy, g.window_count(2, ox));
    if constexpr (kRecip) return d * (A(1) / divisor);
    else return d / divisor;
  }

  // q[j] = dy[s + j] for s + j in [lo, hi] (within dy); other q[j] are left unspecified (0 or a
  // neighbour) for the caller to mask. As the aligned packs of dy that intersect [lo, hi] when dy
  // is packed, picked out at the run's offset in its first pack (same(): an offset every thread
  // shares); as single values otherwise.
  PG_HD void load_run(Idx s, Idx lo, Idx hi, A (&q)[kRun]) const {
    if (packed_dy) {
      const Idx at = s & ~Idx(V - 1);  // the pack holding s (floor, also below 0)
      Pack<T, V> c[kLoads] = {};
#pragma unroll
      for (int i = 0; i < kLoads; ++i) {
        const Idx base = at + i * V;
        if (base <= hi && base + V - 1 >= lo) c[i] = load_pack<V>(dy, base);
      }
      auto pick = [&](auto shift) {
        constexpr int S = decltype(shift)::value;
#pragma unroll
        for (int j = 0; j < kRun; ++j) q[j] = static_cast<A>(to_float(c[(S + j) / V].v[(S + j) % V]));
      };
      flat_pick_at<V>(static_cast<int>(s - at), pick);
    } else {
      load_scalars(s, lo, hi, q);
    }
  }

  // load_run's values one by one: where the run's offset in a pack differs from thread to thread
  // (part() where out != in), a pick at it would run each of its V cases one after another.
  PG_HD void load_scalars(Idx s, Idx lo, Idx hi, A (&q)[kRun]) const {
#pragma unroll
    for (int j = 0; j < kRun; ++j) q[j] = s + j >= lo && s + j <= hi ? static_cast<A>(to_float(dy[s + j])) : A(0);
  }

  // The run of kRun values at s for a pack all of whose runs lie inside dy (same()): the aligned
  // packs of dy that hold it, only those the run's offset in its first pack needs.
  PG_HD void load_run_inside(Idx s, A (&q)[kRun]) const {
    const Idx at = s & ~Idx(V - 1);
    const T* from = dy + at;
    auto pick = [&](auto shift) {
      constexpr int S = decltype(shift)::value;
      constexpr int kNeeded = (S + kRun - 1) / V + 1;
      Pack<T, V> c[kNeeded];
#pragma unroll
      for (int i = 0; i < kNeeded; ++i) c[i] = load_pack<V>(from, i * V);
#pragma unroll
      for (int j = 0; j < kRun; ++j) q[j] = static_cast<A>(to_float(c[(S + j) / V].v[(S + j) % V]));
    };
    flat_pick_at<V>(static_cast<int>(s & Idx(V - 1)), pick);
  }

  // same()'s run at s: without bounds where every run of the pack lies inside dy, else clamped to
  // dy (values outside it unspecified: the caller's window rows never reach them).
  PG_HD void load_run_any(Idx s, bool inside_dy, A (&q)[kRun]) const {
    if (inside_dy) load_run_inside(s, q);
    else load_run(s, s > 0 ? s : Idx{0}, s + kRun - 1 < dy_elems ? s + kRun - 1 : dy_elems - 1, q);
  }

  // Valid window-row offsets of an element in row y of plane z: dz in [dz_lo, dz_hi] and dr in
  // [dr_lo, dr_hi] keep (z + dz, y + dr) inside the output (= the input).
  struct WindowRows {
    Idx dz_lo, dz_hi, dr_lo, dr_hi;
    PG_HD bool holds(Idx dz, Idx dr) const { return dz >= dz_lo && dz <= dz_hi && dr >= dr_lo && dr <= dr_hi; }
  };
  PG_HD WindowRows window_rows(Idx z, Idx y) const {
    const AvgAxis<Idx>&ad = g.axis[0], &ah = g.axis[1];
    const Idx front = ad.pad_begin - (ad.kernel - 1), top = ah.pad_begin - (ah.kernel - 1);
    const Idx back = ad.in - 1 - z, bottom = ah.in - 1 - y;
    WindowRows r;
    r.dz_lo = front > -z ? front : -z;
    r.dz_hi = ad.pad_begin < back ? ad.pad_begin : back;
    r.dr_lo = top > -y ? top : -y;
    r.dr_hi = ah.pad_begin < bottom ? ah.pad_begin : bottom;
    return r;
  }

  // out == in on every axis (kFlatDivisors, kFlatOne; the launch also asks W >= kRun and, where
  // windows differ in divisor, a kernel volume below kRecipTable): window (z + dz, y + dr, x + dc)
  // of dx element e has its dy at e + (dz * H + dr) * W + dc, whichever row and plane e is in. So
  // a pack's kRun windows of a window row are one run of dy even where the pack crosses into the
  // next row or plane, at the same offset in a pack for every thread of the launch, and every
  // pack takes this path (no thread of a warp falls back to a costlier one). Run column j belongs
  // to the pack's first row (a) where its window column ox0 + j < W, else to the next row (b):
  // lane v's taps t use R[v + t] of its own row only. The runs are summed column by column over
  // the window rows valid for either row; where only one of the two rows has a window row (a
  // plane's first and last rows), the other row's columns of that run are masked.
  //   - kFlatOne: raw sums, times the one reciprocal per lane.
  //   - kFlatDivisors: window rows whose D and H counts are the full kernel's ("full" rows: all
  //     but a plane's edges) add raw dy to R, whose columns each have one divisor; the others add
  //     dy times its window's reciprocal to P. Lane terms are R[j] / divisor(j) + P[j].
  PG_HD void same(Idx e, A (&acc)[V]) const {
    const AvgAxis<Idx>&ad = g.axis[0], &ah = g.axis[1], &aw = g.axis[2];
    const Idx W = aw.in, H = ah.in;
    const Idx row = by_w.div(e), x0 = e - row * W;
    const Idx rest = g.by_in[1].div(row), y = row - rest * H;
    const Idx z = rest - g.by_in[0].div(rest) * ad.in;
    const Idx cut = W - x0;  // lanes cut .. V - 1 lie in the next row (b)
    const bool split = cut < V;
    // Row b: the next row of the plane, or the first of the next plane (of the next volume).
    Idx yb = y, zb = z;
    if (split) {
      yb = y + 1 == H ? Idx{0} : y + 1;
      zb = y + 1 < H ? z : z + 1 == ad.in ? Idx{0} : z + 1;
    }
    const WindowRows ra = window_rows(z, y), rb = window_rows(zb, yb);
    const Idx dz_lo = ra.dz_lo < rb.dz_lo ? ra.dz_lo : rb.dz_lo, dz_hi = ra.dz_hi > rb.dz_hi ? ra.dz_hi : rb.dz_hi;
    const Idx dr_lo = ra.dr_lo < rb.dr_lo ? ra.dr_lo : rb.dr_lo, dr_hi = ra.dr_hi > rb.dr_hi ? ra.dr_hi : rb.dr_hi;
    const Idx dc0 = aw.pad_begin - (K - 1), ox0 = x0 + dc0;  // window column of R[0] in row a
    const Idx jcut = W - ox0;                                  // run columns jcut .. belong to row b
    // Every run inside dy (all but a few packs at the tensor's ends), dy packed: loads without
    // bounds. An unaligned dy takes load_run's single values.
    const Idx first_s = e + (dz_lo * H + dr_lo) * W + dc0, last_s = e + (dz_hi * H + dr_hi) * W + dc0 + kRun - 1;
    const bool inside_dy = packed_dy && first_s >= 0 && (last_s | Idx(V - 1)) < dy_elems;
    // kFlatDivisors: the D x H count of a full window row.
    const Idx full = ad.kernel * ah.kernel;
    A R[kRun], P[kFlat == kFlatDivisors ? kRun : 1];
#pragma unroll
    for (int j = 0; j < kRun; ++j) R[j] = A(0);
#pragma unroll
    for (int j = 0; j < (kFlat == kFlatDivisors ? kRun : 1); ++j) P[j] = A(0);
    // The window rows (dz, dr) that both rows hold and, with a divisor per window, whose windows
    // count the whole kernel along D and H for both: a box, as each row's valid rows and full
    // rows are ranges. There the run adds raw to R, as one loop over the union; only a plane's
    // edge rows take the masked or divided adds. A separate loop for packs with no such edge
    // rows made a warp run both loops wherever one of its packs had one (H100, 2026-12-06: 21.6
    // of 32 threads active on Inception's Mixed_6b, 0.80x), where this branch holds a few
    // instructions of a row or two.
    Idx fz_lo = ra.dz_lo > rb.dz_lo ? ra.dz_lo : rb.dz_lo, fz_hi = ra.dz_hi < rb.dz_hi ? ra.dz_hi : rb.dz_hi;
    Idx fr_lo = ra.dr_lo > rb.dr_lo ? ra.dr_lo : rb.dr_lo, fr_hi = ra.dr_hi < rb.dr_hi ? ra.dr_hi : rb.dr_hi;
    if constexpr (kFlat == kFlatDivisors) {
      const Idx zm = z > zb ? z : zb, zn = z < zb ? z : zb, ym = y > yb ? y : yb, yn = y < yb ? y : yb;
      fz_lo = fz_lo > this->full_lo[0] - zn ? fz_lo : this->full_lo[0] - zn;
      fz_hi = fz_hi < this->full_hi[0] - zm ? fz_hi : this->full_hi[0] - zm;
      fr_lo = fr_lo > this->full_lo[1] - yn ? fr_lo : this->full_lo[1] - yn;
      fr_hi = fr_hi < this->full_hi[1] - ym ? fr_hi : this->full_hi[1] - ym;
    }
    for (Idx dz = dz_lo; dz <= dz_hi; ++dz) {
      const bool full_z = dz >= fz_lo && dz <= fz_hi;
      Idx s = e + (dz * H + dr_lo) * W + dc0;
      for (Idx dr = dr_lo; dr <= dr_hi; ++dr, s += W) {
        A q[kRun];
        load_run_any(s, inside_dy, q);
        if (full_z && dr >= fr_lo && dr <= fr_hi) {
#pragma unroll
          for (int j = 0; j < kRun; ++j) R[j] += q[j];
          continue;
        }
        const bool va = ra.holds(dz, dr), vb = rb.holds(dz, dr);
        if constexpr (kFlat == kFlatOne) {
#pragma unroll
          for (int j = 0; j < kRun; ++j)
            if (j < jcut ? va : vb) R[j] += q[j];
        } else {
          // The window row's D x H counts for row a's columns and row b's (0: no window row).
          const Idx czy_a = va ? g.window_count(0, z + dz) * g.window_count(1, y + dr) : Idx{0};
          const Idx czy_b = !split ? czy_a : vb ? g.window_count(0, zb + dz) * g.window_count(1, yb + dr) : Idx{0};
#pragma unroll
          for (int j = 0; j < kRun; ++j) {
            const Idx czy = j < jcut ? czy_a : czy_b;
            if (czy == full) R[j] += q[j];
            else if (czy != 0) P[j] += q[j] * recip_of[czy * column_count(ox0 + j, W)];
          }
        }
      }
    }
    // Lane v's tap t is R[v + t], its window column ox0 + v + t in its own row: [0, W) from row
    // a's start for lanes before cut, from row b's (W) for the rest.
    if constexpr (kFlat == kFlatDivisors) {
#pragma unroll
      for (int j = 0; j < kRun; ++j) R[j] = R[j] * recip_of[full * column_count(ox0 + j, W)] + P[j];
    }
    using U = std::make_unsigned_t<Idx>;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const Idx d = ox0 + v - (v < cut ? Idx{0} : W);
      A sum = A(0);
#pragma unroll
      for (int t = 0; t < K; ++t)
        if (static_cast<U>(d + t) < static_cast<U>(W)) sum += R[v + t];
      acc[v] = kFlat == kFlatOne ? sum * uniform_recip : sum;
    }
  }

  // The W count of run column ox (a window column of row a, or W past it one of row b); 0 for
  // one in neither row (no lane's tap). Edge columns come from the launch's table: window_count's
  // divisions for kRun columns cost about 480 instructions a pack (ptxas 11.8 SASS, f32 k3).
  PG_HD Idx column_count(Idx ox, Idx W) const {
    if (ox >= W) ox -= W;
    if (ox < 0 || ox >= W) return 0;
    if (ox < this->full_lo[2]) return this->edge_w[0][ox];
    if (ox > this->full_hi[2]) return this->edge_w[1][W - 1 - ox];
    return g.axis[2].kernel;
  }

  // The sums of lanes [v_lo, v_hi), whose elements lie in flat row `row` at x = x0 + v, into acc:
  // per window row (oz, oy) covering the row, the run of its windows that cover the pack.
  PG_HD void part(Idx row, Idx x0, int v_lo, int v_hi, A (&acc)[V]) const {
    const AvgAxis<Idx>&ad = g.axis[0], &ah = g.axis[1], &aw = g.axis[2];
    const Idx rest = g.by_in[1].div(row), y = row - rest * ah.in;
    const Idx nc = g.by_in[0].div(rest), z = rest - nc * ad.in;
    Idx oz_lo, oz_hi, oy_lo, oy_hi;
    ad.covering(z, &oz_lo, &oz_hi);
    ah.covering(y, &oy_lo, &oy_hi);
    // Window columns first .. first + V + kernel_w - 2 cover the pack's lanes: lane v's are
    // first + v .. first + v + kernel_w - 1, ascending.
    const Idx kw = K > 0 ? Idx{K} : aw.kernel;
    const Idx first = x0 + aw.pad_begin - (kw - 1);
    // Every window of the part inside the input: raw sums, one reciprocal multiply at the end.
    const bool inner = kRecip && ad.windows_inside(oz_lo, oz_hi) && ah.windows_inside(oy_lo, oy_hi) &&
                       aw.windows_inside(first, first + V + kw - 2);
    A sum[V];
#pragma unroll
    for (int v = 0; v < V; ++v) sum[v] = A(0);
    for (Idx oz = oz_lo; oz <= oz_hi; ++oz) {
      const Idx cz = g.window_count(0, oz);
      for (Idx oy = oy_lo; oy <= oy_hi; ++oy) {
        const Idx cy = g.window_count(1, oy);
        const Idx row_dy = g.out_point(nc, oz, oy, 0);
        if constexpr (K > 0) {
          // The row's windows first .. first + kRun - 1; those outside [0, out_w) add 0.
          const Idx out_w = aw.out, lo = first > 0 ? first : Idx{0};
          const Idx hi = first + kRun - 1 < out_w ? first + kRun - 1 : out_w - 1;
          A q[kRun];
          load_scalars(row_dy + first, row_dy + lo, row_dy + hi, q);
#pragma unroll
          for (int j = 0; j < kRun; ++j) {
            const bool valid = static_cast<uint32_t>(first + j) < static_cast<uint32_t>(out_w);
            q[j] = !valid ? A(0) : inner ? q[j] : term(q[j], cz, cy, first + j);
          }
#pragma unroll
          for (int v = 0; v < V; ++v)
#pragma unroll
            for (int t = 0; t < K; ++t) sum[v] += q[v + t];
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) {
            if (v < v_lo || v >= v_hi) continue;
            Idx lo, hi;
            aw.covering(x0 + v, &lo, &hi);
            for (Idx ox = lo; ox <= hi; ++ox) {
              const A d = static_cast<A>(to_float(dy[row_dy + ox]));
              sum[v] += inner ? d : term(d, cz, cy, ox);
            }
          }
        }
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v)
      if (v >= v_lo && v < v_hi) acc[v] = inner ? sum[v] * full_recip : sum[v];
  }

  PG_HD void operator()(Idx item) const {
    const Idx e = item * V, W = g.axis[2].in;
    A acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = A(0);
    if constexpr (kFlat != kFlatParts) {
      same(e, acc);
    } else {
      Idx row = by_w.div(e);
      Idx x0 = e - row * W;  // x of lane 0 in the part's row: below 0 in a pack's later parts
      // One part per row the pack holds; the pack ends inside the tensor (whole packs).
      for (int v_lo = 0;;) {
        const Idx end = W - x0;  // the first lane past this row
        const int v_hi = end < V ? static_cast<int>(end) : V;
        part(row, x0, v_lo, v_hi, acc);
        if (v_hi == V) break;
        v_lo = v_hi;
        ++row;
        x0 -= W;
      }
    }
    Pack<T, V> out;
#pragma unroll
    for (int v = 0; v < V; ++v) out.v[v] = from_accum<T>(acc[v]);
    store_pack<V>(dx, e, out);
  }
};

// FlatFields' whole-kernel ranges and W edge counts (see there); false when an edge has more
// columns than kFlatEdge (never where out == in).
template <class T, class Idx>
bool fill_flat_counts(const Problem& p, FlatFields<T, Idx>& f) {
  const AvgShape<int64_t> g = make_avg_shape<int64_t>(p);
  for (int a = 0; a < kAxes; ++a) {
    int64_t first = -1, last = -2;
    for (int64_t o = 0; o < p.out[a]; ++o)
      if (g.window_count(a, o) == p.kernel[a]) {
        if (first < 0) first = o;
        last = o;
      }
    f.full_lo[a] = static_cast<Idx>(first < 0 ? 0 : first);
    f.full_hi[a] = static_cast<Idx>(first < 0 ? -1 : last);
  }
  const int64_t W = p.out[2], before = f.full_lo[2], after = W - 1 - f.full_hi[2];
  if (before > kFlatEdge || after > kFlatEdge) return false;
  for (int64_t i = 0; i < kFlatEdge; ++i) {
    f.edge_w[0][i] = static_cast<Idx>(i < before ? g.window_count(2, i) : 0);
    f.edge_w[1][i] = static_cast<Idx>(i < after ? g.window_count(2, W - 1 - i) : 0);
  }
  return true;
}

struct AvgGatherFlat : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "avg.gather.flat", .op = Op::avg, .inputs = Inputs::dy_only, .deterministic = true};
  // 2D and 3D channels-first, stride 1, undilated, any kernel and padding; rows up to 20 past
  // their minimum, so that packs cross rows, rows are shorter than a pack and a row spans several.
  static Domain domain() {
    Domain d;
    d.min_dims = 2;
    d.windows = WindowRule::unit_stride;
    d.dilation = false;
    d.layouts = {Layout::channels_first};
    d.reach[2] = 20;
    return d;
  }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<AvgGatherFlat>(p);
    with_avg_types(p, [&](auto tag, auto idx) {
      using T = decltype(tag);
      using Idx = decltype(idx);
      using A = accum_t<T>;
      constexpr int VW = kVecWidth<T>;
      const bool packed = flat_dx_packed<T, Idx>(p, b);
      const bool packed_dy = aligned16(b.dy) && p.out_elems() % VW == 0;
      const bool recip = undilated_windows_overlap(p);
      // One divisor for every window: an override, or counts that never differ.
      double divisor = p.has_divisor_override ? static_cast<double>(p.divisor_override) : 1.0;
      const bool uniform = recip && (p.has_divisor_override || avg_uniform_divisor(p, &divisor));
      const A full_recip =
          A(1) / (p.has_divisor_override ? static_cast<A>(p.divisor_override) : static_cast<A>(p.taps()));
      FlatFields<T, Idx> fields{make_avg_shape<Idx>(p),
                                Divider<Idx>(static_cast<Idx>(p.in[2])),
                                full_recip,
                                A(1) / static_cast<A>(divisor),
                                packed_dy,
                                static_cast<Idx>(p.out_elems()),
                                {},
                                {},
                                {},
                                {},
                                static_cast<const T*>(b.dy),
                                static_cast<T*>(b.dx)};
      for (int d = 1; d < kRecipTable; ++d) fields.recip_of[d] = A(1) / static_cast<A>(d);
      // Only the per-window divisors read the ranges and tables (a loop over each axis's windows).
      const bool counted = !uniform && fill_flat_counts(p, fields);
      const auto run = [&]<int V, int K, bool kRecip, int kFlat>() {
        constexpr int kMinBlocks = kFlat == kFlatDivisors ? kFlatDivisorsBlocks
                                   : kFlat == kFlatOne    ? kFlatOneBlocks
                                                          : kNoLaunchBounds;
        ex.template for_each<Idx, kMinBlocks>(p.in_elems() / V, AvgGatherFlatBody<T, Idx, V, K, kRecip, kFlat>{fields});
      };
      if (!packed) {
        if (recip) run.template operator()<1, 0, true, kFlatParts>();
        else run.template operator()<1, 0, false, kFlatParts>();
        return;
      }
      // out == in on every axis, a run fits two rows, and the table holds every divisor: same().
      const bool same = p.out[0] == p.in[0] && p.out[1] == p.in[1] && p.out[2] == p.in[2] &&
                        (uniform || (p.taps() < kRecipTable && counted));
      with_unrolled_w_kernel(p, [&](auto kernel) {
        constexpr int K = decltype(kernel)::value;
        if constexpr (K > 0) {
          if (recip && same && p.in[2] >= VW + K - 1) {
            if (uniform) return run.template operator()<VW, K, true, kFlatOne>();
            return run.template operator()<VW, K, true, kFlatDivisors>();
          }
        }
        if (recip) run.template operator()<VW, K, true, kFlatParts>();
        else run.template operator()<VW, K, false, kFlatParts>();
      });
    });
  }
};

}  // namespace pg
