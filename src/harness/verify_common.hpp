// The pieces every verified run shares, pooling (src/harness/verify.cpp) and convolution
// (src/harness/conv_verify.cpp) alike: poisoned outputs in buffers of their own inside sentinel bands,
// inputs encoded exactly in the dtype, the per-element comparison with the oracle's bound,
// failure files, and the crash report of an access beyond the bands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/harness/datagen.hpp"
#include "src/model/dtype.hpp"
#include "src/model/problem.hpp"  // Layout, kAxes
#include "src/harness/verify.hpp"   // Outcome, VerifyOptions

namespace pg {

// The longest sentinel band on either side of a buffer (verify_common.cpp says why bands are
// as long as the payload up to this cap).
inline constexpr size_t kMaxBand = size_t{64} << 20;

// Bit patterns no kernel produces: NaNs with a payload. An element still holding one after a
// run was never written.
void poison_element(DType t, unsigned char* at);
uint64_t poison_pattern(DType t);  // the element's bytes, as a PatternRange holds them
std::vector<unsigned char> poisoned(DType t, size_t bytes);

// A device allocation of its own with sentinel bands: front band, payload, back band. The bands
// hold `pattern` repeated from each band's start (the dtype's poison, or zeros), written and
// checked on the backend (Backend::fill, read_back); only an input's payload crosses the bus.
struct Guarded {
  Buffer buffer;
  std::vector<unsigned char> payload_host;  // an input's payload as uploaded; empty for an output
  uint64_t pattern = 0;                     // its low pattern_bytes bytes, in memory order
  int pattern_bytes = 1;
  size_t front = 0, payload = 0, back = 0;

  void* data() const { return static_cast<unsigned char*>(buffer.get()) + front; }
  PatternRange front_band() const;
  PatternRange back_band() const;
  PatternRange whole() const;  // bands and payload: an output poisoned before a run

  // "" when neither band broke its pattern; else which band changed, with the changed byte
  // nearest the payload as an offset from the payload's start.
  std::string band_damage(const PatternBreak& front_break, const PatternBreak& back_break, const char* name) const;
};

// `band_fill` is the dtype whose poison fills the bands; none fills them with zeros.
Guarded make_guarded(Backend& b, const std::vector<unsigned char>& host_payload, const DType* band_fill);
// The same with the payload values encoded in `t` (refused as encode_values refuses them).
Guarded make_guarded_values(Backend& b, DType t, const std::vector<double>& v, const char* name);
// An output: bands and payload poisoned with `t`.
Guarded make_guarded_poisoned(Backend& b, DType t, size_t bytes);

std::string format_double(double v);

// "n=1,c=2,h=3,w=4": the coordinates of element i of an (N, C, spatial) tensor in `layout`, the
// spatial axes the last `dims` of `in`.
std::string element_coord_text(Layout layout, int dims, int64_t channels, const int64_t* in, int64_t i);

// Refuses values the dtype cannot hold: the kernel would see them rounded while the oracle's
// answer came from the exact ones, and the mismatch would be blamed on the kernel.
std::vector<unsigned char> encode_values(DType t, const std::vector<double>& v, const char* name);
// The same into `out` (v.size() elements of t), on host threads for a large tensor.
void encode_values_into(DType t, const std::vector<double>& v, const char* name, unsigned char* out);

// dx as a kernel wrote it against the oracle's answer, element by element.
struct OracleAnswer {
  const std::vector<double>* dx;
  const std::vector<double>* abs_sum;     // sum of |term| per element
  const std::vector<int64_t>* terms;      // terms summed per element
};
struct Mismatches {
  int64_t wrong = 0;
  std::string detail;      // the first max_reported, one line each, coordinates from `coord`
  std::string first_kind;  // the first wrong element's kind without numbers, for a failure's signature
};
// How far a sum of `terms` terms whose magnitudes add to abs_sum may lie from the exact sum,
// accumulated in t's accumulator type (f32 for f16 and bf16, before their one rounding).
double accumulation_bound(DType t, int64_t terms, double abs_sum);
Mismatches compare_with_oracle(DType t, const unsigned char* got, const OracleAnswer& want, int max_reported,
                               const std::function<std::string(int64_t)>& coord);

// One run of a prepared case: dx poisoned again and the workspace filled with junk (so a
// variant that reads it before writing shows), then `launch`.
void run_poisoned(Backend& b, const Guarded& dx, const Buffer& workspace, const std::function<void()>& launch);

// One prepared case of any op, as start_verify() and finish_verify() check it.
struct CaseUnderTest {
  Backend* backend = nullptr;
  // Poisons dx (and fills the workspace with junk) and launches once; start_verify queues the read back.
  std::function<void()> run_once;
  std::vector<std::pair<const Guarded*, const char*>> inputs;  // must stay as uploaded, bands included
  const Guarded* dx = nullptr;
  DType dtype = DType::f32;
  OracleAnswer want{};
  std::function<std::string(int64_t)> coord;       // a dx element's coordinates, for the report
  std::function<std::string(const std::string&)> header;  // "FAIL variant on backend: what" + problem + data lines
  bool deterministic = false;
  std::string replay;
  std::filesystem::path failure_file;
};

// The checks every verified run makes, in two halves so that a batch of cases waits for its
// backend once. start_verify() launches the run (and a deterministic variant's second run) and
// queues their read backs; finish_verify() collects them (one wait on a GPU for every run started
// on the backend before it) and checks, in order: the run itself (a throw is a failure), inputs
// untouched, dx's bands intact, every element within the oracle's bound, and for a deterministic
// variant the second run's bits the same. `output` gets dx as first downloaded. A failure is
// written to c.failure_file unless opt says not to. The object must not move in between: the
// backend writes its results into it.
struct StartedVerify {
  StartedVerify() = default;
  StartedVerify(const StartedVerify&) = delete;
  StartedVerify& operator=(const StartedVerify&) = delete;

