// The 16-byte copy kernel (kernels/common/copy.hpp) on any backend, for tests and the benchmark.
#pragma once

#include <cstddef>

#include "src/model/backend.hpp"

namespace pg {

void copy_kernel(Backend& b, void* dst, const void* src, size_t bytes);

}  // namespace pg
