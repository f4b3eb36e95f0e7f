// Where a verified case's time goes, per thread: drawing it, the oracle, preparing buffers,
// poisoning dx, the kernel, downloading, checking inputs and bands, comparing with the oracle.
// A PhaseScope names the phase of the code it spans; time is charged to the innermost open scope,
// so nested scopes split their parent's time instead of counting it twice. A fuzz campaign reads a
// thread's totals around each case (fuzz/campaign.cpp) and reports them per lane: the profile of a
// GPU lane is `poolgrad fuzz --phases`. Cost: two clock reads per scope (~40 ns).
#pragma once

#include <array>
#include <cstdint>

namespace pg {

enum class Phase : int {
  draw,      // the case generator (RapidCheck, under its lock)
  oracle,    // data and the oracle's answer
  prepare,   // device buffers: allocation, encoding, upload of the inputs and bands
  poison,    // dx (and the workspace) poisoned again before each run
  kernel,    // the variant's launch (on the CPU backend the whole run; a GPU run is waited for in download)
  download,  // the wait for the run, then dx, the inputs and the band checks back to the host
  check,     // inputs untouched, dx's bands intact
  compare,   // dx against the oracle's bound, and the repeat run's bits
  other,     // outside every scope: scheduling, tags, the campaign's own work
};
inline constexpr int kPhaseCount = 9;

const char* phase_name(Phase p);

struct PhaseTimes {
  std::array<int64_t, kPhaseCount> ns{};

  PhaseTimes& operator+=(const PhaseTimes& o) {
    for (int i = 0; i < kPhaseCount; ++i) ns[i] += o.ns[i];
    return *this;
  }
  friend PhaseTimes operator-(PhaseTimes a, const PhaseTimes& b) {
    for (int i = 0; i < kPhaseCount; ++i) a.ns[i] -= b.ns[i];
    return a;
  }
};

// The calling thread's totals so far, the open scope's time up to now included.
PhaseTimes thread_phase_times();

class PhaseScope {
 public:
  explicit PhaseScope(Phase p);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase outer_;
};

}  // namespace pg
