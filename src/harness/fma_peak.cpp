#include "src/harness/fma_peak.hpp"

#include <algorithm>

#include "kernels/common/fma_chains.hpp"
#include "kernels/exports.hpp"

namespace pg {

double measure_fma_peak_tflops(Backend& b, int reps) {
  const DeviceInfo info = b.info();
  const bool gpu = b.kind() == BackendKind::gpu;
  // GPU: 2048 resident threads per multiprocessor (sm_90's maximum) on every one, rounds for
  // about half a millisecond at 60 TFLOP/s. CPU: a smoke-sized run.
  const int64_t items = gpu ? int64_t{2048} * std::max(1, info.multiprocessors) : int64_t{1} << 12;
  const int rounds = gpu ? 8192 : 256;  // multiples of the body's unroll (16)
  Buffer out(b, static_cast<size_t>(items) * sizeof(float));
  auto run = [&] {
    if (gpu) fma_chains_gpu(b.gpu_stream(), static_cast<float*>(out.get()), items, rounds);
    else fma_chains_cpu(static_cast<float*>(out.get()), items, rounds);
  };
  run();
  b.synchronize();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    b.timer_start();
    run();
    best = std::min(best, b.timer_stop_ms());
  }
  return fma_chains_flops(items, rounds) / (best * 1e-3) / 1e12;
}

}  // namespace pg
