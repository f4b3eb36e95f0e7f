// What every max-pool backward work item needs: the problem's geometry in the index width the
// launch picked, where a work item sits in a tensor, which windows cover an input position, and
// stored-index decoding. The semantics are those of reference/pool_reference.hpp (restated
// there, implemented independently here).
#pragma once

#include <cstdint>

#include "src/model/problem.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/common/pack.hpp"
#include "kernels/common/pool_geometry.hpp"

namespace pg {

// Idx is int32_t when max_fits_int32() holds, else int64_t. A work item covers `lanes`
// consecutive channels of one position (channels-last vector path) or one element.
template <class Idx>
struct MaxGeom {
  Idx in[kAxes], out[kAxes], k[kAxes], s[kAxes], d[kAxes], pb[kAxes], reach[kAxes];
  Divider<Idx> in_div[kAxes], out_div[kAxes], s_div[kAxes], d_div[kAxes], k_div[kAxes];
  Divider<Idx> groups_div;  // channels-last: channel groups of `lanes` per position
  Idx c, step, in_plane, out_plane, taps;
  bool channels_last;
  TieRule tie;
  NanRule nan;
  IndexFormat format;
  IndexType index_type;
};

template <class Idx>
MaxGeom<Idx> make_max_geom(const Problem& p, int lanes) {
  MaxGeom<Idx> g;
  for (int a = 0; a < kAxes; ++a) {
    g.in[a] = static_cast<Idx>(p.in[a]);
    g.out[a] = static_cast<Idx>(p.out[a]);
    g.k[a] = static_cast<Idx>(p.kernel[a]);
    g.s[a] = static_cast<Idx>(p.stride[a]);
    g.d[a] = static_cast<Idx>(p.dilation[a]);
    g.pb[a] = static_cast<Idx>(p.pad_begin[a]);
    g.reach[a] = static_cast<Idx>(p.dilation[a] * (p.kernel[a] - 1));
    g.in_div[a] = Divider<Idx>(p.in[a]);
    g.out_div[a] = Divider<Idx>(p.out[a]);
    g.s_div[a] = Divider<Idx>(p.stride[a]);
    g.d_div[a] = Divider<Idx>(p.dilation[a]);
    g.k_div[a] = Divider<Idx>(p.kernel[a]);
  }
  g.groups_div = Divider<Idx>(p.c / lanes);
  g.c = static_cast<Idx>(p.c);
  g.channels_last = p.layout == Layout::channels_last;
  g.step = g.channels_last ? g.c : 1;
  g.in_plane = static_cast<Idx>(p.in_plane());
  g.out_plane = static_cast<Idx>(p.out_plane());
  g.taps = static_cast<Idx>(p.taps());
  g.tie = p.tie;
  g.nan = p.nan;
  g.format = p.index_format;
  g.index_type = p.index_type;
  return g;
}

// fits_int32 bounds the offsets; window coordinates (o * stride - pad + tap * dilation) and the
// in-bounds tap arithmetic must fit as well, which huge dilation or padding can break.
inline bool max_fits_int32(const Problem& p) {
  if (!fits_int32(p) || p.taps() >= (int64_t{1} << 31)) return false;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t span = p.out[a] * p.stride[a] + p.pad_begin[a] + p.effective_kernel(a) + p.in[a];
    if (span >= (int64_t{1} << 31)) return false;
  }
  return true;
}

// A work item's place: spatial position, and the offsets of its (n, c) plane's origin in the
// input and output tensors (element at spatial position l: base + l * step).
template <class Idx>
struct Site {
  Idx q[kAxes];
  Idx lin;  // row-major position inside the plane
  Idx nc;   // n * C + c of the first lane
  Idx in_base, out_base;
};

// Work item e over a tensor of spatial size len. A0 is the first axis that is not trivially 1
// (1 for 1D/2D problems, so their work items skip the leading axis' arithmetic).
template <int A0, int V, class Idx>
PG_HD Site<Idx> locate(const MaxGeom<Idx>& g, Idx e, const Idx* len, const Divider<Idx>* div) {
  Site<Idx> st;
  Idx r = e, c0 = 0;
  if (g.channels_last) {
    const Idx rest = g.groups_div.div(r);
    c0 = (r - rest * static_cast<Idx>(g.groups_div.divisor)) * V;
    r = rest;
  }
  st.q[0] = 0;
  for (int a = kAxes - 1; a >= A0; --a) {
    const Idx rest = div[a].div(r);
    st.q[a] = r - rest * len[a];
    r = rest;
  }
  if (g.channels_last) {
    st.nc = r * g.c + c0;
    st.in_base = r * g.in_plane * g.c + c0;
    st.out_base = r * g.out_plane * g.c + c0;
  } else {
    st.nc = r;
    st.in_base = r * g.in_plane;
    st.out_base = r * g.out_plane;
  }
  st.lin = (st.q[0] * len[1] + st.q[1]) * len[2] + st.q[2];
  return st;
}

