// The CPU backend's instantiation of every variant and of the copy kernel (g++).
#include "src/copy.hpp"
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/variants.hpp"

namespace pg {

std::vector<Variant> cpu_variants() { return make_variants<CpuExec>(AllVariants{}); }

void copy_kernel_cpu(void* dst, const void* src, size_t bytes) { copy_bytes(CpuExec{}, dst, src, bytes); }

}  // namespace pg
