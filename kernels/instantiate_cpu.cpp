// The CPU backend's instantiation of the copy and FMA-ceiling kernels (g++); the variants are
// instantiated per op in kernels/max/, kernels/avg/ and kernels/conv/.
#include "kernels/common/copy.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/fma_chains.hpp"
#include "kernels/exports.hpp"

namespace pg {

void copy_kernel_cpu(void* dst, const void* src, size_t bytes) { copy_bytes(CpuExec{}, dst, src, bytes); }

void fma_chains_cpu(float* out, int64_t items, int rounds) { CpuExec{}.for_each<int32_t>(items, FmaChains{out, rounds}); }

}  // namespace pg
