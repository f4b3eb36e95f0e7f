// max.gather.stored's fast path for the windows networks use: the same kernel K and stride S
// on every non-trivial axis, no dilation, int64 plane or global_row indices, int32 offsets.
// Channels-first: a work item is a run of R dx elements along W that leaves in one 16-byte
// store, like the generic run item, but with K and S known at compile time the windows that
// cover the run form a box of at most CH x CW windows (CH per row axis, CW along W). The box is
// unrolled, so all its loads can be in flight at once instead of one per iteration of
// runtime-bounded loops, the division by S is a multiply, and no index type or format is
// switched on per load.
#pragma once

#include <cstdint>

#include "kernels/common/numeric.hpp"
#include "src/problem.hpp"
#include "src/registry.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/common/pack.hpp"

namespace pg {

// Windows along one axis whose span meets n consecutive coordinates: at most this many.
template <int K, int S>
PG_HD constexpr int covering_count(int n) {
  return (n - 1 + K - 1) / S + 1;
}

// Signed division rounding down, at compile time.
constexpr int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The windows of kernel K and stride S that cover N consecutive coordinates whose first padded
// coordinate t (coordinate + pad_begin) is P modulo S. Relative to (t - P) / S they are kFirst
// .. kLast, so which of the N coordinates is a tap of which window is a compile-time fact: a
// window needs one compare per real tap instead of a range test per coordinate.
template <int K, int S, int N, int P>
struct WindowPhase {
  static_assert(P >= 0 && P < S, "P is a residue modulo S");
  static constexpr int kFirst = -floor_div(K - 1 - P, S), kLast = (P + N - 1) / S;
  static constexpr int count = kLast - kFirst + 1;
  // True when coordinate k of the N is a tap of window c of the count.
  static constexpr bool tap(int k, int c) {
    const int t = k + P - S * (kFirst + c);
    return t >= 0 && t < K;
  }
  // Window 0 of the count for the coordinates starting at padded coordinate t = P (mod S);
  // it may lie before the first window or past the last (callers check 0 <= o < out).
  PG_HD static int32_t first(int32_t t) {
    return static_cast<int32_t>(static_cast<uint32_t>(t - P) / S) + kFirst;
  }
};

// PH = pad_begin along W modulo S. Runs start at multiples of R (a multiple of S), so PH fixes
// where each window of the run's box starts relative to the run (AlongW).
template <class T, int A0, int K, int S, int R, int PH>
struct MaxGatherFixedItem {
  static_assert(R % S == 0, "runs must start in phase with the stride");
  using AlongW = WindowPhase<K, S, R, PH>;
  static constexpr int CW = AlongW::count;

  const T* dy;
  const int64_t* indices;
  T* dx;
  // A work item covers the run on RH consecutive rows: rows h and h + 1 share most of their
  // windows (k3s2: 2 box rows for 2 rows instead of 2 each), so loads and address arithmetic
  // are paid once for twice the outputs.
  static constexpr int RH = 2;
  Divider<int32_t> runs_div;    // runs per row: ceil(W / R)
  Divider<int32_t> groups_div;  // row groups per (n, c, d) slice: ceil(H / RH)
  Divider<int32_t> depth_div;   // D
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t in_plane, out_plane;
  bool global_row;    // stored indices count from the tensor's origin, not the plane's
  bool packed_store;  // W % R == 0 and dx 16-byte aligned

  // Windows whose span holds padded coordinate t = q + pad: o * S <= t <= o * S + K - 1.
  PG_HD static int32_t first_window(int32_t t) {
    return t < K ? 0 : static_cast<int32_t>(static_cast<uint32_t>(t - K + S) / S);
  }
  PG_HD static int32_t last_window(int32_t t, int32_t out_len) {
    const int32_t o = static_cast<int32_t>(static_cast<uint32_t>(t) / S);
    return o < out_len - 1 ? o : out_len - 1;
  }

