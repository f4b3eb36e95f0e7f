// Rounding a double to a storage type, round-to-nearest-even, written out independently of
// kernels/common/numeric.hpp: the comparison bound for f16/bf16 results is built from these, so
// a rounding bug in the kernels' converters is not shared by the check that judges them.
#pragma once

#include "src/model/dtype.hpp"

namespace pg::ref {

// The value of type `t` nearest to v, ties to even, as a double: subnormals kept, a magnitude
// at or beyond the largest finite value plus half its spacing becomes infinity, NaN stays NaN.
double round_nearest_even(DType t, double v);

}  // namespace pg::ref
