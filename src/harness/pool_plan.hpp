// A pooling problem from PyTorch-named options and the input's .npy header: what `poolgrad
// forward` and `backward` validate before any payload is read (src/harness/pool_run.hpp runs it).
//
// plan_pool() turns the options into a validated Problem under a profile (refusing an option the
// profile has no such parameter for); the check_* functions refuse tensors whose shape or dtype
// does not match it. Every refusal is an InvalidInput with one line naming the parameter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/harness/npy.hpp"
#include "src/model/problem.hpp"

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

NpyType npy_index_type(IndexType t);

}  // namespace pg
