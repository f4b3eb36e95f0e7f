// The 16-byte copy kernel (kernels/copy.hpp) on any backend, for tests and the benchmark.
#pragma once

#include <cstddef>

#include "src/backend.hpp"

namespace pg {

void copy_kernel(Backend& b, void* dst, const void* src, size_t bytes);

// Per backend translation unit.
void copy_kernel_cpu(void* dst, const void* src, size_t bytes);
void copy_kernel_gpu(void* dst, const void* src, size_t bytes);

}  // namespace pg
