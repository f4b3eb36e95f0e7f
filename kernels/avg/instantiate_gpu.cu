// The GPU backend's instantiation of the avg-pool variants: nvcc for NVIDIA, hipcc -x hip for
// AMD, from this one file.
#include "kernels/common/exec.hpp"
#include "kernels/avg/variants.hpp"

namespace pg {

std::vector<Variant> gpu_avg_variants() { return make_variants<GpuExec>(AvgVariants{}); }

}  // namespace pg
