#include "src/verify.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reference/pool_reference.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

constexpr size_t kGuard = 256;  // bytes of sentinel band on each side of every buffer

// Bit patterns no kernel produces: NaNs with a payload. An element still holding one after a
// run was never written.
void poison_element(DType t, unsigned char* at) {
  switch (t) {
    case DType::f16: { const uint16_t v = 0x7da5; std::memcpy(at, &v, 2); break; }
    case DType::bf16: { const uint16_t v = 0x7fa5; std::memcpy(at, &v, 2); break; }
    case DType::f32: { const uint32_t v = 0x7fa5a5a5u; std::memcpy(at, &v, 4); break; }
    case DType::f64: { const uint64_t v = 0x7ff5a5a5a5a5a5a5ull; std::memcpy(at, &v, 8); break; }
  }
}

std::vector<unsigned char> poisoned(DType t, size_t bytes) {
  std::vector<unsigned char> out(bytes);
  const int size = dtype_size(t);
  for (size_t i = 0; i + size <= bytes; i += size) poison_element(t, out.data() + i);
  return out;
}

// A device allocation with sentinel bands; `host` holds band + payload + band as uploaded.
struct Guarded {
  Buffer buffer;
  std::vector<unsigned char> host;
  size_t payload = 0;

  void* data() const { return static_cast<unsigned char*>(buffer.get()) + kGuard; }
};

Guarded make_guarded(Backend& b, std::vector<unsigned char> host_payload, DType band) {
  Guarded g;
  g.payload = host_payload.size();
  g.host = poisoned(band, kGuard);
  g.host.insert(g.host.end(), host_payload.begin(), host_payload.end());
  const auto tail = poisoned(band, kGuard);
  g.host.insert(g.host.end(), tail.begin(), tail.end());
  g.buffer = Buffer(b, g.host.size());
  b.upload(g.buffer.get(), g.host.data(), g.host.size());
  return g;
}

std::vector<unsigned char> encode_values(DType t, const std::vector<double>& v) {
  std::vector<unsigned char> out(v.size() * dtype_size(t));
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t, out.data(), static_cast<int64_t>(i), v[i]);
  return out;
}

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

std::string coord_text(const Problem& p, int64_t i) {
  int64_t s[kAxes], n, c;
  if (p.layout == Layout::channels_first) {
    for (int a = kAxes - 1; a >= 0; --a) { s[a] = i % p.in[a]; i /= p.in[a]; }
    c = i % p.c; n = i / p.c;
  } else {
    c = i % p.c; i /= p.c;
    for (int a = kAxes - 1; a >= 0; --a) { s[a] = i % p.in[a]; i /= p.in[a]; }
    n = i;
  }
  static const char* names[] = {"d", "h", "w"};
  std::ostringstream o;
  o << "n=" << n << ",c=" << c;
  for (int a = kAxes - p.dims; a < kAxes; ++a) o << "," << names[a] << "=" << s[a];
  return o.str();
}

std::string format_double(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

}  // namespace

std::string replay_command(const Problem& p, const Variant& v, const Backend& b, const DataSpec& spec) {
  return "poolgrad replay --problem '" + to_string(p) + "' --data " + data_kind_name(spec.kind) +
         " --seed " + std::to_string(spec.seed) + " --variant " + v.name + " --backend " + b.name();
}

