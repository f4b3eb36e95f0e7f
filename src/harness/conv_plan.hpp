// plan_conv() turns PyTorch-named options (torch.nn.functional.convNd, torch.nn.grad.convNd_input)
// plus the input's shape and the weight's header into a validated ConvProblem before any payload
// is read; the check_* functions refuse tensors whose shape or dtype does not match it. Every
// refusal is an InvalidInput with one line naming the parameter. Apart from src/harness/conv_run.cpp so
// that the conv CLI fuzzer (fuzz/parsers/conv_cli_fuzz.cpp) runs it without the kernels.
//
// Arrays are in the layout's axis order, like pooling's: NCHW gives x (N, C, spatial...),
// w (K, C/groups, kernel...), y (N, K, out...); NHWC gives x (N, spatial..., C),
// w (K, kernel..., C/groups), y (N, out..., K). An input without the N axis is unbatched,
// as in PyTorch, and so are y and dx.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/conv_problem.hpp"
#include "src/harness/npy.hpp"

namespace pg {

struct ConvArgs {
  std::string op;  // conv1d, conv2d, conv3d
  std::vector<int64_t> stride;    // one value or one per axis; empty: 1
  std::vector<int64_t> padding;   // symmetric, one value or one per axis; empty: 0 (pad_mode explicit)
  ConvPadMode pad_mode = ConvPadMode::explicit_pads;  // same/valid: padding and pads stay empty
  std::vector<int64_t> pads;      // ONNX order: every begin, then every end
  std::vector<int64_t> dilation;  // one value or one per axis; empty: 1
  int64_t groups = 1;
  std::string layout = "NCHW";    // NCHW (channels first) or NHWC (channels last), any dims
};

struct ConvPlan {
  ConvProblem problem;
  bool unbatched = false;  // the input has no N axis, like PyTorch's (C, H, W)
  std::vector<int64_t> input_shape, weight_shape, output_shape;
};

// `input_shape` is x's shape (forward) or --input-size (backward); `input_name` names where it
// came from in messages. The problem's dtype is the weight's.
ConvPlan plan_conv(const ConvArgs& args, const std::vector<int64_t>& input_shape, const std::string& input_name,
                   const NpyHeader& weight);
void check_conv_input(const ConvPlan& plan, const NpyHeader& input);
void check_conv_grad_output(const ConvPlan& plan, const NpyHeader& grad_output);

}  // namespace pg