template <int A0, int V, class Idx>
PG_HD Site<Idx> locate_input(const MaxGeom<Idx>& g, Idx e) {
  return locate<A0, V>(g, e, g.in, g.in_div);
}

template <int A0, int V, class Idx>
PG_HD Site<Idx> locate_output(const MaxGeom<Idx>& g, Idx e) {
  return locate<A0, V>(g, e, g.out, g.out_div);
}

template <class Idx>
PG_HD Idx out_lin(const MaxGeom<Idx>& g, const Idx* o) {
  return (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];
}

template <class Idx>
PG_HD Idx in_lin(const MaxGeom<Idx>& g, const Idx* q) {
  return (q[0] * g.in[1] + q[1]) * g.in[2] + q[2];
}

// Output positions along axis a whose window span covers input coordinate q: [*lo, *hi],
// empty when *lo > *hi. Inside the span, tap_along() tells whether q is a tap.
template <class Idx>
PG_HD void covering(const MaxGeom<Idx>& g, int a, Idx q, Idx* lo, Idx* hi) {
  const Idx t = q + g.pb[a];
  const Idx h = g.s_div[a].div(t);
  *hi = h < g.out[a] - 1 ? h : g.out[a] - 1;
  const Idx first = t - g.reach[a];
  *lo = first <= 0 ? 0 : g.s_div[a].div(first + g.s[a] - 1);
}

// Tap number along axis a of input coordinate q inside window o's span, or -1 when q falls
// between two dilated taps.
template <class Idx>
PG_HD Idx tap_along(const MaxGeom<Idx>& g, int a, Idx q, Idx o) {
  const Idx t = q + g.pb[a] - o * g.s[a];
  if (g.d[a] == 1) return t;
  const Idx k = g.d_div[a].div(t);
  return k * g.d[a] == t ? k : -1;
}

// Calls f(o, j) for each window o along axis a of which input coordinate q is tap j, in
// ascending o. An undilated axis walks the covering span: every window there holds q. A dilated
// one walks q's possible taps from the last (ascending o), so that only the windows holding q
// are visited, k at most, instead of the span's reach / stride + 1 windows with a division
// each (TCN's k3 d4 s1: 3 instead of 9).
template <class Idx, class F>
PG_HD void for_each_window_of(const MaxGeom<Idx>& g, int a, Idx q, F&& f) {
  const Idx t = q + g.pb[a];
  if (g.d[a] == 1) {
    Idx lo, hi;
    covering(g, a, q, &lo, &hi);
    for (Idx o = lo; o <= hi; ++o) f(o, t - o * g.s[a]);
    return;
  }
  Idx j = g.d_div[a].div(t);
  if (j > g.k[a] - 1) j = g.k[a] - 1;
  for (Idx u = t - j * g.d[a]; j >= 0; --j, u += g.d[a]) {
    Idx o = u;
    if (g.s[a] != 1) {
      o = g.s_div[a].div(u);
      if (o * g.s[a] != u) continue;
    }
    if (o >= g.out[a]) return;  // o only grows from here
    f(o, j);
  }
}

// Start coordinate of window o along axis a and its taps inside the input: [*klo, *khi).
template <class Idx>
PG_HD Idx inside_taps(const MaxGeom<Idx>& g, int a, Idx o, Idx* klo, Idx* khi) {
  const Idx start = o * g.s[a] - g.pb[a];
  *klo = start >= 0 ? 0 : g.d_div[a].div(-start + g.d[a] - 1);
  const Idx room = g.in[a] - start;  // taps k with start + k * d < in
  const Idx fit = room <= 0 ? 0 : g.d_div[a].div(room - 1) + 1;
  *khi = fit < g.k[a] ? fit : g.k[a];
  return start;
}

