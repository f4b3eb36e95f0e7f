// poolgrad's C++ API (libpoolgrad): problems, the oracle, the variant registry and plugins, the one
// definition of "correct" (run_and_verify), timing and fuzz campaigns: the code the poolgrad
// command runs, behind a surface that shows none of its internals.
//
// Versioned by POOLGRAD_VERSION_MAJOR/MINOR (poolgrad/version.h): a minor release only adds.
// Problems are plugin.h's poolgrad_problem, written and read as problem lines, the syntax every
// failure report prints and `poolgrad replay --problem` takes:
//
//   poolgrad::load_plugin("./libmine.so");
//   const poolgrad_problem p = poolgrad::parse_problem(
//       "op=max2d n=2 c=3 in=9x9 k=3x3 s=2x2 d=1x1 pb=1x1 pe=1x1 ceil=0 tie=first nan=propagate "
//       "idx=plane/i64 layout=ncdhw dtype=f32 padlimit=half avg3dcheck=1");
//   const poolgrad::Verdict v = poolgrad::run_and_verify("mine.max.scatter", p);
//   if (v.status != poolgrad::Verdict::pass) std::cerr << v.message;  // mismatches and the replay line
//
// Every function throws poolgrad::Error with one line naming the parameter at fault.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "poolgrad/plugin.h"
#include "poolgrad/version.h"

namespace poolgrad {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The version of the library linked (POOLGRAD_VERSION_STRING is the headers').
std::string version();

// --- Problems -----------------------------------------------------------------------------

// A problem line, parsed and validated; out[] is set.
poolgrad_problem parse_problem(const std::string& line);
std::string to_string(const poolgrad_problem& p);

// --- The oracle ---------------------------------------------------------------------------

// dx from the plain CPU oracle (double precision), tensors flat in the problem's layout: x and dy
// hold n*c*in and n*c*out elements. Max pooling recomputes each window's argmax from x with the
// problem's tie and NaN rules; average pooling reads dy only (x may be empty).
std::vector<double> oracle_backward(const poolgrad_problem& p, const std::vector<double>& x,
                                    const std::vector<double>& dy);

// --- Variants -----------------------------------------------------------------------------

struct VariantInfo {
  std::string name;   // e.g. max.gather.stored, or PLUGIN.VARIANT
  int32_t op = POOLGRAD_OP_MAX;
  int32_t inputs = POOLGRAD_INPUTS_DY;
  bool deterministic = false;
  bool runs_on_cpu = false, runs_on_gpu = false;  // runs_on_gpu: built for the GPU here
  std::string domain;  // the problems it computes, as `poolgrad variants` prints them
  std::string plugin;  // the shared library it came from; empty for poolgrad's own
};

// Every registered variant: poolgrad's own, then those of each plugin loaded.
std::vector<VariantInfo> variants();

// Loads a plugin's variants (poolgrad/plugin.h); a file already loaded is not loaded again.
// Call before anything else looks variants up.
void load_plugin(const std::string& path);

// "" when `variant` computes p on `backend` ("cpu", "gpu0", ...), else why it does not.
std::string supports(const std::string& variant, const poolgrad_problem& p, const std::string& backend = "cpu");

// --- Verification -------------------------------------------------------------------------

// The data a case runs on: small integers (exact sums), NaN/±inf and ties, reals in [-1, 1),
// and for stored-index variants indices no window produces, which a kernel must skip.
enum class Data { ints, special, real, foreign };

struct Verdict {
  enum Status { pass, fail, unsupported } status = pass;
  std::string message;  // fail: the problem, the first mismatches, the replay line; unsupported: why
  std::string replay;   // the poolgrad command that reruns this case
};

// The variant on the backend against the oracle: outputs poisoned, buffers inside sentinel
// bands, a second run bitwise equal for deterministic variants (docs/correctness.md).
// A failure is also written to $POOLGRAD_FAILURE_DIR (default poolgrad-failures/).
Verdict run_and_verify(const std::string& variant, const poolgrad_problem& p, const std::string& backend = "cpu",
                       Data data = Data::ints, uint64_t seed = 1);

// --- Timing -------------------------------------------------------------------------------

struct Timing {
  double ms = 0;         // the median of the runs
  double gb_per_s = 0;   // minimal bytes (each input read once, dx written once) over ms
  int runs = 0;
};

// Verifies the variant on p (throws Error on a mismatch), then times `runs` launches with the
// backend's timer (GPU events on a GPU).
Timing time_variant(const std::string& variant, const poolgrad_problem& p, const std::string& backend = "gpu0",
                    int runs = 20);

// --- Fuzz campaigns -----------------------------------------------------------------------

struct FuzzOptions {
  std::string variants = ".";  // regular expression on names
  std::string backend = "cpu"; // cpu, gpu (every GPU) or all
  int64_t cases = 100;         // per variant and backend
  uint64_t seed = 1;
  int jobs = 0;                // host threads; 0: every core
  std::string corpus = "poolgrad-cases";  // where shrunk failures are written
};

struct FuzzResult {
  int64_t cases = 0;                    // run and verified
  std::vector<std::string> case_files;  // one per distinct failure, replayable by `poolgrad replay FILE`
  std::string table;                    // the end table `poolgrad fuzz` prints
};

// A campaign of `poolgrad fuzz`: each variant's cases (pooling and conv backward-data) drawn
// from its domain, failures shrunk.
FuzzResult fuzz(const FuzzOptions& options);

}  // namespace poolgrad