  PG_HD void operator()(int32_t e) const {
    const int32_t group = runs_div.div(e);
    const int32_t w0 = (e - group * static_cast<int32_t>(runs_div.divisor)) * R;
    int32_t r = groups_div.div(group);
    const int32_t h0 = (group - r * static_cast<int32_t>(groups_div.divisor)) * RH;
    int32_t d = 0;
    if (A0 == 0) {
      const int32_t rest = depth_div.div(r);
      d = r - rest * in[0];
      r = rest;
    }
    const int32_t nc = r;
    const int32_t lo[2] = {A0 == 0 ? first_window(d + pb[0]) : 0, first_window(h0 + pb[1])};
    const int32_t hi[2] = {A0 == 0 ? last_window(d + pb[0], out[0]) : 0, last_window(h0 + RH - 1 + pb[1], out[1])};
    const int32_t base_w = AlongW::first(w0 + pb[2]);
    const int32_t lin0 = (d * in[1] + h0) * in[2] + w0;
    // Run element k's stored index: < 2^31 (int32 offsets), so a window's index names it exactly
    // when its high word is 0 and its low word matches. Elements past the row's end (k >=
    // run_len) may match too, but are never stored.
    const uint32_t first = static_cast<uint32_t>((global_row ? nc * in_plane : 0) + lin0);
    const int32_t run_len = in[2] - w0 < R ? in[2] - w0 : R;  // the last run of a row may be short
    const int32_t out_base = nc * out_plane;
    constexpr int CH = covering_count<K, S>(RH), CD = A0 == 0 ? covering_count<K, S>(1) : 1;
    accum_t<T> acc[RH][R] = {};
    // Every slot of the box loads from a clamped, always valid window and a slot outside the
    // box only drops its matches, so the loads carry no branch and all issue at once. D slices
    // run one after another to bound the registers the box holds.
#pragma unroll 1
    for (int i0 = 0; i0 < CD; ++i0) {
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1) {
        const bool row_ok = lo[0] + i0 <= hi[0] && lo[1] + i1 <= hi[1];
        const int32_t od = lo[0] + i0 < out[0] ? lo[0] + i0 : out[0] - 1;
        const int32_t oh = lo[1] + i1 < out[1] ? lo[1] + i1 : out[1] - 1;
        const int32_t row_at = out_base + (od * out[1] + oh) * out[2];
        bool row_tap[RH];  // input row h0 + rr is a tap of this box row
#pragma unroll
        for (int rr = 0; rr < RH; ++rr) {
          const int32_t t = h0 + rr + pb[1] - (lo[1] + i1) * S;
          row_tap[rr] = row_ok && t >= 0 && t < K;
        }
        bool ok[CW];
        uint32_t low[CW];
        accum_t<T> grad[CW];
#pragma unroll
        for (int c = 0; c < CW; ++c) {
          const int32_t ow = base_w + c;
          const int32_t at = row_at + (ow < 0 ? 0 : ow < out[2] ? ow : out[2] - 1);
          const int64_t stored = indices[at];
          grad[c] = to_float(dy[at]);
          ok[c] = ow >= 0 && ow < out[2] && static_cast<uint64_t>(stored) >> 32 == 0;
          low[c] = static_cast<uint32_t>(stored);
        }
#pragma unroll
        for (int rr = 0; rr < RH; ++rr)
#pragma unroll
          for (int k = 0; k < R; ++k)
#pragma unroll
            for (int c = 0; c < CW; ++c)
              if (AlongW::tap(k, c) && row_tap[rr] && ok[c] && low[c] == first + rr * in[2] + k) acc[rr][k] += grad[c];
      }
    }
    // Rows past the plane's end (odd H) match nothing real and are not stored.
#pragma unroll
    for (int rr = 0; rr < RH; ++rr) {
      if (h0 + rr >= in[1]) break;
      const int32_t at = nc * in_plane + lin0 + rr * in[2];
      if (packed_store) {
        Pack<T, R> v;
#pragma unroll
        for (int k = 0; k < R; ++k) v.v[k] = from_accum<T>(acc[rr][k]);
        store_pack<R>(dx, at, v);
      } else {
#pragma unroll
        for (int k = 0; k < R; ++k)
          if (k < run_len) dx[at + k] = from_accum<T>(acc[rr][k]);
      }
    }
  }
};

