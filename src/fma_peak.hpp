// The FP32 FMA rate a plain kernel reaches on a backend (kernels/common/fma_chains.hpp): the
// compute ceiling the conv benchmark reports each variant against, measured in the same run.
#pragma once

#include <cstdint>

#include "src/backend.hpp"

namespace pg {

// TFLOP/s (two per FMA), the best of `reps` timed runs over every multiprocessor.
double measure_fma_peak_tflops(Backend& b, int reps);

// Per backend translation unit: `items` work items of `rounds` rounds each into out[items].
void fma_chains_cpu(float* out, int64_t items, int rounds);
void fma_chains_gpu(float* out, int64_t items, int rounds);

}  // namespace pg
