// The GPU backend's instantiation of the copy kernel: nvcc for NVIDIA, hipcc -x hip for AMD.
// The variants are instantiated per op in kernels/max/ and kernels/avg/.
#include "src/copy.hpp"
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"

namespace pg {

void copy_kernel_gpu(void* dst, const void* src, size_t bytes) { copy_bytes(GpuExec{}, dst, src, bytes); }

}  // namespace pg
