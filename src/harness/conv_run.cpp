#include "src/harness/conv_run.hpp"

#include "kernels/common/numeric.hpp"
#include "reference/conv_reference.hpp"
#include "src/harness/conv_auto.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/model/invalid_input.hpp"
#include "src/model/run_errors.hpp"
#include "src/harness/npy_values.hpp"

namespace pg {

NpyArray conv_forward_npy(const ConvPlan& plan, const NpyArray& input, const NpyArray& weight) {
  check_conv_input(plan, input.header);
  return npy_from_values(plan.problem.dtype, plan.output_shape,
                  ref::conv_forward(plan.problem, npy_values(input), npy_values(weight)));
}

namespace {

const ConvVariant& choose_conv_variant(const std::string& name, const ConvProblem& p, const Backend& b) {
  if (name == "auto") {
    for (const std::string& first : conv_auto_order(p, b.kind()))
      if (const ConvVariant* v = find_conv_variant(first); v && v->supports(p, b.kind()).ok) return *v;
    for (const ConvVariant& v : conv_variants())
      if (v.supports(p, b.kind()).ok) return v;
    throw CannotRun("--variant auto: no registered conv variant supports this problem on " + b.name() + " (" +
                    conv_to_string(p) + ")");
  }
  const ConvVariant* v = find_conv_variant(name);
  if (!v) throw InvalidInput("--variant = " + name + " is not a registered conv variant (see poolgrad variants)");
  const Support s = v->supports(p, b.kind());
  if (!s.ok) throw CannotRun("--variant = " + name + " does not support this problem on " + b.name() + ": " + s.why);
  return *v;
}

}  // namespace

NpyArray conv_backward_npy(const ConvPlan& plan, const NpyArray& weight, const NpyArray& grad_output,
                           const std::string& variant, const std::string& backend_name) {
  check_conv_grad_output(plan, grad_output.header);
  const ConvProblem& p = plan.problem;
  if (variant == "oracle") {
    if (backend_name != "cpu") throw InvalidInput("--backend " + backend_name + " runs a --variant; the oracle runs on the host");
    return npy_from_values(p.dtype, plan.input_shape, ref::conv_backward_data(p, npy_values(grad_output), npy_values(weight)).dx);
  }
  const std::unique_ptr<Backend> backend = backend_by_name(backend_name);
  const ConvVariant& v = choose_conv_variant(variant, p, *backend);
  ConvHostData data;
  data.dy = npy_values(grad_output);
  data.w = npy_values(weight);
  ConvPreparedRun run(*backend, v, p, DataSpec{}, std::make_shared<const ConvExpected>(conv_expected_from(p, std::move(data))));
  const Outcome o = run.verify();
  if (o.status != Status::pass)
    throw Mismatch("--variant " + v.name + " disagrees with the oracle on these tensors (a kernel bug):\n" + o.message);
  NpyArray dx;
  dx.header.type = weight.header.type;
  dx.header.shape = plan.input_shape;
  dx.data = run.output();
  return dx;
}

}  // namespace pg