// True when input coordinate q is one of window o's taps along axis a.
template <class Idx>
PG_HD bool is_tap(const MaxGeom<Idx>& g, int a, Idx q, Idx o) {
  const Idx t = q - (o * g.s[a] - g.pb[a]);
  if (t < 0 || t > g.reach[a]) return false;
  return g.d[a] == 1 || g.d_div[a].mod(t) == 0;
}

// Reads V stored indices starting at element `at`, widened to int64 (u8 255 stays 255: no
// window format value reaches it, so it never matches a tap).
template <int V, class Idx>
PG_HD void load_indices(const void* base, IndexType type, Idx at, int64_t* out) {
  if (type == IndexType::i64) {
    const Pack<int64_t, V> v = load_pack<V>(static_cast<const int64_t*>(base), at);
    for (int j = 0; j < V; ++j) out[j] = v.v[j];
  } else if (type == IndexType::i32) {
    const Pack<int32_t, V> v = load_pack<V>(static_cast<const int32_t*>(base), at);
    for (int j = 0; j < V; ++j) out[j] = v.v[j];
  } else {
    const Pack<uint8_t, V> v = load_pack<V>(static_cast<const uint8_t*>(base), at);
    for (int j = 0; j < V; ++j) out[j] = v.v[j];
  }
}

// The stored index a tap would carry: the inverse of decode_index for the plane-independent
// formats. Window format depends on the window, so gather computes it per window instead.
template <class Idx>
PG_HD int64_t encode_position(const MaxGeom<Idx>& g, const Idx* q, Idx lin, Idx nc) {
  const int64_t plane_origin = static_cast<int64_t>(nc) * g.in_plane;
  switch (g.format) {
    case IndexFormat::global_row:
      return plane_origin + lin;
    case IndexFormat::global_col:
      return plane_origin + q[0] + static_cast<int64_t>(q[1]) * g.in[0] + static_cast<int64_t>(q[2]) * g.in[0] * g.in[1];
    case IndexFormat::plane:
    case IndexFormat::window:
      break;
  }
  return lin;
}

// Whether stored index v of window o names one of that window's taps inside the input, and
// then its input coordinates in q. An index that does not is skipped, never followed out of
// bounds (ORT's MaxPoolGrad writes wherever a foreign index points). A0: the axes before it are
// trivially 1 (a 1D or 2D problem's D) and are not divided out or checked.
template <int A0 = 0, class Idx>
PG_HD bool decode_index_at(const MaxGeom<Idx>& g, int64_t v, Idx nc, const Idx* o, Idx* q) {
  for (int a = 0; a < A0; ++a) q[a] = 0;
  if (g.format == IndexFormat::window) {
    if (v < 0 || v >= g.taps) return false;
    Idx r = static_cast<Idx>(v);
    for (int a = kAxes - 1; a >= A0; --a) {
      const Idx rest = g.k_div[a].div(r);
      q[a] = o[a] * g.s[a] - g.pb[a] + (r - rest * g.k[a]) * g.d[a];
      if (q[a] < 0 || q[a] >= g.in[a]) return false;
      r = rest;
    }
    return true;
  }
  const int64_t local = g.format == IndexFormat::plane ? v : v - static_cast<int64_t>(nc) * g.in_plane;
  if (local < 0 || local >= g.in_plane) return false;
  Idx r = static_cast<Idx>(local);
  if (g.format == IndexFormat::global_col) {
    for (int a = A0; a < kAxes; ++a) {
      const Idx rest = g.in_div[a].div(r);
      q[a] = r - rest * g.in[a];
      r = rest;
    }
  } else {
    for (int a = kAxes - 1; a >= A0; --a) {
      const Idx rest = g.in_div[a].div(r);
      q[a] = r - rest * g.in[a];
      r = rest;
    }
  }
  for (int a = A0; a < kAxes; ++a)
    if (!is_tap(g, a, q[a], o[a])) return false;
  return true;
}

// The input-plane position (row-major) that stored index v of window o names, or -1 when it
// names none of the window's taps (decode_index_at).
template <class Idx>
PG_HD Idx decode_index(const MaxGeom<Idx>& g, int64_t v, Idx nc, const Idx* o) {
  Idx q[kAxes];
  return decode_index_at(g, v, nc, o, q) ? in_lin(g, q) : Idx{-1};
}

}  // namespace pg
