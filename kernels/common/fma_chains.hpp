// The FP32 FMA ceiling the conv benchmark compares every variant with: each work item runs
// kFmaChains independent chains of fused multiply-adds, enough independent work per thread to
// hide the FMA latency at full occupancy, and writes one sum so the compiler keeps every chain.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common/exec.hpp"

namespace pg {

inline constexpr int kFmaChains = 8;

struct FmaChains {
  float* out;
  int rounds;

  PG_HD void operator()(int32_t i) const {
    float x[kFmaChains];
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) x[j] = static_cast<float>(i % 7) * 0.125f + static_cast<float>(j);
    // a < 1 and b small keep every chain bounded whatever the round count.
    const float a = 0.999f, b = 0.001f;
    // Unrolled so that the loop's own counter and branch are a few instructions per 128 FMAs:
    // rolled, they were 2 in every 10 and the ceiling read 55 TFLOP/s on an H100 (2026-11-23).
#pragma unroll 16
    for (int r = 0; r < rounds; ++r)
#pragma unroll
      for (int j = 0; j < kFmaChains; ++j) x[j] = fmaf(x[j], a, b);
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) sum += x[j];
    out[i] = sum;
  }
};

// Floating-point operations of one run: two per FMA.
inline double fma_chains_flops(int64_t items, int rounds) { return 2.0 * kFmaChains * rounds * static_cast<double>(items); }

}  // namespace pg
