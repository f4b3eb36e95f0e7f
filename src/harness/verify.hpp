// run_and_verify: the one definition of "correct" that `meson test`, fuzzing, `poolgrad check`
// and the benchmark all use.
//
// problem -> validate -> data -> oracle -> device buffers (outputs poisoned, every buffer its
// own allocation inside sentinel bands at least its own size and at least 128 KiB on a GPU,
// 32 KiB on the CPU backend, whose guard pages fault beyond them) ->
// variant -> compare against the oracle's per-element bound (f16/bf16: the exact
// round-to-nearest-even of the f32 sum's range) -> report, with a replay line on failure.
//
// Every failure is written to the failure directory ($POOLGRAD_FAILURE_DIR, else
// poolgrad-failures/) by PreparedRun::verify before it returns, one file per case. On the CPU
// backend an access beyond the bands faults in guard pages; a handler installed by the first
// PreparedRun then prints the case's FAIL line, problem and replay line to stderr and the same
// file, and ends the process by the signal. Several cases may be verified at once, each on its
// own thread (the crash report names the faulting thread's case).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/harness/datagen.hpp"
#include "src/model/problem.hpp"
#include "src/harness/registry.hpp"

namespace pg {

enum class Status { pass, fail, unsupported };

struct Outcome {
  Status status = Status::pass;
  std::string message;  // failure: problem, variant, first mismatches, replay line
  std::string replay;   // the one-line command that reruns this case
  // failure: its kind without numbers ("dx elements wrong: outside the bound", "write past the
  // end of dx", "not repeatable"...), so that a campaign keeps one case per kind of failure
  std::string signature;
};

struct VerifyOptions {
  bool check_repeatable = true;  // deterministic variants: a second run must match bitwise
  int max_reported = 8;          // mismatches printed
  // false: a failure is only returned, not written to the failure directory (a fuzz campaign
  // writes its own case files, and shrinking would otherwise leave one file per step)
  bool write_failure_file = true;
};

// The replay command for a case.
std::string replay_command(const Problem& p, const Variant& v, const Backend& b,
                           const DataSpec& spec);

// The oracle's answer for one backward case, computed once and shared by every variant.
struct Expected {
  HostData data;
  std::vector<int64_t> indices;  // max: the oracle's forward indices in the problem's format
  std::vector<double> dx, abs_sum;
  std::vector<int64_t> terms;
};
// Throws OutOfHostMemory (src/harness/host_memory.hpp) before allocating when case_host_bytes(p) is
// more than the machine has.
Expected compute_expected(const Problem& p, const DataSpec& spec);

// Host bytes one case holds at its peak, an estimate: the oracle's x, dx, abs_sum and terms
// (8 bytes each per input element), dy, the forward's output and indices (8 each per output
// element), the harness's host copies at the dtype's size (poisoned dx, two downloads, the
// output kept; dy encoded), plus the sentinel bands. About 40 bytes per f16 input element: a
// 2^31-element f16 case needs ~90 GB.
double case_host_bytes(const Problem& p);

// A case on one backend: buffers allocated, inputs uploaded. launch() runs the variant once
// (for timing); verify() poisons dx, runs, downloads and compares. A run that throws (a GPU
// runtime error) is a failure of the case, not an exception.
class PreparedRun {
 public:
  PreparedRun(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
              std::shared_ptr<const Expected> expected);
  ~PreparedRun();
  void launch();
  Outcome verify(const VerifyOptions& opt = {});
  // verify() in two halves (src/harness/verify_common.hpp, start_verify): the runs launched and
  // their read backs queued; then collected and checked. Between them other runs may start on
  // the backend, and the first finish waits for all of them at once.
  void start_verify(const VerifyOptions& opt = {});
  Outcome finish_verify();
  // Bytes a perfect kernel moves: every input read once, dx written once.
  int64_t minimal_bytes() const;
  // dx as the last verify() downloaded it, in the problem's dtype and layout.
  const std::vector<unsigned char>& output() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Prepare + verify in one call. Unsupported variants come back as Status::unsupported with
// the reason; an invalid problem as Status::fail with validate()'s message.
Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       const VerifyOptions& opt = {});
Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       std::shared_ptr<const Expected> expected, const VerifyOptions& opt = {});
// run_and_verify() started, not finished: calling it collects and checks. A fuzz batch starts
// several cases on one backend, then finishes each, waiting for the device once. *expected is the
// case's oracle answer, shared by every variant that runs the case: computed here (and left there)
// when empty and the case runs. Starting throws where run_and_verify would (data the dtype cannot
// hold, out of host or device memory).
using FinishVerify = std::function<Outcome()>;
FinishVerify start_run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                                  std::shared_ptr<const Expected>* expected, const VerifyOptions& opt);
// The same, and when the case got as far as a prepared run (a valid problem the variant
// supports), the run is handed over to *kept after its verify(), whatever the outcome: its
// buffers hold the inputs it was verified on, so the benchmark times the very run it verified.
Outcome run_and_verify(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
                       std::shared_ptr<const Expected> expected, const VerifyOptions& opt,
                       std::unique_ptr<PreparedRun>* kept);

}  // namespace pg