  CaseUnderTest c;
  VerifyOptions opt;
  std::vector<std::vector<unsigned char>> inputs_now;  // the inputs as read back after the first run
  std::vector<unsigned char> first, second;            // dx after each run
  std::vector<PatternBreak> first_breaks, second_breaks;
  bool second_run = false;
  std::string first_error, second_error;  // a run that threw: what it said
};
void start_verify(const CaseUnderTest& c, const VerifyOptions& opt, StartedVerify* s);
Outcome finish_verify(StartedVerify& s, std::vector<unsigned char>* output);

// One file per failing case in the failure directory ($POOLGRAD_FAILURE_DIR, else
// poolgrad-failures/). The name holds variant, backend, data kind, seed and a hash of the problem,
// so no two cases share one; characters outside [A-Za-z0-9._-] become '_'.
std::filesystem::path failure_path(const std::string& variant, const std::string& backend, const DataSpec& spec,
                                   const std::string& problem_text);
void write_failure_file(const std::filesystem::path& path, const std::string& text);

// A case's crash report, formatted once when its run is prepared: on the CPU backend an access
// beyond a buffer's bands faults in guard pages, and the handler prints `text` to stderr and
// writes it to `path`, then ends the process by the signal. Launches on several threads at once
// each arm a slot of their own; the handler reports the faulting thread's.
struct CrashReport {
  std::string text, dir, path;
};
void install_fault_handler();

// Arms the handler with one case's report for the lifetime of the object (one launch).
struct CrashRecord;
class CrashArmed {
 public:
  explicit CrashArmed(const CrashReport& r);
  ~CrashArmed();
  CrashArmed(const CrashArmed&) = delete;
  CrashArmed& operator=(const CrashArmed&) = delete;

