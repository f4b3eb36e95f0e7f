// The GPU backend's instantiation of the copy and FMA-ceiling kernels: nvcc for NVIDIA, hipcc
// -x hip for AMD. The variants are instantiated per op in kernels/max/, kernels/avg/ and kernels/conv/.
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/fma_chains.hpp"
#include "kernels/exports.hpp"

namespace pg {

void copy_kernel_gpu(void* stream, void* dst, const void* src, size_t bytes) {
  copy_bytes(GpuExec::on_stream(stream), dst, src, bytes);
}

void fma_chains_gpu(void* stream, float* out, int64_t items, int rounds) {
  GpuExec::on_stream(stream).for_each<int32_t>(items, FmaChains{out, rounds});
}

}  // namespace pg
