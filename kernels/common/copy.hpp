// Device-to-device copy with 16-byte accesses: the bandwidth ceiling the benchmarks compare
// every variant against, and the first kernel proving the three-target path end to end.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/exec.hpp"

namespace pg {

struct alignas(16) Vec16 {
  uint32_t w[4];
};

// Work item i copies vectors i, i + quarter, i + 2 quarter, i + 3 quarter: four independent
// 16-byte loads in flight per thread, each instruction coalesced across the wave.
struct CopyVec16 {
  const Vec16* src;
  Vec16* dst;
  int64_t vectors;
  int64_t quarter;
  PG_HD void operator()(int64_t i) const {
    Vec16 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t j = i + k * quarter;
      if (j < vectors) v[k] = src[j];
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t j = i + k * quarter;
      if (j < vectors) dst[j] = v[k];
    }
  }
};

struct CopyTail {
  const unsigned char* src;
  unsigned char* dst;
  PG_HD void operator()(int64_t i) const { dst[i] = src[i]; }
};

// Copies `bytes` from src to dst (both 16-byte aligned, not overlapping).
template <class Exec>
void copy_bytes(const Exec& ex, void* dst, const void* src, size_t bytes) {
  const int64_t vectors = static_cast<int64_t>(bytes / sizeof(Vec16));
  const int64_t quarter = (vectors + 3) / 4;
  ex.for_each(quarter, CopyVec16{static_cast<const Vec16*>(src), static_cast<Vec16*>(dst), vectors, quarter});
  const int64_t done = vectors * static_cast<int64_t>(sizeof(Vec16));
  ex.for_each(static_cast<int64_t>(bytes) - done,
              CopyTail{static_cast<const unsigned char*>(src) + done, static_cast<unsigned char*>(dst) + done});
}

}  // namespace pg