Expected compute_expected(const Problem& p, const DataSpec& spec) {
  Expected e;
  e.data = make_data(p, spec);
  ref::Gradient g;
  if (p.op == Op::max) {
    e.indices = ref::forward(p, e.data.x).index;
    g = ref::backward_max_indices(p, e.data.dy, e.indices);
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

  Impl(Backend& b, const Variant& v, const Problem& p, const DataSpec& s, std::shared_ptr<const Expected> e)
      : backend(b), variant(v), problem(p), spec(s), expected(std::move(e)) {}

  std::vector<unsigned char> run_once() {
    backend.upload(dx.buffer.get(), dx.host.data(), dx.host.size());
    if (workspace.bytes()) {
      const auto junk = poisoned(DType::f32, workspace.bytes());
      backend.upload(workspace.get(), junk.data(), junk.size());
    }
    variant.launch(backend, problem, buffers);
    backend.synchronize();
    std::vector<unsigned char> out(dx.host.size());
    backend.download(out.data(), dx.buffer.get(), out.size());
    return out;
  }

  // "" when an input buffer, bands included, is exactly as uploaded.
  std::string check_untouched(const Guarded& g, const char* name) {
    if (!g.buffer.get()) return "";
    std::vector<unsigned char> now(g.host.size());
    backend.download(now.data(), g.buffer.get(), now.size());
    if (std::memcmp(now.data(), g.host.data(), kGuard) != 0)
      return std::string("write before the start of ") + name + " (sentinel band changed)";
    if (std::memcmp(now.data() + kGuard + g.payload, g.host.data() + kGuard + g.payload, kGuard) != 0)
      return std::string("write past the end of ") + name + " (sentinel band changed)";
    if (std::memcmp(now.data() + kGuard, g.host.data() + kGuard, g.payload) != 0)
      return std::string("input ") + name + " was modified";
    return "";
  }
};

PreparedRun::PreparedRun(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                         std::shared_ptr<const Expected> expected)
    : impl_(std::make_unique<Impl>(b, v, p, spec, std::move(expected))) {
  Impl& m = *impl_;
  const Expected& e = *m.expected;
  m.dy = make_guarded(b, encode_values(p.dtype, e.data.dy), p.dtype);
  if (v.inputs == Inputs::dy_and_x) m.x = make_guarded(b, encode_values(p.dtype, e.data.x), p.dtype);
  if (v.inputs == Inputs::dy_and_indices) {
    auto bytes = encode_indices(p.index_type, e.indices);
    // Index bands hold zeros: an out-of-bounds index read then routes a gradient to a wrong
    // but in-bounds place, which the comparison reports, instead of crashing the CPU backend.
    m.indices = make_guarded(b, bytes, DType::f32);
    std::fill(m.indices.host.begin(), m.indices.host.begin() + kGuard, 0);
    std::fill(m.indices.host.end() - kGuard, m.indices.host.end(), 0);
    b.upload(m.indices.buffer.get(), m.indices.host.data(), m.indices.host.size());
  }
  m.dx = make_guarded(b, poisoned(p.dtype, static_cast<size_t>(p.in_elems()) * dtype_size(p.dtype)), p.dtype);
  const size_t ws = v.workspace_bytes(p);
  if (ws) m.workspace = Buffer(b, ws);
  m.buffers.x = m.x.buffer.get() ? m.x.data() : nullptr;
  m.buffers.dy = m.dy.data();
  m.buffers.indices = m.indices.buffer.get() ? m.indices.data() : nullptr;
  m.buffers.dx = m.dx.data();
  m.buffers.workspace = m.workspace.get();
}

PreparedRun::~PreparedRun() = default;

void PreparedRun::launch() { impl_->variant.launch(impl_->backend, impl_->problem, impl_->buffers); }

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
  out.replay = replay_command(p, m.variant, m.backend, m.spec);
  std::ostringstream msg;
  auto header = [&](const std::string& what) {
    msg << "FAIL " << m.variant.name << " on " << m.backend.name() << ": " << what << "\n"
        << "  problem: " << to_string(p) << "\n"
        << "  data: kind=" << data_kind_name(m.spec.kind) << " seed=" << m.spec.seed << "\n";
  };
  auto finish_fail = [&] {
    msg << "  replay: " << out.replay;
    out.status = Status::fail;
    out.message = msg.str();
    return out;
  };

  const std::vector<unsigned char> first = m.run_once();
  for (auto [g, name] : {std::pair{&m.dy, "dy"}, {&m.x, "x"}, {&m.indices, "indices"}}) {
    const std::string bad = m.check_untouched(*g, name);
    if (!bad.empty()) {
      header(bad);
      return finish_fail();
    }
  }
  if (std::memcmp(first.data(), m.dx.host.data(), kGuard) != 0) {
    header("write before the start of dx (sentinel band changed)");
    return finish_fail();
  }
  if (std::memcmp(first.data() + kGuard + m.dx.payload, m.dx.host.data() + kGuard + m.dx.payload, kGuard) != 0) {
    header("write past the end of dx (sentinel band changed)");
    return finish_fail();
  }

  m.output.assign(first.begin() + kGuard, first.begin() + kGuard + m.dx.payload);
  const unsigned char* got = first.data() + kGuard;
  const int es = dtype_size(p.dtype);
  unsigned char poison[8];
  poison_element(p.dtype, poison);
  const double u = unit_roundoff(p.dtype);
  // Smallest normal of the dtype times u: the absolute rounding error near zero.
  const double tiny = (p.dtype == DType::f16 ? 0x1p-14 : p.dtype == DType::f64 ? 0x1p-1022 : 0x1p-126) * u;
  int64_t wrong = 0;
  std::ostringstream detail;
  for (int64_t i = 0; i < p.in_elems(); ++i) {
    const double want = e.dx[i];
    const double have = load_as_double(p.dtype, got, i);
    std::string why;
    if (std::memcmp(got + i * es, poison, es) == 0) {
      why = "never written (still poisoned)";
    } else if (std::isnan(want) || std::isinf(want)) {
      if (!(std::isnan(want) ? std::isnan(have) : have == want)) why = "non-finite value differs";
    } else if (!std::isfinite(have)) {
      why = "non-finite where the oracle is finite";
    } else {
      const double bound = (static_cast<double>(e.terms[i]) + 2) * u * e.abs_sum[i] + tiny;
      if (std::fabs(have - want) > bound) why = "outside bound " + format_double(bound);
    }
    if (why.empty()) continue;
    if (wrong++ < opt.max_reported)
      detail << "  dx[" << coord_text(p, i) << "] (offset " << i << "): got " << format_double(have)
             << ", expected " << format_double(want) << " from " << e.terms[i] << " terms: " << why << "\n";
  }
  if (wrong) {
    header(std::to_string(wrong) + " of " + std::to_string(p.in_elems()) + " dx elements wrong");
    msg << detail.str();
    return finish_fail();
  }

  if (m.variant.deterministic && opt.check_repeatable) {
    const std::vector<unsigned char> second = m.run_once();
    if (second != first) {
      header("deterministic variant gave different bits on a second run");
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
  out = run.verify(opt);
  if (out.status == Status::fail) {
    // A file per failure, so a long fuzz run leaves its cases behind to replay.
    std::error_code ec;
    const char* dir_env = std::getenv("POOLGRAD_FAILURE_DIR");
    const std::filesystem::path dir = dir_env ? dir_env : "poolgrad-failures";
    std::filesystem::create_directories(dir, ec);
    std::ofstream(dir / (v.name + "-" + b.name() + "-" + std::to_string(spec.seed) + ".txt")) << out.message << "\n";
  }
  return out;
}

Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       const VerifyOptions& opt) {
  return run_and_verify(b, v, p, spec, nullptr, opt);
}

}  // namespace pg
