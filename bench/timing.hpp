// The timing loop every poolgrad benchmark uses: GPU events around a batch of back-to-back
// launches (UseManualTime), time per launch. The batch is captured once as a GPU graph and the
// graph replayed between the events (Timing::replay, the default), or the launches are issued
// again for each batch (Timing::batch, what every report before 2026-12-07 did).
//
// Why replay: issuing a launch costs the host 3.0-4.4 us, so a batch of launches of a kernel
// shorter than that times the host, not the kernel (2026-11-29_h200_copy_by_size.md: a copy of
// up to 16 MiB of traffic costs 3.5-4.3 us a launch in a batch, 1.4-2.1 us replayed). Work that
// cannot be captured (a plugin that launches on the device's default stream) is timed by batch,
// and the benchmark says so (LaunchTimer::replayed, the report's `graph` counter).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "src/harness/graph_replay.hpp"
#include "src/model/backend.hpp"

namespace pg::bench {

enum class Timing { replay, batch };

inline const char* to_string(Timing t) { return t == Timing::replay ? "replay" : "batch"; }

// How this process times (poolgrad bench --timing; replay unless set).
inline Timing& timing_mode() {
  static Timing mode = Timing::replay;
  return mode;
}

// Most launches a batch holds: about 1 ms of GPU time per batch, so that the host's cost of
// starting one (issuing the launches, or the graph) hides behind queued work. A graph may hold
// more, as its launches cost the host nothing each.
inline constexpr int kMaxBatchLaunches = 100;
inline constexpr int kMaxReplayLaunches = 1000;

// One launch timed by batches of `reps` back-to-back launches, replayed or issued.
class LaunchTimer {
 public:
  LaunchTimer(Backend& b, std::function<void()> launch, Timing want) : b_(b), launch_(std::move(launch)) {
    launch_();
    b_.synchronize();
    b_.timer_start();
    launch_();
    const double once = std::max(b_.timer_stop_ms(), 1e-3);
    const int most = want == Timing::replay ? kMaxReplayLaunches : kMaxBatchLaunches;
    reps_ = static_cast<int>(std::clamp(1.0 / once, 1.0, static_cast<double>(most)));
    if (want == Timing::replay) {
      replay_ = GraphReplay::capture(b_, [&] { issue(); }, &why_not_replayed_);
      if (!replay_) reps_ = std::min(reps_, kMaxBatchLaunches);
    } else {
      why_not_replayed_ = "--timing batch";
    }
    batch_ms();  // the first replay also uploads the graph
  }

  // One timed batch: ms per launch.
  double batch_ms() {
    b_.timer_start();
    if (replay_) replay_->launch();
    else issue();
    return b_.timer_stop_ms() / reps_;
  }

  int reps() const { return reps_; }
  bool replayed() const { return replay_ != nullptr; }
  const std::string& why_not_replayed() const { return why_not_replayed_; }

 private:
  void issue() {
    for (int r = 0; r < reps_; ++r) launch_();
  }

  Backend& b_;
  std::function<void()> launch_;
  int reps_ = 1;
  std::unique_ptr<GraphReplay> replay_;
  std::string why_not_replayed_;
};

// Runs the benchmark loop; returns the summed per-launch milliseconds of all iterations. Counters:
// launches per batch, and `graph`, 0 for a benchmark timed by batch (with --timing replay, work
// that could not be captured, which stderr names).
template <class Launch>
double timed_loop(benchmark::State& state, Backend& b, const Launch& launch, Timing mode = timing_mode()) {
  LaunchTimer t(b, launch, mode);
  if (mode == Timing::replay && !t.replayed() && b.kind() == BackendKind::gpu)
    std::fprintf(stderr, "  timed by batch, not replayed: %s\n", t.why_not_replayed().c_str());
  double total = 0;
  for (auto _ : state) {
    const double ms = t.batch_ms();
    total += ms;
    state.SetIterationTime(ms * 1e-3);
  }
  state.counters["launches_per_batch"] = t.reps();
  state.counters["graph"] = t.replayed() ? 1 : 0;
  return total;
}

// The same batches outside a benchmark: ms per launch, the fastest of `batches`.
template <class Launch>
double fastest_batch_ms(Backend& b, const Launch& launch, int batches) {
  LaunchTimer t(b, launch, timing_mode());
  double best = t.batch_ms();
  for (int i = 1; i < batches; ++i) best = std::min(best, t.batch_ms());
  return best;
}

}  // namespace pg::bench
