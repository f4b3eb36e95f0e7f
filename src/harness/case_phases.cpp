#include "src/harness/case_phases.hpp"

#include <chrono>

namespace pg {
namespace {

using Clock = std::chrono::steady_clock;

struct ThreadPhases {
  Phase current = Phase::other;
  Clock::time_point since = Clock::now();
  PhaseTimes totals;

  // Charges the time since the last switch to the current phase.
  void settle() {
    const Clock::time_point now = Clock::now();
    totals.ns[static_cast<int>(current)] += std::chrono::duration_cast<std::chrono::nanoseconds>(now - since).count();
    since = now;
  }
};

thread_local ThreadPhases t_phases;

}  // namespace

const char* phase_name(Phase p) {
  static const char* names[kPhaseCount] = {"draw",     "oracle", "prepare", "poison", "kernel",
                                           "download", "check",  "compare", "other"};
  return names[static_cast<int>(p)];
}

PhaseTimes thread_phase_times() {
  t_phases.settle();
  return t_phases.totals;
}

PhaseScope::PhaseScope(Phase p) : outer_(t_phases.current) {
  t_phases.settle();
  t_phases.current = p;
}

PhaseScope::~PhaseScope() {
  t_phases.settle();
  t_phases.current = outer_;
}

}  // namespace pg
