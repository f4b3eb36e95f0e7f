#include "src/harness/verify_common.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "kernels/common/numeric.hpp"
#include "src/harness/case_phases.hpp"
#include "reference/rounding.hpp"

namespace pg {
namespace {

// Sentinel bands on each side of every buffer: at least kMinBand (on a GPU), and as long as the payload up
// to kMaxBand, so that an index off by a whole (fuzz-sized) tensor still lands in a band. The cap
// keeps the benchmark's full-size tensors from tripling: uncapped, poisoning and uploading bands
// as large as a 537 MB tensor made a full pool_bench run take 9.4 minutes on an H100 (2026-11-23).
// Beyond a band the CPU backend's guard pages fault. Sizes are whole kBandGrain units,
// and the tail band takes up the payload's remainder, so a buffer's total is a multiple of the
// page size and the CPU backend's guard pages (src/harness/cpu_backend.cpp) start right after it: a
// write beyond a band faults there instead of landing in someone else's memory.
constexpr size_t kMinBand = size_t{128} << 10;
constexpr size_t kBandGrain = size_t{64} << 10;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// On the CPU backend any access beyond the bands faults in its guards (src/harness/cpu_backend.cpp):
// still a failure with its case file and replay line, but one that ends the process, so a
// campaign stops there. So the bands there are smaller, not gone: 32 KiB at least, in whole
// pages. The GPU floor of 128 KiB in 64 KiB grains was a third of a CPU campaign's time:
// poisoning, uploading, downloading and comparing ~300 KiB of bands per buffer for payloads of a
// few KiB (perf, 2026-11-24: memmove 19%, memset 10%, memcmp 7% of the samples).
constexpr size_t kCpuMinBand = size_t{32} << 10;
struct BandRule {
  size_t min, grain;
};
BandRule band_rule(const Backend& b) {
  if (b.kind() != BackendKind::cpu) return {kMinBand, kBandGrain};
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return {round_up(kCpuMinBand, page), page};
}

// Element loops over a whole tensor run in contiguous slices on host threads, one slice per 4M
// elements up to the machine's threads (a >2^31-element tensor takes a minute on one thread).
size_t slice_count(int64_t n) {
  constexpr int64_t kElementsPerSlice = int64_t{1} << 22;
  return static_cast<size_t>(
      std::clamp<int64_t>(n / kElementsPerSlice, 1, std::max(1u, std::thread::hardware_concurrency())));
}

// f(begin, end, s) for each slice s of [0, n), slice_count(n) of them.
template <class F>
void on_slices(int64_t n, const F& f) {
  const auto slices = static_cast<int64_t>(slice_count(n));
  if (slices == 1) {
    f(int64_t{0}, n, size_t{0});
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t s = 0; s < slices; ++s)
    pool.emplace_back(f, n * s / slices, n * (s + 1) / slices, static_cast<size_t>(s));
  for (std::thread& th : pool) th.join();
}

}  // namespace

void poison_element(DType t, unsigned char* at) {
  switch (t) {
    case DType::f16: { const uint16_t v = 0x7da5; std::memcpy(at, &v, 2); break; }
    case DType::bf16: { const uint16_t v = 0x7fa5; std::memcpy(at, &v, 2); break; }
    case DType::f32: { const uint32_t v = 0x7fa5a5a5u; std::memcpy(at, &v, 4); break; }
    case DType::f64: { const uint64_t v = 0x7ff5a5a5a5a5a5a5ull; std::memcpy(at, &v, 8); break; }
  }
}

uint64_t poison_pattern(DType t) {
  unsigned char one[8] = {};
  poison_element(t, one);
  uint64_t pattern;
  std::memcpy(&pattern, one, 8);
  return pattern;
}

std::vector<unsigned char> poisoned(DType t, size_t bytes) {
  std::vector<unsigned char> out(bytes);
  fill_host({{out.data(), bytes, poison_pattern(t), dtype_size(t)}});
  return out;
}

PatternRange Guarded::front_band() const { return {buffer.get(), front, pattern, pattern_bytes}; }

PatternRange Guarded::back_band() const {
  return {static_cast<unsigned char*>(buffer.get()) + front + payload, back, pattern, pattern_bytes};
}

PatternRange Guarded::whole() const { return {buffer.get(), front + payload + back, pattern, pattern_bytes}; }

std::string Guarded::band_damage(const PatternBreak& front_break, const PatternBreak& back_break,
                                 const char* name) const {
  if (front_break.last >= 0)
    return std::string("write before the start of ") + name + " (sentinel band changed at byte -" +
           std::to_string(front - static_cast<size_t>(front_break.last)) + ")";
  if (back_break.first >= 0)
    return std::string("write past the end of ") + name + " (sentinel band changed at byte " +
           std::to_string(payload + static_cast<size_t>(back_break.first)) + " of a " + std::to_string(payload) +
           "-byte buffer)";
  return "";
}

namespace {

// The pattern a band of `t`'s poison holds, or zeros.
void set_pattern(Guarded& g, const DType* band_fill) {
  if (!band_fill) return;
  g.pattern = poison_pattern(*band_fill);
  g.pattern_bytes = dtype_size(*band_fill);
}

// A guarded buffer of `payload` bytes on `b`: allocated with its bands, the bands filled there.
Guarded guarded_buffer(Backend& b, size_t payload, const DType* band_fill) {
  Guarded g;
  g.payload = payload;
  const BandRule rule = band_rule(b);
  g.front = round_up(std::max(rule.min, std::min(g.payload, kMaxBand)), rule.grain);
  g.back = g.front + (round_up(g.payload, rule.grain) - g.payload);
  set_pattern(g, band_fill);
  g.buffer = Buffer(b, g.front + g.payload + g.back);
  b.fill({g.front_band(), g.back_band()});
  return g;
}

// An input: its payload encoded once on the host (`fill` writes it), kept, and uploaded.
template <class Fill>
Guarded guarded_input(Backend& b, size_t payload, const DType* band_fill, const Fill& fill) {
  Guarded g = guarded_buffer(b, payload, band_fill);
  g.payload_host.resize(payload);
  if (payload == 0) return g;  // an empty vector's data() may be null, which memcpy must not get
  fill(g.payload_host.data());
  b.upload(g.data(), g.payload_host.data(), payload);
  return g;
}

}  // namespace

// `band_fill` is the dtype whose poison fills the bands; none fills them with zeros.
Guarded make_guarded(Backend& b, const std::vector<unsigned char>& host_payload, const DType* band_fill) {
  return guarded_input(b, host_payload.size(), band_fill,
                       [&](unsigned char* at) {
                         // An empty payload's data() may be null, which memcpy must not get.
                         if (!host_payload.empty()) std::memcpy(at, host_payload.data(), host_payload.size());
                       });
}

Guarded make_guarded_values(Backend& b, DType t, const std::vector<double>& v, const char* name) {
  return guarded_input(b, v.size() * static_cast<size_t>(dtype_size(t)), &t,
                       [&](unsigned char* at) { encode_values_into(t, v, name, at); });
}

Guarded make_guarded_poisoned(Backend& b, DType t, size_t bytes) {
  Guarded g = guarded_buffer(b, bytes, &t);
  b.fill({g.whole()});
  return g;
}

std::string element_coord_text(Layout layout, int dims, int64_t channels, const int64_t* in, int64_t i) {
  int64_t s[kAxes], n, c;
  if (layout == Layout::channels_first) {
    for (int a = kAxes - 1; a >= 0; --a) { s[a] = i % in[a]; i /= in[a]; }
    c = i % channels; n = i / channels;
  } else {
    c = i % channels; i /= channels;
    for (int a = kAxes - 1; a >= 0; --a) { s[a] = i % in[a]; i /= in[a]; }
    n = i;
  }
  static const char* names[] = {"d", "h", "w"};
  std::ostringstream o;
  o << "n=" << n << ",c=" << c;
  for (int a = kAxes - dims; a < kAxes; ++a) o << "," << names[a] << "=" << s[a];
  return o.str();
}

std::string format_double(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

std::vector<unsigned char> encode_values(DType t, const std::vector<double>& v, const char* name) {
  std::vector<unsigned char> out(v.size() * dtype_size(t));
  encode_values_into(t, v, name, out.data());
  return out;
}

void encode_values_into(DType t, const std::vector<double>& v, const char* name, unsigned char* out) {
  // Each slice stops at its first value the dtype does not hold; the error names the first such
  // value of the whole tensor, as one thread would.
  const auto n = static_cast<int64_t>(v.size());
  std::vector<int64_t> first_bad(slice_count(n), n);
  on_slices(n, [&](int64_t begin, int64_t end, size_t s) {
    for (int64_t i = begin; i < end; ++i) {
      const double want = v[static_cast<size_t>(i)];
      store_from_double(t, out, i, want);
      const double stored = load_as_double(t, out, i);
      if (!(stored == want || (std::isnan(stored) && std::isnan(want)))) {
        first_bad[s] = i;
        return;
      }
    }
  });
  const int64_t i = *std::min_element(first_bad.begin(), first_bad.end());
  if (i < n)
    throw Error(std::string("verified run: ") + name + "[" + std::to_string(i) + "] = " +
                format_double(v[static_cast<size_t>(i)]) + " is not a " + dtype_name(t) +
                " value (the data must be exact in the problem's dtype)");
}

void write_failure_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream(path) << text << "\n";
}

std::filesystem::path failure_path(const std::string& variant, const std::string& backend, const DataSpec& spec,
                                   const std::string& problem_text) {
  const char* dir_env = std::getenv("POOLGRAD_FAILURE_DIR");
  const std::filesystem::path dir = dir_env && *dir_env ? dir_env : "poolgrad-failures";
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (const unsigned char ch : problem_text) hash = (hash ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  std::string name = variant + "-" + backend + "-" + data_kind_name(spec.kind) + "-seed" + std::to_string(spec.seed) +
                     "-" + hex;
  for (char& ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_')) ch = '_';
  return dir / (name + ".txt");
}

// f32/f64 accumulate in their own type: |have - want| <= (terms + 2) u abs_sum + tiny, with u
// the dtype's unit roundoff and tiny its smallest normal times u (the absolute error near 0).
// f16/bf16 accumulate in f32 and round once: the f32 sum lies within a = that bound for f32 of
// want, and round-to-nearest-even is monotonic, so have must lie between RNE(want - a) and
// RNE(want + a). Anything looser lets a truncating narrowing pass.
double accumulation_bound(DType t, int64_t terms, double abs_sum) {
  const DType acc_type = dtype_size(t) == 2 ? DType::f32 : t;
  const double u = unit_roundoff(acc_type);
  const double tiny = (acc_type == DType::f64 ? 0x1p-1022 : 0x1p-126) * u;
  return (static_cast<double>(terms) + 2) * u * abs_sum + tiny;
}

Mismatches compare_with_oracle(DType t, const unsigned char* got, const OracleAnswer& want, int max_reported,
                               const std::function<std::string(int64_t)>& coord) {
  const int es = dtype_size(t);
  unsigned char poison[8];
  poison_element(t, poison);
  const bool half = es == 2;
  // The elements are compared in slices on host threads (a >2^31-element dx takes a minute on
  // one); each slice counts its wrong elements and keeps its first max_reported, and the report
  // takes them in element order, the same text as one thread would write.
  auto compare = [&](int64_t begin, int64_t end, Mismatches* slice) {
    std::ostringstream detail;
    for (int64_t i = begin; i < end; ++i) {
      const auto at = static_cast<size_t>(i);
      const double expected = (*want.dx)[at];
      const double have = load_as_double(t, got, i);
      const double bound = accumulation_bound(t, (*want.terms)[at], (*want.abs_sum)[at]);
      // Within the bound: right (NaN, infinities and poison fail this test and are examined
      // below). For f16/bf16 a value within it also lies within the rounded interval, as
      // rounding is monotonic and the value is representable: no rounding to compute.
      if (std::fabs(have - expected) <= bound) continue;
      std::string why, kind;
      if (std::memcmp(got + i * es, poison, es) == 0) {
        why = "never written (still poisoned)";
        kind = "never written";
      } else if (std::isnan(expected) || std::isinf(expected)) {
        if (!(std::isnan(expected) ? std::isnan(have) : have == expected)) why = kind = "non-finite value differs";
      } else if (std::isnan(have)) {
        why = kind = "NaN where the oracle is finite";
      } else if (half) {
        // Infinity is right here when the rounded sum overflows the dtype.
        const double lo = ref::round_nearest_even(t, expected - bound);
        const double hi = ref::round_nearest_even(t, expected + bound);
        if (!(lo <= have && have <= hi))
          why = "outside [" + format_double(lo) + ", " + format_double(hi) + "], expected +-" + format_double(bound) +
                " (the f32 sum's bound) rounded to " + dtype_name(t);
        kind = "outside the bound";
      } else if (!std::isfinite(have)) {
        why = kind = "non-finite where the oracle is finite";
      } else if (std::fabs(have - expected) > bound) {
        why = "outside bound " + format_double(bound);
        kind = "outside the bound";
      }
      if (why.empty()) continue;
      if (slice->first_kind.empty()) slice->first_kind = kind;
      if (slice->wrong++ < max_reported)
        detail << "  dx[" << coord(i) << "] (offset " << i << "): got " << format_double(have) << ", expected "
               << format_double(expected) << " from " << (*want.terms)[at] << " terms: " << why << "\n";
    }
    slice->detail = detail.str();
  };
  const auto n = static_cast<int64_t>(want.dx->size());
  std::vector<Mismatches> results(slice_count(n));
  on_slices(n, [&](int64_t begin, int64_t end, size_t s) { compare(begin, end, &results[s]); });
  Mismatches out;
  int64_t reported = 0;
  for (const Mismatches& r : results) {
    if (out.first_kind.empty()) out.first_kind = r.first_kind;
    // Only the first max_reported lines of the whole tensor, as one thread would write.
    std::istringstream lines(r.detail);
    for (std::string line; reported < max_reported && std::getline(lines, line); ++reported) out.detail += line + "\n";
    out.wrong += r.wrong;
  }
  return out;
}

void run_poisoned(Backend& b, const Guarded& dx, const Buffer& workspace, const std::function<void()>& launch) {
  {
    const PhaseScope phase(Phase::poison);
    std::vector<PatternRange> ranges = {dx.whole()};
    if (workspace.bytes()) ranges.push_back({workspace.get(), workspace.bytes(), poison_pattern(DType::f32), 4});
    b.fill(ranges);
  }
  const PhaseScope phase(Phase::kernel);
  launch();
}

namespace {

// One run of a started verification: dx poisoned, the launch, and dx's payload into *dx and its
// bands' breaks into *breaks queued, with `reads` and `bands` (the inputs') before them. A run
// that throws is recorded in *error, and nothing more is asked of the backend.
void run_and_read_later(const CaseUnderTest& c, std::vector<unsigned char>* dx, std::vector<Read> reads,
                        std::vector<PatternRange> bands, std::vector<PatternBreak>* breaks, std::string* error) {
  try {
    c.run_once();
    const PhaseScope phase(Phase::download);
    dx->resize(c.dx->payload);
    reads.push_back({dx->data(), c.dx->data(), c.dx->payload});
    bands.push_back(c.dx->front_band());
    bands.push_back(c.dx->back_band());
    c.backend->read_back_later(reads, bands, breaks);
  } catch (const std::exception& ex) {
    *error = ex.what();
  }
}

}  // namespace

void start_verify(const CaseUnderTest& c, const VerifyOptions& opt, StartedVerify* s) {
  s->c = c;
  s->opt = opt;
  // The first run reads back the inputs too: their payloads and bands must be as uploaded.
  s->inputs_now.assign(c.inputs.size(), {});
  std::vector<Read> input_reads;
  std::vector<PatternRange> input_bands;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Guarded& g = *c.inputs[i].first;
    if (!g.buffer.get()) continue;
    s->inputs_now[i].resize(g.payload);
    input_reads.push_back({s->inputs_now[i].data(), g.data(), g.payload});
    input_bands.push_back(g.front_band());
    input_bands.push_back(g.back_band());
  }
  run_and_read_later(c, &s->first, input_reads, input_bands, &s->first_breaks, &s->first_error);
  // A deterministic variant's second run is queued behind the first (its read back of dx comes
  // first on the stream), whatever the first will show: one wait covers both.
  s->second_run = c.deterministic && opt.check_repeatable && s->first_error.empty();
  if (s->second_run) run_and_read_later(c, &s->second, {}, {}, &s->second_breaks, &s->second_error);
}

Outcome finish_verify(StartedVerify& s, std::vector<unsigned char>* output) {
  const CaseUnderTest& c = s.c;
  const VerifyOptions& opt = s.opt;
  Outcome out;
  out.replay = c.replay;
  std::ostringstream msg;
  // `signature` names the kind of failure without its numbers: a campaign keeps one case per kind.
  auto header = [&](const std::string& what, const std::string& signature) {
    msg << c.header(what);
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
    if (opt.write_failure_file) write_failure_file(c.failure_file, out.message);
    return out;
  };
  // A run that throws (on a GPU: an illegal address reported by the runtime, at the launch or at
  // the wait for the read back) is this case's failure. Nothing more is asked of the backend
  // after it: its context may be gone.
  auto failed_run = [&](const std::string& what) {
    header("the run failed: " + what, "the run failed");
    return finish_fail();
  };
  if (!s.first_error.empty()) return failed_run(s.first_error);
  try {
    const PhaseScope phase(Phase::download);
    c.backend->collect();
  } catch (const std::exception& ex) {
    return failed_run(ex.what());
  }

  std::optional<PhaseScope> phase(Phase::check);
  const std::vector<PatternBreak>& breaks = s.first_breaks;
  size_t band = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const auto& [g, name] = c.inputs[i];
    if (!g->buffer.get()) continue;
    std::string bad = g->band_damage(breaks[band], breaks[band + 1], name);
    band += 2;
    if (bad.empty() && g->payload && std::memcmp(s.inputs_now[i].data(), g->payload_host.data(), g->payload) != 0)
      bad = std::string("input ") + name + " was modified";
    if (!bad.empty()) {
      header(bad, without_detail(bad));
      return finish_fail();
    }
  }
  const std::string dx_bands = c.dx->band_damage(breaks[band], breaks[band + 1], "dx");
  if (!dx_bands.empty()) {
    header(dx_bands, without_detail(dx_bands));
    return finish_fail();
  }

  phase.emplace(Phase::compare);
  const auto keep_copy = [&] { *output = s.first; };
  const Mismatches bad = compare_with_oracle(c.dtype, s.first.data(), c.want, opt.max_reported, c.coord);
  if (bad.wrong) {
    keep_copy();
    header(std::to_string(bad.wrong) + " of " + std::to_string(c.want.dx->size()) + " dx elements wrong",
           "dx elements wrong: " + bad.first_kind);
    msg << bad.detail;
    return finish_fail();
  }

  if (s.second_run) {
    if (!s.second_error.empty()) {
      keep_copy();
      return failed_run(s.second_error);
    }
    const std::string second_bands = c.dx->band_damage(s.second_breaks[0], s.second_breaks[1], "dx");
    if (!second_bands.empty()) {
      keep_copy();
      header(second_bands + " on the second run", without_detail(second_bands));
      return finish_fail();
    }
    if (s.second != s.first) {
      keep_copy();
      header("deterministic variant gave different bits on a second run", "not repeatable");
      return finish_fail();
    }
  }
  *output = std::move(s.first);
  return out;
}

// --- A crash during a launch --------------------------------------------------------------------
// On the CPU backend an access beyond a buffer's bands faults in the guard pages. The handler
// turns the fault into the report any failure gets, on stderr and in the failure file. A signal
// handler may only make async-signal-safe calls (write, open, close, mkdir, sigaction, raise), so
// the report is formatted before each launch into fixed buffers, armed while the launch runs.
// Several launches may run at once, each from its own thread (a fuzz campaign's jobs): each
// arms a slot of its own, and the handler reports the slot of the faulting thread, or, when a
// helper thread of a launch faulted, every armed slot.

struct CrashRecord {
  std::atomic<bool> taken{false};
  std::atomic<bool> armed{false};
  pthread_t owner{};
  char text[8192];
  size_t text_len;
  char dir[4096];  // created component by component: the handler has only mkdir
  char path[4096];
};

namespace {

constexpr int kCrashSlots = 256;  // concurrent launches; more than any machine's cores
CrashRecord g_crash[kCrashSlots];
std::atomic_flag g_crash_reporting = ATOMIC_FLAG_INIT;
struct sigaction g_previous_segv, g_previous_bus;

void write_all(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void report_crash(CrashRecord& r) {
  write_all(STDERR_FILENO, r.text, r.text_len);
  for (char* c = r.dir + 1; *c; ++c)
    if (*c == '/') {
      *c = '\0';
      mkdir(r.dir, 0777);
      *c = '/';
    }
  mkdir(r.dir, 0777);
  const int fd = open(r.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    write_all(fd, r.text, r.text_len);
    close(fd);
  }
}

void on_fault(int sig, siginfo_t*, void*) {
  // Several threads can fault at once: one reports, the others wait for its re-raise.
  if (g_crash_reporting.test_and_set())
    for (;;) pause();
  const pthread_t self = pthread_self();
  bool reported = false;
  for (CrashRecord& r : g_crash)
    if (r.armed.load() && pthread_equal(r.owner, self)) {
      report_crash(r);
      reported = true;
    }
  if (!reported) {
    static const char several[] = "a helper thread of one of these launches faulted:\n";
    bool any = false;
    for (const CrashRecord& r : g_crash) any = any || r.armed.load();
    if (any) write_all(STDERR_FILENO, several, sizeof several - 1);
    for (CrashRecord& r : g_crash)
      if (r.armed.load()) report_crash(r);
  }
  // The action before ours, re-raised: the signal stays pending until this handler returns and
  // then ends the process as it would have without us (by the signal, so a core dump still can).
  sigaction(sig, sig == SIGBUS ? &g_previous_bus : &g_previous_segv, nullptr);
  raise(sig);
}

}  // namespace

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous_segv);
    sigaction(SIGBUS, &sa, &g_previous_bus);
  });
}

namespace {

size_t copy_truncated(char* dst, size_t cap, const std::string& src) {
  const size_t n = std::min(src.size(), cap - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
  return n;
}

}  // namespace

CrashArmed::CrashArmed(const CrashReport& r) {
  for (CrashRecord& slot : g_crash)
    if (!slot.taken.exchange(true)) {
      slot_ = &slot;
      break;
    }
  if (!slot_) return;
  slot_->owner = pthread_self();
  slot_->text_len = copy_truncated(slot_->text, sizeof slot_->text, r.text);
  copy_truncated(slot_->dir, sizeof slot_->dir, r.dir);
  copy_truncated(slot_->path, sizeof slot_->path, r.path);
  slot_->armed.store(true);
}

CrashArmed::~CrashArmed() {
  if (!slot_) return;
  slot_->armed.store(false);
  slot_->taken.store(false);
}

}  // namespace pg
