// Index arithmetic every pooling kernel needs: element <-> (n, c, z, y, x) in either layout, and
// the output windows that cover an input position. Kernel-side only: reference/ has its own.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "src/model/problem.hpp"

namespace pg {

// A position in a 5-D tensor; s[0..2] are the spatial axes (D, H, W; leading ones are 0 for
// 1D/2D problems).
struct Coord {
  int64_t n, c, s[kAxes];
};

// Memory offset of (n, c, s) in a tensor of spatial size `len`.
PG_HD int64_t offset_of(const Problem& p, const int64_t* len, const Coord& q) {
  if (p.layout == Layout::channels_first)
    return (((q.n * p.c + q.c) * len[0] + q.s[0]) * len[1] + q.s[1]) * len[2] + q.s[2];
  return (((q.n * len[0] + q.s[0]) * len[1] + q.s[1]) * len[2] + q.s[2]) * p.c + q.c;
}

// Inverse of offset_of: the coordinates of memory element i.
PG_HD Coord coord_of(const Problem& p, const int64_t* len, int64_t i) {
  Coord q;
  if (p.layout == Layout::channels_first) {
    q.s[2] = i % len[2]; i /= len[2];
    q.s[1] = i % len[1]; i /= len[1];
    q.s[0] = i % len[0]; i /= len[0];
    q.c = i % p.c;
    q.n = i / p.c;
  } else {
    q.c = i % p.c; i /= p.c;
    q.s[2] = i % len[2]; i /= len[2];
    q.s[1] = i % len[1]; i /= len[1];
    q.s[0] = i % len[0];
    q.n = i / len[0];
  }
  return q;
}

// Offset of a spatial position inside its (n, c) plane, row-major: PyTorch's index.
PG_HD int64_t plane_offset(const int64_t* len, const int64_t* s) {
  return (s[0] * len[1] + s[1]) * len[2] + s[2];
}

// First input coordinate of output position o's window along axis a (may be in the padding).
PG_HD int64_t window_start(const Problem& p, int a, int64_t o) {
  return o * p.stride[a] - p.pad_begin[a];
}

// Output positions along axis a whose window span covers input position i: [lo, hi].
// A position in the span is a tap only when (i - start) is a multiple of the dilation.
PG_HD void covering_outputs(const Problem& p, int a, int64_t i, int64_t* lo, int64_t* hi) {
  const int64_t reach = p.dilation[a] * (p.kernel[a] - 1);
  const int64_t first = i + p.pad_begin[a] - reach;  // o * stride >= first
  int64_t l = first <= 0 ? 0 : (first + p.stride[a] - 1) / p.stride[a];
  int64_t h = (i + p.pad_begin[a]) / p.stride[a];
  if (h > p.out[a] - 1) h = p.out[a] - 1;
  *lo = l;
  *hi = h;
}

// True when every offset the kernel computes fits int32 (fast index arithmetic).
inline bool fits_int32(const Problem& p) {
  const int64_t limit = int64_t{1} << 31;
  return p.in_elems() < limit && p.out_elems() < limit;
}

}  // namespace pg
