// The timing loop every poolgrad benchmark uses: GPU events around a batch of back-to-back
// launches (UseManualTime), time per launch.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>

#include "src/model/backend.hpp"

namespace pg::bench {

// Launches per timed batch, so that host-side launch overhead (between the start event and
// the kernel) hides behind queued work: about 1 ms of GPU time per batch.
template <class Launch>
int launches_per_batch(Backend& b, const Launch& launch) {
  b.timer_start();
  launch();
  const double once = b.timer_stop_ms();
  return static_cast<int>(std::clamp(1.0 / std::max(once, 1e-3), 1.0, 100.0));
}

// Runs the benchmark loop; returns the summed per-launch milliseconds of all iterations.
// One timed batch of `reps` back-to-back launches: ms per launch.
template <class Launch>
double batch_ms(Backend& b, const Launch& launch, int reps) {
  b.timer_start();
  for (int r = 0; r < reps; ++r) launch();
  return b.timer_stop_ms() / reps;
}

template <class Launch>
double timed_loop(benchmark::State& state, Backend& b, const Launch& launch) {
  launch();
  b.synchronize();
  const int reps = launches_per_batch(b, launch);
  double total = 0;
  for (auto _ : state) {
    const double ms = batch_ms(b, launch, reps);
    total += ms;
    state.SetIterationTime(ms * 1e-3);
  }
  state.counters["launches_per_batch"] = reps;
  return total;
}

// The same batches outside a benchmark: ms per launch, the fastest of `batches`.
template <class Launch>
double fastest_batch_ms(Backend& b, const Launch& launch, int batches) {
  launch();
  b.synchronize();
  const int reps = launches_per_batch(b, launch);
  double best = batch_ms(b, launch, reps);
  for (int i = 1; i < batches; ++i) best = std::min(best, batch_ms(b, launch, reps));
  return best;
}

}  // namespace pg::bench
