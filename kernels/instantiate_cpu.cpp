// The CPU backend's instantiation of the copy kernel (g++); the variants are instantiated per op
// in kernels/max/ and kernels/avg/.
#include "src/copy.hpp"
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"

namespace pg {

void copy_kernel_cpu(void* dst, const void* src, size_t bytes) { copy_bytes(CpuExec{}, dst, src, bytes); }

}  // namespace pg
