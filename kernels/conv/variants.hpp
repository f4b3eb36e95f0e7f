// The conv backward-data variants, each once. Adding one is a file in kernels/conv/ and a line here.
#pragma once

#include "kernels/conv/conv_depthwise.hpp"
#include "kernels/conv/conv_gather.hpp"
#include "kernels/conv/conv_gemm.hpp"
#include "kernels/conv/conv_gemm_tc.hpp"
#include "kernels/conv/conv_gemm_tma.hpp"
#include "kernels/conv/conv_gemm_wgmma.hpp"
#include "kernels/conv/conv_scatter_atomic.hpp"
#include "kernels/conv/conv_winograd.hpp"
#include "kernels/conv/register.hpp"

namespace pg {

using ConvVariants = VariantList<ConvGather, ConvScatterAtomic, ConvGemm, ConvGemmTc, ConvGemmWgmma, ConvGemmTma, ConvDepthwise, ConvWinograd>;

}  // namespace pg
