// What the kernel units define for the layers above: per backend, the registry entries of each
// op's variants (kernels/<op>/instantiate_cpu.cpp, instantiate_gpu.cu), the 16-byte copy and the
// FMA chains behind the benchmark's ceilings (kernels/instantiate_*). The GPU lists carry name and
// launch_gpu only; a build without a GPU backend defines the GPU functions as empty or throwing
// (src/harness/gpu_none.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/model/conv_variant.hpp"
#include "src/model/variant.hpp"

namespace pg {

std::vector<Variant> cpu_max_variants();
// The CPU max variants that have an int64 path, each launching it on every problem (the tests
// reach the > 2^31-element arithmetic on small problems without instantiating the kernels again).
std::vector<Variant> cpu_max_variants_int64();
std::vector<Variant> cpu_avg_variants();
std::vector<Variant> gpu_max_variants();
std::vector<Variant> gpu_avg_variants();
std::vector<ConvVariant> cpu_conv_variants();
std::vector<ConvVariant> gpu_conv_variants();

void copy_kernel_cpu(void* dst, const void* src, size_t bytes);
void copy_kernel_gpu(void* stream, void* dst, const void* src, size_t bytes);  // stream: Backend::gpu_stream()
// `items` work items of `rounds` rounds each into out[items].
void fma_chains_cpu(float* out, int64_t items, int rounds);
void fma_chains_gpu(void* stream, float* out, int64_t items, int rounds);

}  // namespace pg
