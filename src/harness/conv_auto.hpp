// What `--variant auto` runs for a conv problem: the variant measured fastest for its class on
// the backend, else the first registered one that supports the problem.
#pragma once

#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/model/conv_problem.hpp"

namespace pg {

// The names `auto` tries first, best first. GPU (H100, 2026-11-25, bench/results/2026-11-25_h100_conv_tc.md):
// small groups (C/groups <= 8, K/groups <= 64) conv.depthwise; f16 and bf16 conv.gemm.tma
// (bench/results/2026-11-26_h100_conv_tma.md), then conv.gemm.wgmma at C/groups > 64, else
// conv.gemm.tc, then the other, then conv.gemm (bench/results/2026-11-26_h100_conv_wgmma.md); f32 1D and 2D 3-tap stride-1 windows with C/groups >= 32 conv.winograd, then conv.gemm
// (bench/results/2026-11-25_h100_conv_winograd.md); other f32 and f64 conv.gemm. CPU: none (the
// registry's order: conv.gather).
std::vector<std::string> conv_auto_order(const ConvProblem& p, BackendKind backend);

}  // namespace pg
