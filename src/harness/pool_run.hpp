// One pooling problem on .npy tensors: what `poolgrad forward` and `poolgrad backward` do,
// as a library so tests run the same path without a subprocess.
//
// The plan (src/harness/pool_plan.hpp) is validated before any payload is read; pool_forward and
// pool_backward run the oracle (or a registered variant on the CPU backend or a GPU). Every refusal is an
// InvalidInput with one line naming the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/harness/npy.hpp"
#include "src/harness/pool_plan.hpp"
#include "src/model/problem.hpp"

namespace pg {

// Host bytes forward or backward holds at its peak, an estimate for require_host_memory: the
// tensors as read and written, their values in double, the oracle's gradient facts, and with
// `through_variant` the harness's run (case_host_bytes).
double pool_host_bytes(const PoolPlan& plan, bool through_variant);

struct ForwardResult {
  NpyArray output;
  NpyArray indices;  // max only, in the problem's index format and type
};
ForwardResult pool_forward(const PoolPlan& plan, const NpyArray& input);

// Routes dy through `indices` when given, else recomputes the argmax from `input`. `variant`
// is "oracle", "auto" or a registered variant's name, run on `backend` ("cpu", "gpu0", ...: a
// variant only) and verified against the oracle before its dx is returned. The stored indices are checked against
// their windows by the oracle before any variant reads them.
NpyArray pool_backward(const PoolPlan& plan, const std::string& variant, const NpyArray& input,
                       const NpyArray& grad_output, const NpyArray* indices, const std::string& backend = "cpu");

}  // namespace pg
