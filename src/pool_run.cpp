#include "src/pool_run.hpp"

#include "src/verify.hpp"

#include <cstring>
#include <sstream>

#include "reference/pool_reference.hpp"
#include "src/auto_variant.hpp"
#include "src/backend.hpp"
#include "src/invalid_input.hpp"
#include "src/profile.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// One value per spatial axis from a PyTorch-style argument: one value applies to every axis.
void per_axis(const std::string& option, const std::vector<int64_t>& given, int dims, int64_t* out) {
  if (given.size() != 1 && given.size() != static_cast<size_t>(dims))
    throw InvalidInput(option + " = " + list_text(given) + " has " + std::to_string(given.size()) +
                       " values; a " + std::to_string(dims) + "D op takes 1 or " + std::to_string(dims));
  for (int i = 0; i < dims; ++i) out[kAxes - dims + i] = given[given.size() == 1 ? 0 : i];
}

// ONNX auto_pad: SAME_* pads so that out = ceil(in / stride), the odd pad at the end
// (SAME_UPPER) or the beginning (SAME_LOWER); VALID pads nothing.
void apply_auto_pad(const std::string& mode, Problem& p) {
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID")
    throw InvalidInput("--auto-pad = " + mode + " must be SAME_UPPER, SAME_LOWER or VALID");
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    if (mode == "VALID" || p.stride[a] < 1 || p.kernel[a] < 1 || p.dilation[a] < 1) continue;
    const int64_t out = (p.in[a] + p.stride[a] - 1) / p.stride[a];
    const int64_t total = std::max<int64_t>((out - 1) * p.stride[a] + p.effective_kernel(a) - p.in[a], 0);
    p.pad_begin[a] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    p.pad_end[a] = total - p.pad_begin[a];
  }
}

std::vector<double> values_of(const NpyArray& a) {
  const DType t = npy_float_dtype(a.header.type);
  std::vector<double> v(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(t, a.data.data(), static_cast<int64_t>(i));
  return v;
}

NpyArray array_of(DType t, const std::vector<int64_t>& shape, const std::vector<double>& v) {
  NpyArray a;
  a.header.type = npy_type_of(t);
  a.header.shape = shape;
  a.data.resize(v.size() * dtype_size(t));
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t, a.data.data(), static_cast<int64_t>(i), v[i]);
  return a;
}

NpyType npy_index_type(IndexType t) {
  return t == IndexType::i64 ? NpyType::i64 : t == IndexType::i32 ? NpyType::i32 : NpyType::u8;
}

// u8 indices mark a window with no tap by 255, the wider types by -1 (ref::kNoTap).
NpyArray encode_indices(const Problem& p, const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
  NpyArray a;
  a.header.type = npy_index_type(p.index_type);
  a.header.shape = shape;
  const int size = index_type_size(p.index_type);
  a.data.resize(index.size() * size);
  for (size_t i = 0; i < index.size(); ++i) {
    if (p.index_type == IndexType::i64) {
      std::memcpy(&a.data[i * 8], &index[i], 8);
    } else if (p.index_type == IndexType::i32) {
      const int32_t v = static_cast<int32_t>(index[i]);
      std::memcpy(&a.data[i * 4], &v, 4);
    } else {
      a.data[i] = index[i] == ref::kNoTap ? 255 : static_cast<uint8_t>(index[i]);
    }
  }
  return a;
}

std::vector<int64_t> decode_indices(const NpyArray& a) {
  std::vector<int64_t> index(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < index.size(); ++i) {
    if (a.header.type == NpyType::i64) {
      std::memcpy(&index[i], &a.data[i * 8], 8);
    } else if (a.header.type == NpyType::i32) {
      int32_t v;
      std::memcpy(&v, &a.data[i * 4], 4);
      index[i] = v;
    } else {
      index[i] = a.data[i] == 255 ? ref::kNoTap : a.data[i];
    }
  }
  return index;
}

const Variant& choose_variant(const std::string& name, const Problem& p, bool have_indices) {
  if (name == "auto") {
    const AutoChoice c = choose_auto_variant(p, BackendKind::cpu, [&](const Variant& v) {
      return v.inputs != Inputs::dy_and_indices || have_indices;
    });
    if (c.variant) return *c.variant;
    throw InvalidInput("--variant auto: no registered variant supports this problem on the CPU backend (" +
                       to_string(p) + ")");
  }
  const Variant* v = find_variant(name);
  if (!v) throw InvalidInput("--variant = " + name + " is not registered (see poolgrad variants)");
  if (v->op != p.op)
    throw InvalidInput("--variant = " + name + " is a " + op_name(v->op) + " pooling variant, the op is " +
                       op_name(p.op) + " pooling");
  const Support s = v->supports(p, BackendKind::cpu);
  if (!s.ok) throw InvalidInput("--variant = " + name + " does not support this problem on the CPU backend: " + s.why);
  return *v;
}

