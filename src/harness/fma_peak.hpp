// The FP32 FMA rate a plain kernel reaches on a backend (kernels/common/fma_chains.hpp): the
// compute ceiling the conv benchmark reports each variant against, measured in the same run.
#pragma once

#include <cstdint>

#include "src/model/backend.hpp"

namespace pg {

// TFLOP/s (two per FMA), the best of `reps` timed runs over every multiprocessor.
double measure_fma_peak_tflops(Backend& b, int reps);

}  // namespace pg
