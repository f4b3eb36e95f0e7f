#include "src/harness/pool_run.hpp"

#include "src/harness/verify.hpp"

#include <cstring>
#include <sstream>

#include "reference/pool_reference.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/model/backend.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/npy_values.hpp"
#include "src/harness/registry.hpp"
#include "src/model/run_errors.hpp"
#include "src/harness/verify.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

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

const Variant& choose_variant(const std::string& name, const Problem& p, bool have_indices, const Backend& b) {
  if (name == "auto") {
    const AutoChoice c = choose_auto_variant(p, b.kind(), b.info(), [&](const Variant& v) {
      return v.inputs != Inputs::dy_and_indices || have_indices;
    });
    if (c.variant) return *c.variant;
    throw CannotRun("--variant auto: no registered variant supports this problem on " + b.name() + " (" +
                    to_string(p) + ")");
  }
  const Variant* v = find_variant(name);
  if (!v) throw InvalidInput("--variant = " + name + " is not registered (see poolgrad variants)");
  if (v->op != p.op)
    throw InvalidInput("--variant = " + name + " is a " + op_name(v->op) + " pooling variant, the op is " +
                       op_name(p.op) + " pooling");
  const Support s = v->supports(p, b.kind());
  if (!s.ok) throw CannotRun("--variant = " + name + " does not support this problem on " + b.name() + ": " + s.why);
  return *v;
}

// Runs a registered variant on backend `b` through PreparedRun, the path check, the fuzz and
// the benchmark take: the tensors' own values as the data, the oracle's gradient as the answer,
// so the variant's dx is verified (sentinels, poison, the per-element bound) before it is
// returned. A variant that disagrees with the oracle is an error, not an output.
std::vector<unsigned char> run_variant(Backend& backend, const Variant& v, const Problem& p, std::vector<double> x,
                                       std::vector<double> dy, std::vector<int64_t> indices, ref::Gradient g) {
  auto expected = std::make_shared<Expected>();
  expected->data.x = std::move(x);
  expected->data.dy = std::move(dy);
  expected->indices = std::move(indices);
  expected->dx = std::move(g.dx);
  expected->abs_sum = std::move(g.abs_sum);
  expected->terms = std::move(g.terms);
  PreparedRun run(backend, v, p, DataSpec{}, std::move(expected));
  const Outcome o = run.verify();
  if (o.status != Status::pass)
    throw Mismatch("--variant " + v.name + " disagrees with the oracle on these tensors (a kernel bug):\n" + o.message);
  return run.output();
}

}  // namespace

double pool_host_bytes(const PoolPlan& plan, bool through_variant) {
  const Problem& p = plan.problem;
  const double in = static_cast<double>(p.in_elems()), out = static_cast<double>(p.out_elems());
  const double es = dtype_size(p.dtype);
  const double own = in * (2 * es + 40) + out * (2 * es + 40);
  return own + (through_variant ? case_host_bytes(p) : 0);
}

ForwardResult pool_forward(const PoolPlan& plan, const NpyArray& input) {
  const Problem& p = plan.problem;
  const ref::Forward f = ref::forward(p, npy_values(input));
  ForwardResult r;
  r.output = npy_from_values(p.dtype, plan.output_shape, f.y);
  if (p.op == Op::max) r.indices = encode_indices(p, plan.output_shape, f.index);
  return r;
}

NpyArray pool_backward(const PoolPlan& plan, const std::string& variant, const NpyArray& input,
                       const NpyArray& grad_output, const NpyArray* indices, const std::string& backend_name) {
  // The backend first: a missing GPU is refused before the oracle's work.
  const std::unique_ptr<Backend> backend = variant == "oracle" ? nullptr : backend_by_name(backend_name);
  if (variant == "oracle" && backend_name != "cpu")
    throw InvalidInput("--backend " + backend_name + " runs a --variant; the oracle runs on the host");
  const Problem& p = plan.problem;
  check_grad_output(plan, grad_output.header);
  if (indices) check_indices(plan, indices->header);
  std::vector<double> dy = npy_values(grad_output);
  std::vector<double> x = npy_values(input);
  std::vector<int64_t> stored;
  ref::Gradient g;
  if (p.op == Op::avg) {
    g = ref::backward_avg(p, dy);
  } else if (indices) {
    stored = decode_indices(*indices);
    try {
      g = ref::backward_max_indices(p, dy, stored);
    } catch (const ref::BadIndex& e) {
      std::string what = e.what();
      // The oracle saw u8's no-tap marker 255 as kNoTap (-1); the message quotes the file's value.
      if (p.index_type == IndexType::u8 && stored[static_cast<size_t>(e.output_offset)] == ref::kNoTap)
        what.replace(0, what.find(" at output"), "index 255 (u8's no-tap marker)");
      throw InvalidInput("--indices: " + what);
    }
  } else {
    g = ref::backward_max_recompute(p, x, dy);
    stored = ref::forward(p, x).index;
  }
  if (variant == "oracle") return npy_from_values(p.dtype, plan.input_shape, g.dx);

  const Variant& v = choose_variant(variant, p, indices != nullptr, *backend);
  NpyArray dx;
  dx.header.type = input.header.type;
  dx.header.shape = plan.input_shape;
  dx.data = run_variant(*backend, v, p, std::move(x), std::move(dy), std::move(stored), std::move(g));
  return dx;
}

}  // namespace pg
