#include "src/verify.hpp"

#include <cstring>
#include <filesystem>
#include <sstream>

#include "reference/pool_reference.hpp"
#include "src/host_memory.hpp"
#include "src/verify_common.hpp"

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
         " --seed " + std::to_string(spec.seed) + " --variant " + v.name + " --backend " + b.name();
}

double case_host_bytes(const Problem& p) {
  const double in = static_cast<double>(p.in_elems()), out = static_cast<double>(p.out_elems());
  const double es = dtype_size(p.dtype);
  return in * (32 + 4 * es) + out * (32 + es) + 8.0 * kMaxBand;
}

Expected compute_expected(const Problem& p, const DataSpec& spec) {
  require_host_memory(case_host_bytes(p), "the case " + to_string(p));
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

struct PreparedRun::Impl {
  Backend& backend;
  const Variant& variant;
  Problem problem;
  DataSpec spec;
  std::shared_ptr<const Expected> expected;
  Guarded x, dy, indices, dx;
  Buffer workspace;
  BwdBuffers buffers;
  std::vector<unsigned char> output;  // dx payload of the last verify()
  std::string replay;
  std::filesystem::path failure_file;
  CrashReport crash;

  Impl(Backend& b, const Variant& v, const Problem& p, const DataSpec& s, std::shared_ptr<const Expected> e)
      : backend(b), variant(v), problem(p), spec(s), expected(std::move(e)),
        replay(replay_command(p, v, b, s)), failure_file(failure_path(v.name, b.name(), s, to_string(p))) {
    crash.text = header("crashed (out-of-bounds access)") + "  replay: " + replay + "\n";
    crash.dir = failure_file.parent_path().string();
    crash.path = failure_file.string();
  }

  // The first lines of every report: what went wrong, the problem and the data.
  std::string header(const std::string& what) const {
    return "FAIL " + variant.name + " on " + backend.name() + ": " + what + "\n" +
           "  problem: " + to_string(problem) + "\n" +
           "  data: kind=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + "\n";
  }

  void launch() {
    const CrashArmed armed(crash);
    variant.launch(backend, problem, buffers);
    backend.synchronize();
  }

  // dx as downloaded after one run, bands included.
  std::vector<unsigned char> run_once() {
    backend.upload(dx.buffer.get(), dx.host.data(), dx.host.size());
    if (workspace.bytes()) {
      const auto junk = poisoned(DType::f32, workspace.bytes());
      backend.upload(workspace.get(), junk.data(), junk.size());
    }
    launch();
    std::vector<unsigned char> out(dx.host.size());
    backend.download(out.data(), dx.buffer.get(), out.size());
    return out;
  }
};

PreparedRun::PreparedRun(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                         std::shared_ptr<const Expected> expected)
    : impl_(std::make_unique<Impl>(b, v, p, spec, std::move(expected))) {
  install_fault_handler();
  Impl& m = *impl_;
  const Expected& e = *m.expected;
  m.dy = make_guarded(b, encode_values(p.dtype, e.data.dy, "dy"), &p.dtype);
  if (v.inputs == Inputs::dy_and_x) m.x = make_guarded(b, encode_values(p.dtype, e.data.x, "x"), &p.dtype);
  // Index bands hold zeros: an out-of-bounds index read then routes a gradient to a wrong but
  // in-bounds place, which the comparison reports, instead of crashing the CPU backend.
  if (v.inputs == Inputs::dy_and_indices) m.indices = make_guarded(b, encode_indices(p.index_type, e.indices), nullptr);
  m.dx = make_guarded(b, poisoned(p.dtype, static_cast<size_t>(p.in_elems()) * dtype_size(p.dtype)), &p.dtype);
  const size_t ws = v.workspace_bytes(p);
  if (ws) m.workspace = Buffer(b, ws);
  m.buffers.x = m.x.buffer.get() ? m.x.data() : nullptr;
  m.buffers.dy = m.dy.data();
  m.buffers.indices = m.indices.buffer.get() ? m.indices.data() : nullptr;
  m.buffers.dx = m.dx.data();
  m.buffers.workspace = m.workspace.get();
}

PreparedRun::~PreparedRun() = default;

void PreparedRun::launch() {
  const CrashArmed armed(impl_->crash);
  impl_->variant.launch(impl_->backend, impl_->problem, impl_->buffers);
}

int64_t PreparedRun::minimal_bytes() const {
  const Problem& p = impl_->problem;
  const int64_t es = dtype_size(p.dtype);
  int64_t bytes = p.out_elems() * es + p.in_elems() * es;  // dy read, dx written
  if (impl_->variant.inputs == Inputs::dy_and_x) bytes += p.in_elems() * es;
  if (impl_->variant.inputs == Inputs::dy_and_indices) bytes += p.out_elems() * index_type_size(p.index_type);
  return bytes;
}

const std::vector<unsigned char>& PreparedRun::output() const { return impl_->output; }

Outcome PreparedRun::verify(const VerifyOptions& opt) {
  Impl& m = *impl_;
  const Problem& p = m.problem;
  const Expected& e = *m.expected;
  Outcome out;
  out.replay = m.replay;
  std::ostringstream msg;
  // `signature` names the kind of failure without its numbers: a campaign keeps one case per kind.
  auto header = [&](const std::string& what, const std::string& signature) {
    msg << m.header(what);
    out.signature = signature;
  };
  // "write past the end of dx (sentinel band changed at byte 9 of ...)" -> "write past the end of dx"
  auto without_detail = [](const std::string& what) { return what.substr(0, what.find(" (")); };
  auto finish_fail = [&] {
    msg << "  replay: " << out.replay;
    out.status = Status::fail;
    out.message = msg.str();
    // Before the caller sees it, whoever the caller is (run_and_verify, the agreement property,
    // the benchmark): a long fuzz run leaves every failing case behind to replay.
    if (opt.write_failure_file) write_failure_file(m.failure_file, out.message);
    return out;
  };
  // A run that throws (on a GPU: an illegal address reported by the runtime) is this case's
  // failure. Nothing more is asked of the backend after it: its context may be gone.
  auto run = [&](std::vector<unsigned char>* dx) {
    try {
      *dx = m.run_once();
      return true;
    } catch (const std::exception& ex) {
      header(std::string("the run failed: ") + ex.what(), "the run failed");
      return false;
    }
  };

  std::vector<unsigned char> first;
  if (!run(&first)) return finish_fail();
  for (auto [g, name] : {std::pair{&m.dy, "dy"}, {&m.x, "x"}, {&m.indices, "indices"}}) {
    const std::string bad = g->untouched(m.backend, name);
    if (!bad.empty()) {
      header(bad, without_detail(bad));
      return finish_fail();
    }
  }
  const std::string dx_bands = m.dx.band_damage(first, "dx");
  if (!dx_bands.empty()) {
    header(dx_bands, without_detail(dx_bands));
    return finish_fail();
  }

  const unsigned char* got = m.dx.payload_in(first);
  m.output.assign(got, got + m.dx.payload);
  const Mismatches bad = compare_with_oracle(p.dtype, got, OracleAnswer{&e.dx, &e.abs_sum, &e.terms}, opt.max_reported,
                                            [&](int64_t i) { return coord_text(p, i); });
  if (bad.wrong) {
    header(std::to_string(bad.wrong) + " of " + std::to_string(p.in_elems()) + " dx elements wrong",
           "dx elements wrong: " + bad.first_kind);
    msg << bad.detail;
    return finish_fail();
  }

  if (m.variant.deterministic && opt.check_repeatable) {
    std::vector<unsigned char> second;
    if (!run(&second)) return finish_fail();
    if (second != first) {
      header("deterministic variant gave different bits on a second run", "not repeatable");
      return finish_fail();
    }
  }
  return out;
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       std::shared_ptr<const Expected> expected, const VerifyOptions& opt) {
  Outcome out;
  const std::string invalid = validate(p);
  if (!invalid.empty()) {
    out.status = Status::fail;
    out.message = "invalid problem: " + invalid + "\n  problem: " + to_string(p);
    out.signature = "invalid problem";
    return out;
  }
  const Support s = v.supports(p, b.kind());
  if (!s.ok) {
    out.status = Status::unsupported;
    out.message = v.name + " on " + b.name() + ": " + s.why;
    return out;
  }
  if (!expected) expected = std::make_shared<const Expected>(compute_expected(p, spec));
  PreparedRun run(b, v, p, spec, std::move(expected));
  return run.verify(opt);
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       const VerifyOptions& opt) {
  return run_and_verify(b, v, p, spec, nullptr, opt);
}

}  // namespace pg