// Channels-last: a work item is V consecutive channels of one input position (16-byte dx
// store); each covering window's V indices are contiguous, so they arrive as 16-byte loads.
// The position is a tap of every window in the box (no dilation), so a window picked channel j
// exactly when its stored index is that channel's encoding of this position.
template <class T, int A0, int K, int S, int V>
struct MaxGatherFixedClItem {
  const T* dy;
  const int64_t* indices;
  T* dx;
  Divider<int32_t> groups_div;   // channel groups of V per position
  Divider<int32_t> in_div[kAxes];
  int32_t in[kAxes], out[kAxes], pb[kAxes];
  int32_t c, in_plane, out_plane;
  bool global_row;

  PG_HD void operator()(int32_t e) const {
    using Item = MaxGatherFixedItem<T, A0, K, S, V, 0>;
    const int32_t pos = groups_div.div(e);
    const int32_t c0 = (e - pos * static_cast<int32_t>(groups_div.divisor)) * V;
    int32_t q[kAxes] = {0, 0, 0}, r = pos;
    for (int a = kAxes - 1; a >= A0; --a) {
      const int32_t rest = in_div[a].div(r);
      q[a] = r - rest * in[a];
      r = rest;
    }
    const int32_t n = r;
    int32_t lo[kAxes] = {0, 0, 0}, hi[kAxes] = {0, 0, 0};
    for (int a = A0; a < kAxes; ++a) {
      lo[a] = Item::first_window(q[a] + pb[a]);
      hi[a] = Item::last_window(q[a] + pb[a], out[a]);
    }
    const int32_t lin = (q[0] * in[1] + q[1]) * in[2] + q[2];
    int64_t mine[V];
#pragma unroll
    for (int j = 0; j < V; ++j)
      mine[j] = (global_row ? static_cast<int64_t>(n * c + c0 + j) * in_plane : 0) + lin;
    const int32_t out_base = n * out_plane * c + c0;
    constexpr int CH = covering_count<K, S>(1), CD = A0 == 0 ? CH : 1;
    accum_t<T> acc[V] = {};
    // Unlike the channels-first item, windows outside the box are branched around: clamped
    // branch-free loads measured slower here (0.184-0.200 vs 0.169 ms on the 2D k3s2p1 CL row).
#pragma unroll
    for (int i0 = 0; i0 < CD; ++i0)
#pragma unroll
      for (int i1 = 0; i1 < CH; ++i1)
#pragma unroll
        for (int i2 = 0; i2 < CH; ++i2) {
          if (lo[0] + i0 > hi[0] || lo[1] + i1 > hi[1] || lo[2] + i2 > hi[2]) continue;
          const int32_t at = out_base + (((lo[0] + i0) * out[1] + lo[1] + i1) * out[2] + lo[2] + i2) * c;
          const Pack<int64_t, V> stored = load_pack<V>(indices, at);
          bool match[V], any = false;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            match[j] = stored.v[j] == mine[j];
            any = any || match[j];
          }
          // dy only where a channel matched (loading it for every window measured slower).
          if (!any) continue;
          const Pack<T, V> grad = load_pack<V>(dy, at);
#pragma unroll
          for (int j = 0; j < V; ++j)
            if (match[j]) acc[j] += to_float(grad.v[j]);
        }
    Pack<T, V> v;
#pragma unroll
    for (int j = 0; j < V; ++j) v.v[j] = from_accum<T>(acc[j]);
    store_pack<V>(dx, (n * in_plane + lin) * c + c0, v);
  }
};

