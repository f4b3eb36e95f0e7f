#include "src/harness/verify.hpp"

#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include "reference/pool_reference.hpp"
#include "src/harness/case_phases.hpp"
#include "src/harness/host_memory.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

std::vector<unsigned char> encode_indices(IndexType t, const std::vector<int64_t>& v) {
  std::vector<unsigned char> out(v.size() * index_type_size(t));
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t x = v[i];
    if (t == IndexType::i64) std::memcpy(out.data() + 8 * i, &x, 8);
    else if (t == IndexType::i32) { const int32_t y = static_cast<int32_t>(x); std::memcpy(out.data() + 4 * i, &y, 4); }
    else out[i] = x < 0 ? 255 : static_cast<uint8_t>(x);
  }
  return out;
}

std::string coord_text(const Problem& p, int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); }

}  // namespace

std::string replay_command(const Problem& p, const Variant& v, const Backend& b, const DataSpec& spec) {
  return "poolgrad replay --problem '" + to_string(p) + "' --data " + data_kind_name(spec.kind) +
         " --seed " + std::to_string(spec.seed) + " --variant " + v.name + " --backend " + b.name() +
         (v.plugin.empty() ? "" : " --plugin '" + v.plugin + "'");
}

double case_host_bytes(const Problem& p) {
  const double in = static_cast<double>(p.in_elems()), out = static_cast<double>(p.out_elems());
  const double es = dtype_size(p.dtype);
  return in * (32 + 4 * es) + out * (32 + es) + 8.0 * kMaxBand;
}

Expected compute_expected(const Problem& p, const DataSpec& spec) {
  require_host_memory(case_host_bytes(p), "the case " + to_string(p));
  const PhaseScope phase(Phase::oracle);
  Expected e;
  e.data = make_data(p, spec);
  ref::Gradient g;
  if (p.op == Op::max) {
    e.indices = ref::forward(p, e.data.x).index;
    if (spec.kind == DataKind::foreign) make_foreign(p, spec, &e.indices);
    g = ref::backward_max_indices(p, e.data.dy, e.indices, ref::ForeignIndex::skip);
  } else {
    g = ref::backward_avg(p, e.data.dy);
  }
  e.dx = std::move(g.dx);
  e.abs_sum = std::move(g.abs_sum);
  e.terms = std::move(g.terms);
  return e;
}

struct PreparedRun::Impl : RunState<Variant, Problem, BwdBuffers> {
  std::shared_ptr<const Expected> expected;
  Guarded x, indices;

  Impl(Backend& b, const Variant& v, const Problem& p, const DataSpec& s, std::shared_ptr<const Expected> e)
      : RunState(b, v, p, s, to_string(p), replay_command(p, v, b, s)), expected(std::move(e)) {}
};

PreparedRun::PreparedRun(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                         std::shared_ptr<const Expected> expected)
    : impl_(std::make_unique<Impl>(b, v, p, spec, std::move(expected))) {
  const PhaseScope phase(Phase::prepare);
  Impl& m = *impl_;
  const Expected& e = *m.expected;
  m.upload(e.data.dy, p.in_elems());
  if (v.inputs == Inputs::dy_and_x) m.x = make_guarded_values(b, p.dtype, e.data.x, "x");
  // Index bands hold zeros: an out-of-bounds index read then routes a gradient to a wrong but
  // in-bounds place, which the comparison reports, instead of crashing the CPU backend.
  if (v.inputs == Inputs::dy_and_indices) m.indices = make_guarded(b, encode_indices(p.index_type, e.indices), nullptr);
  m.buffers.x = m.x.buffer.get() ? m.x.data() : nullptr;
  m.buffers.indices = m.indices.buffer.get() ? m.indices.data() : nullptr;
}

PreparedRun::~PreparedRun() = default;

void PreparedRun::launch() { impl_->launch(false); }

int64_t PreparedRun::minimal_bytes() const {
  const Problem& p = impl_->problem;
  const int64_t es = dtype_size(p.dtype);
  int64_t bytes = p.out_elems() * es + p.in_elems() * es;  // dy read, dx written
  if (impl_->variant.inputs == Inputs::dy_and_x) bytes += p.in_elems() * es;
  if (impl_->variant.inputs == Inputs::dy_and_indices) bytes += p.out_elems() * index_type_size(p.index_type);
  return bytes;
}

const std::vector<unsigned char>& PreparedRun::output() const { return impl_->output; }

void PreparedRun::start_verify(const VerifyOptions& opt) {
  Impl& m = *impl_;
  const Expected& e = *m.expected;
  CaseUnderTest c = m.case_under_test();
  c.inputs = {{&m.dy, "dy"}, {&m.x, "x"}, {&m.indices, "indices"}};
  c.want = OracleAnswer{&e.dx, &e.abs_sum, &e.terms};
  c.coord = [p = &m.problem](int64_t i) { return coord_text(*p, i); };
  m.start(c, opt);
}

Outcome PreparedRun::finish_verify() { return impl_->finish(); }

Outcome PreparedRun::verify(const VerifyOptions& opt) {
  start_verify(opt);
  return finish_verify();
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       std::shared_ptr<const Expected> expected, const VerifyOptions& opt,
                       std::unique_ptr<PreparedRun>* kept) {
  if (std::optional<Outcome> out = refused_case(b, v, p, validate(p), to_string(p))) return *out;
  if (!expected) expected = std::make_shared<const Expected>(compute_expected(p, spec));
  auto run = std::make_unique<PreparedRun>(b, v, p, spec, std::move(expected));
  Outcome out = run->verify(opt);
  if (kept) *kept = std::move(run);
  return out;
}

FinishVerify start_run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                                  std::shared_ptr<const Expected>* expected, const VerifyOptions& opt) {
  if (std::optional<Outcome> out = refused_case(b, v, p, validate(p), to_string(p))) return [out = *out] { return out; };
  if (!*expected) *expected = std::make_shared<const Expected>(compute_expected(p, spec));
  auto run = std::make_shared<PreparedRun>(b, v, p, spec, *expected);
  run->start_verify(opt);
  return [run] { return run->finish_verify(); };
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       std::shared_ptr<const Expected> expected, const VerifyOptions& opt) {
  return run_and_verify(b, v, p, spec, std::move(expected), opt, nullptr);
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       const VerifyOptions& opt) {
  return run_and_verify(b, v, p, spec, nullptr, opt);
}

}  // namespace pg
