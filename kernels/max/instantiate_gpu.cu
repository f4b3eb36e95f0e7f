// The GPU backend's instantiation of the max-pool variants: nvcc for NVIDIA, hipcc -x hip for
// AMD, from this one file.
#include "kernels/common/exec.hpp"
#include "kernels/max/variants.hpp"

namespace pg {

std::vector<Variant> gpu_max_variants() { return make_variants<GpuExec>(MaxVariants{}); }

}  // namespace pg
