#include "src/harness/pool_plan.hpp"

#include <algorithm>
#include <limits>

#include "src/model/invalid_input.hpp"
#include "src/harness/axis_options.hpp"
#include "src/model/profile.hpp"

namespace pg {
namespace {

// ONNX auto_pad: SAME_* pads so that out = ceil(in / stride), the odd pad at the end
// (SAME_UPPER) or the beginning (SAME_LOWER); VALID pads nothing.
void apply_auto_pad(const std::string& mode, Problem& p) {
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID")
    throw InvalidInput("--auto-pad = " + mode + " must be SAME_UPPER, SAME_LOWER or VALID");
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    if (mode == "VALID" || p.stride[a] < 1 || p.kernel[a] < 1 || p.dilation[a] < 1) continue;
    // 128-bit: the kernel, stride and dilation are not validated yet and may be huge.
    using wide = __int128;
    const wide out = (wide(p.in[a]) + p.stride[a] - 1) / p.stride[a];
    const wide span = (out - 1) * p.stride[a] + wide(p.dilation[a]) * (p.kernel[a] - 1) + 1 - p.in[a];
    if (span > std::numeric_limits<int64_t>::max())
      throw InvalidInput("--auto-pad = " + mode + ": the padding this kernel, stride and dilation need overflows int64");
    const int64_t total = std::max<int64_t>(static_cast<int64_t>(span), 0);
    p.pad_begin[a] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    p.pad_end[a] = total - p.pad_begin[a];
  }
}

}  // namespace

NpyType npy_index_type(IndexType t) {
  return t == IndexType::i64 ? NpyType::i64 : t == IndexType::i32 ? NpyType::i32 : NpyType::u8;
}

