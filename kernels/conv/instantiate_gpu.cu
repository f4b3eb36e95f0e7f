// The GPU backend's instantiation of the conv variants: nvcc for NVIDIA, hipcc -x hip for AMD,
// from this one file.
#include "kernels/common/exec.hpp"
#include "kernels/conv/variants.hpp"

namespace pg {

std::vector<ConvVariant> gpu_conv_variants() { return make_conv_variants<GpuExec>(ConvVariants{}); }

}  // namespace pg
