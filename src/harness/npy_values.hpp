// .npy float arrays as the oracle's doubles and back (src/harness/pool_run.cpp, src/harness/conv_run.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "src/model/dtype.hpp"
#include "src/harness/npy.hpp"

namespace pg {

// Every element of a float array, exactly, as a double.
std::vector<double> npy_values(const NpyArray& a);
// An array of dtype t and `shape` holding v rounded to t.
NpyArray npy_from_values(DType t, const std::vector<int64_t>& shape, const std::vector<double>& v);

}  // namespace pg
