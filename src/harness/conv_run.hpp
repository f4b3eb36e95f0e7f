// One convolution problem on .npy tensors: what `poolgrad forward|backward --op convNd` do, as
// a library so tests run the same path without a subprocess (as src/harness/pool_run.hpp for pooling).
// The plan (src/harness/conv_plan.hpp) comes first; conv_forward_npy/conv_backward_npy run the oracle
// or a variant on the tensors it admitted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/harness/conv_plan.hpp"
#include "src/harness/npy.hpp"

namespace pg {

// y = conv(x, w) and dx = conv_bwd_data(dy, w) by the oracle, rounded to the problem's dtype.
// Backward with `variant` "auto" (the first registered conv variant that supports the problem on
// the backend) or a conv variant's name runs it on `backend` ("cpu", "gpu0", ...) through
// ConvPreparedRun, verified against the oracle before its dx is returned (a disagreement throws
// Mismatch).
NpyArray conv_forward_npy(const ConvPlan& plan, const NpyArray& input, const NpyArray& weight);
NpyArray conv_backward_npy(const ConvPlan& plan, const NpyArray& weight, const NpyArray& grad_output,
                           const std::string& variant = "oracle", const std::string& backend = "cpu");

}  // namespace pg
