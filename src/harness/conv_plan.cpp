#include "src/harness/conv_plan.hpp"

#include "src/harness/axis_options.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

// (N, C, spatial...) or (N, spatial..., C) in the layout's order; n is left out when unbatched.
std::vector<int64_t> layout_shape(const ConvPlan& plan, int64_t channels, const int64_t* spatial) {
  const ConvProblem& p = plan.problem;
  const bool first = p.layout == Layout::channels_first;
  std::vector<int64_t> s;
  if (!plan.unbatched) s.push_back(p.n);
  if (first) s.push_back(channels);
  for (int a = kAxes - p.dims; a < kAxes; ++a) s.push_back(spatial[a]);
  if (!first) s.push_back(channels);
  return s;
}

void check_dtype(const ConvPlan& plan, const std::string& what, const NpyHeader& h) {
  if (h.type != npy_type_of(plan.problem.dtype))
    throw InvalidInput(what + " dtype " + npy_type_name(h.type) + " does not match --weight dtype " +
                       npy_type_name(npy_type_of(plan.problem.dtype)));
}

}  // namespace

ConvPlan plan_conv(const ConvArgs& args, const std::vector<int64_t>& input_shape, const std::string& input_name,
                   const NpyHeader& weight) {
  ConvProblem p;
  const std::string& op = args.op;
  if (op != "conv1d" && op != "conv2d" && op != "conv3d")
    throw InvalidInput("--op = " + op + " must be conv1d, conv2d or conv3d");
  p.dims = op[4] - '0';
  p.layout = layout_named(args.layout, p.dims);
  const bool first = p.layout == Layout::channels_first;
  if (!npy_type_is_float(weight.type))
    throw InvalidInput(std::string("--weight dtype ") + npy_type_name(weight.type) +
                       " must be float16, bfloat16, float32 or float64");
  p.dtype = npy_float_dtype(weight.type);

  const size_t dims = static_cast<size_t>(p.dims);
  const size_t rank = input_shape.size();
  if (rank != dims + 2 && rank != dims + 1)
    throw InvalidInput(input_name + " " + shape_text(input_shape) + " has rank " + std::to_string(rank) + "; " + op +
                       " takes rank " + std::to_string(dims + 2) + " (batched) or " + std::to_string(dims + 1) +
                       " (unbatched)");
  if (weight.shape.size() != dims + 2)
    throw InvalidInput("--weight shape " + shape_text(weight.shape) + " has rank " +
                       std::to_string(weight.shape.size()) + "; " + op + " takes rank " + std::to_string(dims + 2) +
                       (first ? " (K, C/groups, kernel...)" : " (K, kernel..., C/groups)"));
  ConvPlan plan;
  plan.unbatched = rank == dims + 1;
  std::vector<int64_t> batched = input_shape;
  if (plan.unbatched) batched.insert(batched.begin(), 1);
  p.n = batched[0];
  p.c = first ? batched[1] : batched.back();
  p.k = weight.shape[0];
  for (size_t i = 0; i < dims; ++i) {
    p.in[kAxes - dims + i] = batched[(first ? 2 : 1) + i];
    p.kernel[kAxes - dims + i] = weight.shape[(first ? 2 : 1) + i];
  }
  p.groups = args.groups;
  per_axis("--stride", args.stride, p.dims, p.stride);
  per_axis("--dilation", args.dilation, p.dims, p.dilation);
  if (!args.padding.empty() + !args.pads.empty() + (args.pad_mode != ConvPadMode::explicit_pads) > 1)
    throw InvalidInput("--padding and --pads exclude each other; give one");
  p.pad_mode = args.pad_mode;
  per_axis("--padding", args.padding, p.dims, p.pad_begin);
  per_axis("--padding", args.padding, p.dims, p.pad_end);
  if (!args.pads.empty()) onnx_pads(args.pads, p.dims, p.pad_begin, p.pad_end);
  conv_finalize(p);
  const std::string invalid = conv_validate(p);
  if (!invalid.empty()) throw InvalidInput(invalid);
  const int64_t weight_cpg = first ? weight.shape[1] : weight.shape.back();
  if (weight_cpg != p.c_per_group())
    throw InvalidInput("--weight shape " + shape_text(weight.shape) + " has " + std::to_string(weight_cpg) +
                       " input channels per group; input C = " + std::to_string(p.c) + " with groups = " +
                       std::to_string(p.groups) + " needs " + std::to_string(p.c_per_group()));

  plan.problem = p;
  plan.input_shape = input_shape;
  plan.weight_shape = weight.shape;
  plan.output_shape = layout_shape(plan, p.k, p.out);
  return plan;
}

void check_conv_input(const ConvPlan& plan, const NpyHeader& input) {
  check_dtype(plan, "--input", input);
  if (input.shape != plan.input_shape)
    throw InvalidInput("--input shape " + shape_text(input.shape) + " does not match the planned input shape " +
                       shape_text(plan.input_shape));
}

void check_conv_grad_output(const ConvPlan& plan, const NpyHeader& dy) {
  check_dtype(plan, "--grad-output", dy);
  if (dy.shape != plan.output_shape)
    throw InvalidInput("--grad-output shape " + shape_text(dy.shape) + " does not match the output shape " +
                       shape_text(plan.output_shape));
}

}  // namespace pg
