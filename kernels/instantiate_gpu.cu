// The GPU backend's instantiation of every variant and of the copy kernel: nvcc for NVIDIA,
// hipcc -x hip for AMD, from this one file.
#include "src/copy.hpp"
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/variants.hpp"

namespace pg {

std::vector<Variant> gpu_variants() { return make_variants<GpuExec>(AllVariants{}); }

void copy_kernel_gpu(void* dst, const void* src, size_t bytes) { copy_bytes(GpuExec{}, dst, src, bytes); }

}  // namespace pg
