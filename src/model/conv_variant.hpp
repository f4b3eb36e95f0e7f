// What a convolution backward-data variant IS: the record for problems of type ConvProblem,
// built like the pooling one (src/model/variant.hpp): a self-describing name, what the variant
// computes stated once as data (ConvDomain, which the fuzz generates inside), an exact
// supports(), a workspace size and one launch per backend. The list of every registered conv
// variant is the harness's (src/harness/conv_registry.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/model/conv_problem.hpp"
#include "src/model/variant.hpp"  // Support

namespace pg {

// The problems a conv variant computes: dims, layout, dtype, size and, for a variant of one
// window (Winograd), that window. Every group count and padding is computed by every conv variant.
struct ConvDomain {
  int min_dims = 1, max_dims = 3;
  // 0: every window (kernel, stride, dilation). Else only this kernel with stride 1 and dilation 1
  // on every spatial axis.
  int64_t only_kernel = 0;
  std::vector<Layout> layouts = {Layout::channels_first, Layout::channels_last};
  std::vector<DType> dtypes = {DType::f16, DType::bf16, DType::f32, DType::f64};
  // For the fuzz: how far past its minimum each input axis (D, H, W) may grow, and the largest
  // channel counts per group, so problems span several tiles and end in a partial one.
  int64_t reach[kAxes] = {5, 8, 10};
  int64_t max_c_per_group = 6, max_k_per_group = 6;

  Domain::Verdict admits(const ConvProblem& p) const;
  std::string describe() const;
};

// Device pointers of one backward-data run, dense in the problem's layout.
struct ConvBuffers {
  const void* dy = nullptr;
  const void* w = nullptr;
  void* dx = nullptr;
  void* workspace = nullptr;  // workspace_bytes(problem) long
};

using ConvLaunchFn = std::function<void(Backend&, const ConvProblem&, const ConvBuffers&)>;

// How far a variant's dx may lie from the exact one (src/harness/conv_verify.cpp turns it into the
// per-element bound): `direct` sums the direct terms in some order, the oracle's term count and
// sum of |terms| bound it; `winograd_f4x4` goes through F(4x4, 3x3)'s transforms, whose bound
// reference/conv_winograd_bound.hpp computes.
enum class ConvErrorModel : uint8_t { direct, winograd_f4x4 };

struct ConvVariant {
  std::string name;  // conv.strategy..., e.g. conv.gather
  bool deterministic = false;
  bool gpu_only = false;
  ConvErrorModel error_model = ConvErrorModel::direct;
  ConvDomain domain;
  // Conditions beyond the domain (offsets that must fit int32, grid limits); called only for
  // problems the domain admits.
  std::function<Support(const ConvProblem&)> supports_problem;
  std::function<size_t(const ConvProblem&)> workspace_bytes;
  ConvLaunchFn launch_cpu;
  ConvLaunchFn launch_gpu;  // empty when the build has no GPU backend

  // Exact: yes means launch() runs this variant's own body on p, and nothing else ever runs.
  Support supports(const ConvProblem& p, BackendKind backend) const;
  // Throws pg::Error, launching nothing, when supports() says no.
  void launch(Backend& b, const ConvProblem& p, const ConvBuffers& buf) const;
};

}  // namespace pg
