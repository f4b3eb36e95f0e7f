// One pooling problem on .npy tensors: what `poolgrad forward` and `poolgrad backward` do,
// as a library so tests run the same path without a subprocess.
//
// plan_pool() turns PyTorch-named options plus the input's header into a validated Problem
// before any payload is read; the check_* functions refuse tensors whose shape or dtype does
// not match it; pool_forward/pool_backward run the oracle (or a registered variant on the CPU
// backend). Every refusal is an InvalidInput with one line naming the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/npy.hpp"
#include "src/problem.hpp"

namespace pg {

struct PoolArgs {
  std::string op;  // max_pool1d .. max_pool3d, avg_pool1d .. avg_pool3d
  std::vector<int64_t> kernel_size;
  std::vector<int64_t> stride;    // empty: = kernel_size
  std::vector<int64_t> padding;   // symmetric, one value or one per axis
  std::vector<int64_t> pads;      // ONNX order: every begin, then every end
  std::string auto_pad;           // "", SAME_UPPER, SAME_LOWER or VALID
  std::vector<int64_t> dilation;
  bool ceil_mode = false;
  std::optional<bool> count_include_pad;  // unset: the profile's default
  std::optional<int64_t> divisor_override;
  std::string profile = "pytorch";
  std::string layout = "NCHW";  // NCHW (channels first) or NHWC (channels last), any dims
  std::string variant = "oracle";
};

struct PoolPlan {
  Problem problem;
  bool unbatched = false;  // input had no batch axis, like PyTorch's (C, H, W)
  std::vector<int64_t> input_shape, output_shape;
};

PoolPlan plan_pool(const PoolArgs& args, const NpyHeader& input);
void check_grad_output(const PoolPlan& plan, const NpyHeader& grad_output);
void check_indices(const PoolPlan& plan, const NpyHeader& indices);

struct ForwardResult {
  NpyArray output;
  NpyArray indices;  // max only, in the problem's index format and type
};
ForwardResult pool_forward(const PoolPlan& plan, const NpyArray& input);

// Routes dy through `indices` when given, else recomputes the argmax from `input`. `variant`
// is "oracle", "auto" or a registered variant's name. The stored indices are checked against
// their windows by the oracle before any variant reads them.
NpyArray pool_backward(const PoolPlan& plan, const std::string& variant, const NpyArray& input,
                       const NpyArray& grad_output, const NpyArray* indices);

}  // namespace pg
