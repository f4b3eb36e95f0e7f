#include "src/harness/conv_auto.hpp"

namespace pg {
namespace {

// The one window conv.winograd takes: 3 taps, stride 1, dilation 1 on every spatial axis.
bool winograd_window(const ConvProblem& p) {
  for (int a = kAxes - p.dims; a < kAxes; ++a)
    if (p.kernel[a] != 3 || p.stride[a] != 1 || p.dilation[a] != 1) return false;
  return true;
}

}  // namespace

std::vector<std::string> conv_auto_order(const ConvProblem& p, BackendKind backend) {
  if (backend != BackendKind::gpu) return {};
  // The depthwise row: conv.depthwise 0.220 ms, conv.scatter.atomic 0.822, conv.gather 0.876,
  // conv.gemm 8.73 (f32; bench/results/2026-11-26_h100_conv_gemm_depthwise.md). Its work per element grows with K/groups, the GEMM's does not; the
  // K/groups bound is where no row was measured, so the GEMM keeps those.
  if (p.c_per_group() <= 8 && p.k_per_group() <= 64) return {"conv.depthwise", "conv.gather"};
  // f16 and bf16 (bench/results/2026-11-26_h100_conv_tma.md): conv.gemm.tma on every 16-bit row,
  // both layouts, C/groups 64 and 128, stride 1 and 2 (2D 0.219, 3D 0.127, stride-2 0.062,
  // channels-last 0.113 ms against the best of conv.gemm.wgmma and conv.gemm.tc: 0.219 / 0.162 /
  // 0.067 / 0.137). Then, as before it (bench/results/2026-11-26_h100_conv_wgmma.md):
  // conv.gemm.wgmma where its 128-wide column tile is full, C/groups > 64, else conv.gemm.tc. A
  // build without sm_90a has neither Hopper variant on the GPU: auto passes them by. conv.gemm
  // 1.57 ms, conv.gather 23.6.
  if (p.dtype == DType::f16 || p.dtype == DType::bf16) {
    if (p.c_per_group() > 64) return {"conv.gemm.tma", "conv.gemm.wgmma", "conv.gemm.tc", "conv.gemm"};
    return {"conv.gemm.tma", "conv.gemm.tc", "conv.gemm.wgmma", "conv.gemm"};
  }
  // fp32 3 x 3 (1D: 3-tap) stride-1 windows, C/groups 32 to 512 (bench/results/2026-11-25_h100_conv_winograd.md):
  // conv.winograd 0.12-0.61 ms against conv.gemm 0.23-1.69 ms on all six 2D rows, channels-last
  // too, and 0.480 against 0.687 ms on the 1D row. Below 32 no row was measured, so the GEMM keeps those.
  if (p.dtype == DType::f32 && p.dims <= 2 && p.c_per_group() >= 32 && winograd_window(p)) return {"conv.winograd", "conv.gemm"};
  return {"conv.gemm"};
}

}  // namespace pg