 private:
  CrashRecord* slot_ = nullptr;  // none free: the launch runs unarmed (a fault is then unreported)
};

// The outcome of a case that gets no run: a problem the op's validate() refused with `invalid`
// (`text` its problem line), or one variant `v` does not take on `b`; nullopt when it runs.
template <class V, class P>
std::optional<Outcome> refused_case(const Backend& b, const V& v, const P& p, const std::string& invalid,
                                    const std::string& text) {
  Outcome out;
  if (!invalid.empty()) {
    out.status = Status::fail;
    out.message = "invalid problem: " + invalid + "\n  problem: " + text;
    out.signature = "invalid problem";
    return out;
  }
  const Support s = v.supports(p, b.kind());
  if (!s.ok) {
    out.status = Status::unsupported;
    out.message = v.name + " on " + b.name() + ": " + s.why;
    return out;
  }
  return std::nullopt;
}

// What a prepared run of either op keeps beside its own inputs: where it runs, what, on which
// data, dy, dx and the workspace, the replay line, where a failure is written, and the crash report armed
// around each launch. PreparedRun and ConvPreparedRun build on it with their own inputs.
template <class V, class P, class Buffers>
struct RunState {
  Backend& backend;
  const V& variant;
  P problem;
  DataSpec spec;
  std::string problem_text;
  Guarded dy, dx;
  Buffer workspace;
  Buffers buffers;
  std::vector<unsigned char> output;  // dx payload of the last verify()
  std::unique_ptr<StartedVerify> started;  // between start() and finish()
  std::string replay;
  std::filesystem::path failure_file;
  CrashReport crash;

  RunState(Backend& b, const V& v, const P& p, const DataSpec& s, std::string text, std::string replay_line)
      : backend(b), variant(v), problem(p), spec(s), problem_text(std::move(text)), replay(std::move(replay_line)),
        failure_file(failure_path(v.name, b.name(), s, problem_text)) {
    crash.text = header("crashed (out-of-bounds access)") + "  replay: " + replay + "\n";
    crash.dir = failure_file.parent_path().string();
    crash.path = failure_file.string();
  }
  // Started and never finished (a batch cut short): its queued read backs write into `started`,
  // so they are completed before it goes. Never throws (a broken device's error was the run's).
  ~RunState() {
    if (!started) return;
    try {
      backend.collect();
    } catch (const std::exception&) {
    }
  }
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  // The first lines of every report: what went wrong, the problem and the data.
  std::string header(const std::string& what) const {
    return "FAIL " + variant.name + " on " + backend.name() + ": " + what + "\n" + "  problem: " + problem_text + "\n" +
           "  data: kind=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + "\n";
  }

  // One launch with the crash report armed; `sync` waits for it (a verified run), a timed one
  // leaves that to the timer.
  void launch(bool sync) {
    const CrashArmed armed(crash);
    variant.launch(backend, problem, buffers);
    if (sync) backend.synchronize();
  }

  // One verified run: dx poisoned, the launch (finish_verify's collect waits for it: one wait per
  // run instead of two on a GPU).
  void run_once() { run_poisoned(backend, dx, workspace, [this] { launch(false); }); }

  // The checks on `c` (case_under_test() completed by the op): start() launches and queues the
  // read backs, finish() collects, checks and keeps dx in `output`.
  void start(const CaseUnderTest& c, const VerifyOptions& opt) {
    started = std::make_unique<StartedVerify>();
    start_verify(c, opt, started.get());
  }
  Outcome finish() {
    const std::unique_ptr<StartedVerify> s = std::move(started);
    return finish_verify(*s, &output);
  }

  // The case as finish_verify() checks it, but for the inputs, the oracle's answer and coordinates.
  CaseUnderTest case_under_test() {
    CaseUnderTest c;
    c.backend = &backend;
    c.run_once = [this] { run_once(); };
    c.dx = &dx;
    c.dtype = problem.dtype;
    c.header = [this](const std::string& what) { return header(what); };
    c.deterministic = variant.deterministic;
    c.replay = replay;
    c.failure_file = failure_file;
    return c;
  }

  // dy uploaded, dx (dx_elems elements) poisoned, the workspace the variant asks for, and their
  // pointers in the buffers; the op's other inputs are its own to upload.
  void upload(const std::vector<double>& dy_values, int64_t dx_elems) {
    install_fault_handler();
    dy = make_guarded_values(backend, problem.dtype, dy_values, "dy");
    dx = make_guarded_poisoned(backend, problem.dtype, static_cast<size_t>(dx_elems) * dtype_size(problem.dtype));
    const size_t ws = variant.workspace_bytes(problem);
    if (ws) workspace = Buffer(backend, ws);
    buffers.dy = dy.data();
    buffers.dx = dx.data();
    buffers.workspace = workspace.get();
  }
};

}  // namespace pg