// Runs a registered variant on the CPU backend through PreparedRun, the path check, the fuzz and
// the benchmark take: the tensors' own values as the data, the oracle's gradient as the answer,
// so the variant's dx is verified (sentinels, poison, the per-element bound) before it is
// returned. A variant that disagrees with the oracle is an error, not an output.
std::vector<unsigned char> run_variant(const Variant& v, const Problem& p, std::vector<double> x, std::vector<double> dy,
                                       std::vector<int64_t> indices, ref::Gradient g) {
  auto backend = make_cpu_backend();
  auto expected = std::make_shared<Expected>();
  expected->data.x = std::move(x);
  expected->data.dy = std::move(dy);
  expected->indices = std::move(indices);
  expected->dx = std::move(g.dx);
  expected->abs_sum = std::move(g.abs_sum);
  expected->terms = std::move(g.terms);
  PreparedRun run(*backend, v, p, DataSpec{}, std::move(expected));
  const Outcome o = run.verify();
  if (o.status != Status::pass)
    throw Error("--variant " + v.name + " disagrees with the oracle on these tensors (a kernel bug):\n" + o.message);
  return run.output();
}

}  // namespace

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
  if (args.layout != "NCHW" && args.layout != "NHWC")
    throw InvalidInput("--layout = " + args.layout + " must be NCHW or NHWC");
  p.layout = args.layout == "NCHW" ? Layout::channels_first : Layout::channels_last;

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
  if (p.op == Op::avg && !profile->avg_dilation)
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
    if (args.pads.size() != 2 * dims)
      throw InvalidInput("--pads = " + list_text(args.pads) + " has " + std::to_string(args.pads.size()) +
                         " values; a " + std::to_string(dims) + "D op takes " + std::to_string(2 * dims) +
                         " (every begin, then every end)");
    for (size_t i = 0; i < dims; ++i) {
      p.pad_begin[kAxes - dims + i] = args.pads[i];
      p.pad_end[kAxes - dims + i] = args.pads[dims + i];
    }
  } else if (!args.auto_pad.empty()) {
    apply_auto_pad(args.auto_pad, p);
  }
  p.ceil_mode = args.ceil_mode;
  if (p.op == Op::max && args.count_include_pad) throw InvalidInput("--count-include-pad applies to avg_pool only");
  if (p.op == Op::max && args.divisor_override) throw InvalidInput("--divisor-override applies to avg_pool only");
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

ForwardResult pool_forward(const PoolPlan& plan, const NpyArray& input) {
  const Problem& p = plan.problem;
  const ref::Forward f = ref::forward(p, values_of(input));
  ForwardResult r;
  r.output = array_of(p.dtype, plan.output_shape, f.y);
  if (p.op == Op::max) r.indices = encode_indices(p, plan.output_shape, f.index);
  return r;
}

NpyArray pool_backward(const PoolPlan& plan, const std::string& variant, const NpyArray& input,
                       const NpyArray& grad_output, const NpyArray* indices) {
  const Problem& p = plan.problem;
  check_grad_output(plan, grad_output.header);
  if (indices) check_indices(plan, indices->header);
  std::vector<double> dy = values_of(grad_output);
  std::vector<double> x = values_of(input);
  std::vector<int64_t> stored;
  ref::Gradient g;
  if (p.op == Op::avg) {
    g = ref::backward_avg(p, dy);
  } else if (indices) {
    stored = decode_indices(*indices);
    try {
      g = ref::backward_max_indices(p, dy, stored);
    } catch (const ref::BadIndex& e) {
      throw InvalidInput(std::string("--indices: ") + e.what());
    }
  } else {
    g = ref::backward_max_recompute(p, x, dy);
    stored = ref::forward(p, x).index;
  }
  if (variant == "oracle") return array_of(p.dtype, plan.input_shape, g.dx);

  const Variant& v = choose_variant(variant, p, indices != nullptr);
  NpyArray dx;
  dx.header.type = input.header.type;
  dx.header.shape = plan.input_shape;
  dx.data = run_variant(v, p, std::move(x), std::move(dy), std::move(stored), std::move(g));
  return dx;
}

}  // namespace pg