PoolPlan plan_pool(const PoolArgs& args, const NpyHeader& input) {
  Problem p;
  const std::string& op = args.op;
  const bool known_op = op.size() == 10 && (op.rfind("max_pool", 0) == 0 || op.rfind("avg_pool", 0) == 0) &&
                        op[8] >= '1' && op[8] <= '3' && op[9] == 'd';
  if (!known_op) throw InvalidInput("--op = " + op + " must be max_pool1d..max_pool3d or avg_pool1d..avg_pool3d");
  const Profile* profile = find_profile(args.profile);
  if (!profile) {
    std::string names;
    for (const Profile& pr : profiles()) names += (names.empty() ? "" : ", ") + pr.name;
    throw InvalidInput("--profile = " + args.profile + " is unknown (" + names + ")");
  }
  apply_profile(*profile, p);
  p.op = op[0] == 'm' ? Op::max : Op::avg;
  p.dims = op[8] - '0';
  p.layout = layout_named(args.layout, p.dims);

  if (!npy_type_is_float(input.type))
    throw InvalidInput(std::string("--input dtype ") + npy_type_name(input.type) +
                       " must be float16, bfloat16, float32 or float64");
  p.dtype = npy_float_dtype(input.type);
  const size_t rank = input.shape.size();
  const size_t dims = static_cast<size_t>(p.dims);
  if (rank != dims + 2 && rank != dims + 1)
    throw InvalidInput("--input shape " + shape_text(input.shape) + " has rank " + std::to_string(rank) + "; " +
                       op + " takes rank " + std::to_string(dims + 2) + " (batched) or " +
                       std::to_string(dims + 1) + " (unbatched)");
  PoolPlan plan;
  plan.unbatched = rank == dims + 1;
  plan.input_shape = input.shape;
  const std::vector<int64_t> batched = plan.unbatched ? [&] {
    std::vector<int64_t> s{1};
    s.insert(s.end(), input.shape.begin(), input.shape.end());
    return s;
  }() : input.shape;
  const bool first = p.layout == Layout::channels_first;
  p.n = batched[0];
  p.c = first ? batched[1] : batched.back();
  for (size_t i = 0; i < dims; ++i) p.in[kAxes - dims + i] = batched[(first ? 2 : 1) + i];

  if (args.kernel_size.empty()) throw InvalidInput("--kernel-size is required");
  per_axis("--kernel-size", args.kernel_size, p.dims, p.kernel);
  per_axis("--stride", args.stride.empty() ? args.kernel_size : args.stride, p.dims, p.stride);
  if (!args.dilation.empty()) per_axis("--dilation", args.dilation, p.dims, p.dilation);
  if (!(p.op == Op::avg ? profile->avg_dilation : profile->max_dilation))
    for (int a = 0; a < kAxes; ++a)
      if (p.dilation[a] != 1)
        throw InvalidInput("--dilation = " + list_text(args.dilation) + ": " + op + " has no dilation in profile " +
                           profile->name);
  const int pad_sources = !args.padding.empty() + !args.pads.empty() + !args.auto_pad.empty();
  if (pad_sources > 1) throw InvalidInput("--padding, --pads and --auto-pad exclude each other; give one");
  if (!args.padding.empty()) {
    per_axis("--padding", args.padding, p.dims, p.pad_begin);
    per_axis("--padding", args.padding, p.dims, p.pad_end);
  } else if (!args.pads.empty()) {
    onnx_pads(args.pads, p.dims, p.pad_begin, p.pad_end);
    for (size_t i = 0; i < dims; ++i) {
      if (args.pads[i] != args.pads[dims + i] && !profile->asymmetric_pads)
        throw InvalidInput("--pads = " + list_text(args.pads) + ": profile " + profile->name +
                           " pads symmetrically, and begin " + std::to_string(args.pads[i]) + " differs from end " +
                           std::to_string(args.pads[dims + i]) + " on axis " + std::to_string(i));
    }
  } else if (!args.auto_pad.empty()) {
    apply_auto_pad(args.auto_pad, p);
    if (!profile->auto_pad)
      throw InvalidInput("--auto-pad = " + args.auto_pad + ": profile " + profile->name +
                         " has no auto_pad (ONNX's; give --padding or --pads)");
  }
  p.ceil_mode = args.ceil_mode;
  if (p.ceil_mode && !profile->ceil_mode)
    throw InvalidInput("--ceil-mode: profile " + profile->name + " has no ceil_mode (floor output sizes only)");
  if (p.op == Op::max && args.count_include_pad) throw InvalidInput("--count-include-pad applies to avg_pool only");
  if (p.op == Op::max && args.divisor_override) throw InvalidInput("--divisor-override applies to avg_pool only");
  if (args.count_include_pad == false && !profile->exclude_pad)
    throw InvalidInput("--count-include-pad false: profile " + profile->name + " always counts the padding");
  if (args.divisor_override && !profile->divisor_override)
    throw InvalidInput("--divisor-override: profile " + profile->name + " has no divisor_override (PyTorch's)");
  p.divisor = divisor_for(*profile, args.count_include_pad.value_or(profile->count_include_pad));
  if (args.divisor_override) {
    p.has_divisor_override = true;
    p.divisor_override = *args.divisor_override;
  }
  finalize(p);
  const std::string invalid = validate(p);
  if (!invalid.empty()) throw InvalidInput(invalid);

  plan.problem = p;
  if (!plan.unbatched) plan.output_shape.push_back(p.n);
  if (first) plan.output_shape.push_back(p.c);
  for (size_t i = 0; i < dims; ++i) plan.output_shape.push_back(p.out[kAxes - dims + i]);
  if (!first) plan.output_shape.push_back(p.c);
  return plan;
}

void check_grad_output(const PoolPlan& plan, const NpyHeader& dy) {
  if (npy_type_of(plan.problem.dtype) != dy.type)
    throw InvalidInput(std::string("--grad-output dtype ") + npy_type_name(dy.type) + " does not match --input dtype " +
                       npy_type_name(npy_type_of(plan.problem.dtype)));
  if (dy.shape != plan.output_shape)
    throw InvalidInput("--grad-output shape " + shape_text(dy.shape) + " does not match the output shape " +
                       shape_text(plan.output_shape));
}

void check_indices(const PoolPlan& plan, const NpyHeader& indices) {
  const Problem& p = plan.problem;
  if (p.op != Op::max) throw InvalidInput("--indices applies to max_pool only");
  if (indices.type != npy_index_type(p.index_type))
    throw InvalidInput(std::string("--indices dtype ") + npy_type_name(indices.type) + " does not match the index type " +
                       npy_type_name(npy_index_type(p.index_type)) + " of format " + index_format_name(p.index_format));
  if (indices.shape != plan.output_shape)
    throw InvalidInput("--indices shape " + shape_text(indices.shape) + " does not match the output shape " +
                       shape_text(plan.output_shape));
}

}  // namespace pg
