// What the fixed and block items (max.gather.fixed.cf/.cl, max.gather.block.cf/.cl) share:
// windows of kernel K and stride S known at compile time, no dilation, the same on every
// non-trivial axis, int64 plane or global_row indices and int32 offsets. With K and S constant
// the windows that cover a run of positions form a box whose loads are unrolled, and the
// division by S is a multiply.
#pragma once

#include <cstdint>
#include <vector>

#include "src/model/domain.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"
#include "kernels/common/hip_compat.hpp"

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

// Windows whose span holds padded coordinate t = q + pad: o * S <= t <= o * S + K - 1.
template <int K, int S>
PG_HD int32_t first_window(int32_t t) {
  return t < K ? 0 : static_cast<int32_t>(static_cast<uint32_t>(t - K + S) / S);
}
template <int K, int S>
PG_HD int32_t last_window(int32_t t, int32_t out_len) {
  const int32_t o = static_cast<int32_t>(static_cast<uint32_t>(t) / S);
  return o < out_len - 1 ? o : out_len - 1;
}

// A stored index with a nonzero high word names nothing (encodings are < 2^31, int32 offsets):
// its relative offset becomes kNoPosition, above every position offset an item compares.
inline constexpr uint32_t kNoPosition = 0xffffffffu;

// The fixed items' windows, with the pads networks use (up to K - 1); a larger pad, dilation
// or a mixed window is max.gather.stored's.
inline std::vector<WindowShape> fixed_window_shapes() {
  return {WindowShape{3, 2, 0, 2}, WindowShape{2, 2, 0, 1}, WindowShape{3, 1, 0, 2}};
}

// What every fixed-window item (max.gather.fixed.*, max.gather.block.*) reads: listed windows,
// 16-byte packs of 2-byte or 4-byte elements accumulated in f32 (f64 is max.gather.stored's), and
// int64 plane or global_row indices compared by their low word. Each variant adds its layout,
// dims and reach.
inline Domain fixed_item_domain(std::vector<WindowShape> shapes, Layout layout) {
  Domain d;
  d.windows = WindowRule::listed;
  d.shapes = std::move(shapes);
  d.layouts = {layout};
  d.dtypes = {DType::f16, DType::bf16, DType::f32};
  d.index_formats = {IndexFormat::plane, IndexFormat::global_row};
  d.index_types = {IndexType::i64};
  d.contiguous_packs = layout == Layout::channels_last;
  return d;
}

// Calls f.template operator()<K, S>() for p's window, one of fixed_window_shapes().
template <class F>
void with_fixed_window(const Problem& p, F&& f) {
  if (p.kernel[2] == 3 && p.stride[2] == 2) f.template operator()<3, 2>();
  else if (p.kernel[2] == 2 && p.stride[2] == 2) f.template operator()<2, 2>();
  else f.template operator()<3, 1>();
}

// The members every fixed and block item reads the same way: the buffers, the extents and
// padding per axis, the plane sizes and the index format. Each item adds its own dividers.
template <class T, class Item>
void set_fixed_item_frame(Item& item, const Problem& p, const BwdBuffers& b) {
  item.dy = static_cast<const T*>(b.dy);
  item.indices = static_cast<const int64_t*>(b.indices);
  item.dx = static_cast<T*>(b.dx);
  for (int a = 0; a < kAxes; ++a) {
    item.in[a] = static_cast<int32_t>(p.in[a]);
    item.out[a] = static_cast<int32_t>(p.out[a]);
    item.pb[a] = static_cast<int32_t>(p.pad_begin[a]);
  }
  item.in_plane = static_cast<int32_t>(p.in_plane());
  item.out_plane = static_cast<int32_t>(p.out_plane());
  item.global_row = p.index_format == IndexFormat::global_row;
}

}  // namespace pg
