// run_and_verify: the one definition of "correct" that `meson test`, fuzzing, `poolgrad check`
// and the benchmark all use.
//
// problem -> validate -> data -> oracle -> device buffers (outputs poisoned, every buffer
// inside sentinel bands) -> variant -> compare against the oracle's per-element bound ->
// report, with a replay line on failure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/backend.hpp"
#include "src/datagen.hpp"
#include "src/problem.hpp"
#include "src/registry.hpp"

namespace pg {

enum class Status { pass, fail, unsupported };

struct Outcome {
  Status status = Status::pass;
  std::string message;  // failure: problem, variant, first mismatches, replay line
  std::string replay;   // the one-line command that reruns this case
};

struct VerifyOptions {
  bool check_repeatable = true;  // deterministic variants: a second run must match bitwise
  int max_reported = 8;          // mismatches printed
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
Expected compute_expected(const Problem& p, const DataSpec& spec);

// A case on one backend: buffers allocated, inputs uploaded. launch() runs the variant once
// (for timing); verify() poisons dx, runs, downloads and compares.
class PreparedRun {
 public:
  PreparedRun(Backend& b, const Variant& v, const Problem& p, const DataSpec& spec,
              std::shared_ptr<const Expected> expected);
  ~PreparedRun();
  void launch();
  Outcome verify(const VerifyOptions& opt = {});
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

}  // namespace pg
