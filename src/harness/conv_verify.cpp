#include "src/harness/conv_verify.hpp"

#include <filesystem>
#include <sstream>

#include "reference/conv_reference.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

std::string conv_coord_text(const ConvProblem& p, int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); }

}  // namespace

std::string conv_replay_command(const ConvProblem& p, const ConvVariant& v, const Backend& b, const DataSpec& spec) {
  return "poolgrad replay --problem '" + conv_to_string(p) + "' --data " + data_kind_name(spec.kind) + " --seed " +
         std::to_string(spec.seed) + " --variant " + v.name + " --backend " + b.name();
}

ConvExpected compute_conv_expected(const ConvProblem& p, const DataSpec& spec) {
  if (!conv_data_kind_ok(spec.kind))
    throw Error(std::string("conv data: kind ") + data_kind_name(spec.kind) + " has no conv data (ints or real)");
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

struct ConvPreparedRun::Impl {
  Backend& backend;
  const ConvVariant& variant;
  ConvProblem problem;
  DataSpec spec;
  std::shared_ptr<const ConvExpected> expected;
  Guarded dy, w, dx;
  Buffer workspace;
  ConvBuffers buffers;
  std::vector<unsigned char> output;
  std::string replay;
  std::filesystem::path failure_file;
  CrashReport crash;

  Impl(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& s, std::shared_ptr<const ConvExpected> e)
      : backend(b), variant(v), problem(p), spec(s), expected(std::move(e)), replay(conv_replay_command(p, v, b, s)),
        failure_file(failure_path(v.name, b.name(), s, conv_to_string(p))) {
    crash.text = header("crashed (out-of-bounds access)") + "  replay: " + replay + "\n";
    crash.dir = failure_file.parent_path().string();
    crash.path = failure_file.string();
  }

  std::string header(const std::string& what) const {
    return "FAIL " + variant.name + " on " + backend.name() + ": " + what + "\n" + "  problem: " + conv_to_string(problem) +
           "\n" + "  data: kind=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + "\n";
  }

  void launch() {
    const CrashArmed armed(crash);
    variant.launch(backend, problem, buffers);
    backend.synchronize();
  }

  // dx as downloaded after one run, bands included.
  std::vector<unsigned char> run_once() { return run_poisoned(backend, dx, workspace, [this] { launch(); }); }
};

ConvPreparedRun::ConvPreparedRun(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                                 std::shared_ptr<const ConvExpected> expected)
    : impl_(std::make_unique<Impl>(b, v, p, spec, std::move(expected))) {
  install_fault_handler();
  Impl& m = *impl_;
  const ConvExpected& e = *m.expected;
  m.dy = make_guarded_values(b, p.dtype, e.data.dy, "dy");
  m.w = make_guarded_values(b, p.dtype, e.data.w, "w");
  m.dx = make_guarded_poisoned(b, p.dtype, static_cast<size_t>(p.x_elems()) * dtype_size(p.dtype));
  const size_t ws = v.workspace_bytes(p);
  if (ws) m.workspace = Buffer(b, ws);
  m.buffers.dy = m.dy.data();
  m.buffers.w = m.w.data();
  m.buffers.dx = m.dx.data();
  m.buffers.workspace = m.workspace.get();
}

ConvPreparedRun::~ConvPreparedRun() = default;

void ConvPreparedRun::launch() {
  const CrashArmed armed(impl_->crash);
  impl_->variant.launch(impl_->backend, impl_->problem, impl_->buffers);
}

const std::vector<unsigned char>& ConvPreparedRun::output() const { return impl_->output; }

Outcome ConvPreparedRun::verify(const VerifyOptions& opt) {
  Impl& m = *impl_;
  const auto& e = *m.expected;
  CaseUnderTest c;
  c.backend = &m.backend;
  c.run_once = [&] { return m.run_once(); };
  c.inputs = {{&m.dy, "dy"}, {&m.w, "w"}};
  c.dx = &m.dx;
  c.dtype = m.problem.dtype;
  c.want = OracleAnswer{&e.dx, &e.abs_sum, &e.terms};
  c.coord = [&](int64_t i) { return conv_coord_text(m.problem, i); };
  c.header = [&](const std::string& what) { return m.header(what); };
  c.deterministic = m.variant.deterministic;
  c.replay = m.replay;
  c.failure_file = m.failure_file;
  return verify_run(c, opt, &m.output);
}

Outcome conv_run_and_verify(Backend& b, const ConvVariant& v, const ConvProblem& p, const DataSpec& spec,
                            std::shared_ptr<const ConvExpected> expected, const VerifyOptions& opt) {
  Outcome out;
  const std::string invalid = conv_validate(p);
  if (!invalid.empty()) {
    out.status = Status::fail;
    out.message = "invalid problem: " + invalid + "\n  problem: " + conv_to_string(p);
    return out;
  }
  const Support s = v.supports(p, b.kind());
  if (!s.ok) {
    out.status = Status::unsupported;
    out.message = v.name + " on " + b.name() + ": " + s.why;
    return out;
  }
  if (!expected) expected = std::make_shared<const ConvExpected>(compute_conv_expected(p, spec));
  ConvPreparedRun run(b, v, p, spec, std::move(expected));
  return run.verify(opt);
}

}  // namespace pg
