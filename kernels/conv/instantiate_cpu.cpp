// The CPU backend's instantiation of the conv variants (g++). conv.gemm has no CPU launch.
#include "kernels/common/exec.hpp"
#include "kernels/conv/variants.hpp"

namespace pg {

std::vector<ConvVariant> cpu_conv_variants() { return make_conv_variants<CpuExec>(ConvVariants{}); }

}  // namespace pg