// Launches the fast path when p has its shape; false leaves p to the generic path.
template <class Exec>
bool launch_max_gather_fixed(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
  if (p.index_type != IndexType::i64 || !uses_int32(p, width) ||
      (p.index_format != IndexFormat::plane && p.index_format != IndexFormat::global_row))
    return false;
  const int a0 = leading_axis_trivial(p) ? 1 : 0;
  for (int a = a0; a < kAxes; ++a)
    if (p.dilation[a] != 1 || p.kernel[a] != p.kernel[2] || p.stride[a] != p.stride[2]) return false;
  bool ran = false;
  const auto run = [&]<int K, int S>() {
    if (ran || p.kernel[2] != K || p.stride[2] != S) return;
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (sizeof(T) <= 4) {
        constexpr int R = vector_lanes<T>;
        const bool cl = p.layout == Layout::channels_last;
        if (cl && (p.c % R != 0 || !aligned16(b.dy) || !aligned16(b.indices) || !aligned16(b.dx))) return;
        const auto go_cl = [&]<int A0>() {
          MaxGatherFixedClItem<T, A0, K, S, R> item;
          item.dy = static_cast<const T*>(b.dy);
          item.indices = static_cast<const int64_t*>(b.indices);
          item.dx = static_cast<T*>(b.dx);
          item.groups_div = Divider<int32_t>(p.c / R);
          for (int a = 0; a < kAxes; ++a) {
            item.in_div[a] = Divider<int32_t>(p.in[a]);
            item.in[a] = static_cast<int32_t>(p.in[a]);
            item.out[a] = static_cast<int32_t>(p.out[a]);
            item.pb[a] = static_cast<int32_t>(p.pad_begin[a]);
          }
          item.c = static_cast<int32_t>(p.c);
          item.in_plane = static_cast<int32_t>(p.in_plane());
          item.out_plane = static_cast<int32_t>(p.out_plane());
          item.global_row = p.index_format == IndexFormat::global_row;
          ex.template for_each<int32_t>(p.in_elems() / R, item);
          ran = true;
        };
        const auto go = [&]<int A0, int PH>() {
          MaxGatherFixedItem<T, A0, K, S, R, PH> item;
          item.dy = static_cast<const T*>(b.dy);
          item.indices = static_cast<const int64_t*>(b.indices);
          item.dx = static_cast<T*>(b.dx);
          const int64_t per_row = (p.in[2] + R - 1) / R;
          constexpr int RH = MaxGatherFixedItem<T, A0, K, S, R, PH>::RH;
          const int64_t groups = (p.in[1] + RH - 1) / RH;
          item.runs_div = Divider<int32_t>(per_row);
          item.groups_div = Divider<int32_t>(groups);
          item.depth_div = Divider<int32_t>(p.in[0]);
          for (int a = 0; a < kAxes; ++a) {
            item.in[a] = static_cast<int32_t>(p.in[a]);
            item.out[a] = static_cast<int32_t>(p.out[a]);
            item.pb[a] = static_cast<int32_t>(p.pad_begin[a]);
          }
          item.in_plane = static_cast<int32_t>(p.in_plane());
          item.out_plane = static_cast<int32_t>(p.out_plane());
          item.global_row = p.index_format == IndexFormat::global_row;
          item.packed_store = p.in[2] % R == 0 && aligned16(b.dx);
          ex.template for_each<int32_t>(p.in_elems() / (p.in[1] * p.in[2]) * groups * per_row, item);
          ran = true;
        };
        if (cl && a0 == 1) go_cl.template operator()<1>();
        else if (cl) go_cl.template operator()<0>();
        else if (S == 2 && p.pad_begin[2] % 2 == 1 && a0 == 1) go.template operator()<1, S - 1>();
        else if (S == 2 && p.pad_begin[2] % 2 == 1) go.template operator()<0, S - 1>();
        else if (a0 == 1) go.template operator()<1, 0>();
        else go.template operator()<0, 0>();
      }
    });
  };
  run.template operator()<3, 2>();
  run.template operator()<2, 2>();
  run.template operator()<3, 1>();
  return ran;
}

}  // namespace pg
