// .npy float arrays as the oracle's doubles and back (src/pool_run.cpp, src/conv_run.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "src/dtype.hpp"
#include "src/npy.hpp"

namespace pg {

// Every element of a float array, exactly, as a double.
std::vector<double> npy_values(const NpyArray& a);
// An array of dtype t and `shape` holding v rounded to t.
NpyArray npy_from_values(DType t, const std::vector<int64_t>& shape, const std::vector<double>& v);

}  // namespace pg
