#include "src/harness/conv_verify.hpp"

#include <filesystem>
#include <optional>
#include <sstream>

#include "reference/conv_reference.hpp"
#include "src/harness/case_phases.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

std::string conv_coord_text(const ConvProblem& p, int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); }

}  // namespace

std::string conv_replay_command(const ConvProblem& p, const ConvVariant& v, const Backend& b, const DataSpec& spec) {
  return "poolgrad replay --problem '" + conv_to_string(p) + "' --data " + data_kind_name(spec.kind) + " --seed " +
         std::to_string(spec.seed) + " --variant " + v.name + " --backend " + b.name();
}

std::optional<ref::ConvBound> conv_model_bound(ConvErrorModel model, const ConvProblem& p, const std::vector<double>& dy,
                                               const std::vector<double>& w) {
  if (model == ConvErrorModel::direct) return std::nullopt;
  return ref::winograd_f4x4_bound(p, dy, w);
}

ConvExpected compute_conv_expected(const ConvProblem& p, const DataSpec& spec) {
  if (!conv_data_kind_ok(spec.kind))
    throw Error(std::string("conv data: kind ") + data_kind_name(spec.kind) + " has no conv data (ints or real)");
  const PhaseScope phase(Phase::oracle);
  return conv_expected_from(p, make_conv_data(p, spec));
}

ConvExpected conv_expected_from(const ConvProblem& p, ConvHostData data) {
  ConvExpected e;
  e.data = std::move(data);
  ref::ConvGradient g = ref::conv_backward_data(p, e.data.dy, e.data.w);
  e.dx = std::move(g.dx);
  e.abs_sum = std::move(g.abs_sum);
  e.terms = std::move(g.terms);
  return e;
}

struct ConvPreparedRun::Impl : RunState<ConvVariant, ConvProblem, ConvBuffers> {
  std::shared_ptr<const ConvExpected> expected;
  Guarded w;
  std::optional<ref::ConvBound> bound;  // the variant's own bound when its error model is not the direct sum's (at the first verify)

  Impl(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& s, std::shared_ptr<const ConvExpected> e)
      : RunState(b, v, p, s, conv_to_string(p), conv_replay_command(p, v, b, s)), expected(std::move(e)) {}
};

ConvPreparedRun::ConvPreparedRun(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                                 std::shared_ptr<const ConvExpected> expected)
    : impl_(std::make_unique<Impl>(b, v, p, spec, std::move(expected))) {
  const PhaseScope phase(Phase::prepare);
  Impl& m = *impl_;
  const ConvExpected& e = *m.expected;
  m.upload(e.data.dy, p.x_elems());
  m.w = make_guarded_values(b, p.dtype, e.data.w, "w");
  m.buffers.w = m.w.data();
}

ConvPreparedRun::~ConvPreparedRun() = default;

void ConvPreparedRun::launch() { impl_->launch(false); }

const std::vector<unsigned char>& ConvPreparedRun::output() const { return impl_->output; }

void ConvPreparedRun::start_verify(const VerifyOptions& opt) {
  Impl& m = *impl_;
  const ConvExpected& e = *m.expected;
  CaseUnderTest c = m.case_under_test();
  c.inputs = {{&m.dy, "dy"}, {&m.w, "w"}};
  // Computed here, not with the buffers: a prepared run that is only timed (conv_bench's full
  // batch) never compares, and the bound costs about what the oracle does.
  if (m.variant.error_model != ConvErrorModel::direct && !m.bound) {
    const PhaseScope oracle(Phase::oracle);
    m.bound = conv_model_bound(m.variant.error_model, m.problem, e.data.dy, e.data.w);
  }
  c.want = m.bound ? OracleAnswer{&e.dx, &m.bound->abs_sum, &m.bound->terms} : OracleAnswer{&e.dx, &e.abs_sum, &e.terms};
  c.coord = [p = &m.problem](int64_t i) { return conv_coord_text(*p, i); };
  m.start(c, opt);
}

Outcome ConvPreparedRun::finish_verify() { return impl_->finish(); }

Outcome ConvPreparedRun::verify(const VerifyOptions& opt) {
  start_verify(opt);
  return finish_verify();
}

Outcome conv_run_and_verify(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                            std::shared_ptr<const ConvExpected> expected, const VerifyOptions& opt) {
  return start_conv_run_and_verify(b, v, p, spec, &expected, opt)();
}

FinishVerify start_conv_run_and_verify(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                                       std::shared_ptr<const ConvExpected>* expected, const VerifyOptions& opt) {
  if (std::optional<Outcome> out = refused_case(b, v, p, conv_validate(p), conv_to_string(p))) return [out = *out] { return out; };
  if (!*expected) *expected = std::make_shared<const ConvExpected>(compute_conv_expected(p, spec));
  auto run = std::make_shared<ConvPreparedRun>(b, v, p, spec, *expected);
  run->start_verify(opt);
  return [run] { return run->finish_verify(); };
}

}  // namespace pg
