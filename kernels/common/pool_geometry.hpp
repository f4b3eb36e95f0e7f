// Whether a pooling problem's tensor offsets fit int32: the common term of the pooling kernels'
// choice of 32-bit index arithmetic (avg_fits_int32 and max_fits_int32 add their own).
// Kernel-side only: reference/ has its own geometry.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "src/model/problem.hpp"

namespace pg {

// True when every offset the kernel computes fits int32 (fast index arithmetic).
inline bool fits_int32(const Problem& p) {
  const int64_t limit = int64_t{1} << 31;
  return p.in_elems() < limit && p.out_elems() < limit;
}

}  // namespace pg
