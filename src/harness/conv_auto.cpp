#include "src/harness/conv_auto.hpp"

namespace pg {

std::vector<std::string> conv_auto_order(const ConvProblem& p, BackendKind backend) {
  if (backend != BackendKind::gpu) return {};
  // The depthwise row: conv.depthwise 0.237 ms, conv.scatter.atomic 0.808, conv.gather 0.884,
  // conv.gemm 9.26 (f32). Its work per element grows with K/groups, the GEMM's does not; the
  // K/groups bound is where no row was measured, so the GEMM keeps those.
  if (p.c_per_group() <= 8 && p.k_per_group() <= 64) return {"conv.depthwise", "conv.gather"};
  // bf16 2D row: conv.gemm.tc 0.29 ms, conv.gemm 1.57, conv.gather 23.6.
  if (p.dtype == DType::f16 || p.dtype == DType::bf16) return {"conv.gemm.tc", "conv.gemm"};
  return {"conv.gemm"};
}

}  // namespace pg
