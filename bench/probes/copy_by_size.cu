// The copy ceiling by size: the harness's 16-byte copy (kernels/common/copy.hpp) and a 16-byte
// fill, timed as poolgrad bench times a variant (a batch of back-to-back launches between two
// events, the fastest of several batches), at sizes from 1 MiB to 4 GiB of traffic; and the same
// copy as 100 launches captured in a CUDA graph and replayed, which takes the host's launch
// overhead out (graph_us): where the batch is slower than the graph, the host, not the GPU,
// bounds the batch.
// Build: nvcc -std=c++20 -O3 --expt-relaxed-constexpr -arch=sm_90a -I. bench/probes/copy_by_size.cu
#include <algorithm>
#include <cstdio>

#include "kernels/common/copy.hpp"

namespace pg {
struct FillVec16 {
  Vec16* dst;
  int64_t vectors, quarter;
  PG_HD void operator()(int64_t i) const {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t j = i + k * quarter;
      if (j < vectors) dst[j] = Vec16{{1u, 2u, 3u, 4u}};
    }
  }
};
}  // namespace pg

template <class F>
double best_ms(F&& launch, cudaEvent_t a, cudaEvent_t b) {
  launch();
  cudaDeviceSynchronize();
  // As many launches per batch as fill about 2 ms (at most 2000).
  cudaEventRecord(a);
  launch();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float one = 0;
  cudaEventElapsedTime(&one, a, b);
  const int reps = std::max(1, std::min(2000, static_cast<int>(2.0 / std::max(one, 1e-4f))));
  double best = 1e30;
  for (int t = 0; t < 20; ++t) {
    cudaEventRecord(a);
    for (int r = 0; r < reps; ++r) launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, static_cast<double>(ms) / reps);
  }
  return best;
}

// The copy as 100 launches in one CUDA graph, replayed: time per launch.
template <class F>
double graph_ms(F&& launch, cudaEvent_t a, cudaEvent_t b) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  constexpr int kLaunches = 100;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int r = 0; r < kLaunches; ++r) launch(s);
  cudaStreamEndCapture(s, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphLaunch(exec, s);
  cudaStreamSynchronize(s);
  double best = 1e30;
  for (int t = 0; t < 20; ++t) {
    cudaEventRecord(a, s);
    cudaGraphLaunch(exec, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, static_cast<double>(ms) / kLaunches);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  return best;
}

int main() {
  using namespace pg;
  const size_t max_traffic = size_t{4} << 30;
  void *src, *dst;
  cudaMalloc(&src, max_traffic / 2);
  cudaMalloc(&dst, max_traffic / 2);
  cudaMemset(src, 1, max_traffic / 2);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const GpuExec ex = GpuExec::on_stream(nullptr);
  std::printf("traffic_MiB,copy_us,copy_GBps,fill_us,fill_GBps,graph_copy_us,graph_copy_GBps\n");
  for (size_t traffic = size_t{1} << 20; traffic <= max_traffic; traffic *= 2) {
    const size_t half = traffic / 2;
    const double copy = best_ms([&] { copy_bytes(ex, dst, src, half); }, a, b);
    const int64_t vectors = static_cast<int64_t>(traffic / sizeof(Vec16)), quarter = (vectors + 3) / 4;
    // The fill writes `traffic` bytes, the copy's traffic all as stores, into src: up to its size.
    const bool fits = traffic <= max_traffic / 2;
    double fill = -1;
    if (fits) fill = best_ms([&] { ex.for_each(quarter, FillVec16{static_cast<Vec16*>(src), vectors, quarter}); }, a, b);
    const double graph = graph_ms([&](cudaStream_t s) { copy_bytes(GpuExec::on_stream(s), dst, src, half); }, a, b);
    std::printf("%zu,%.2f,%.0f,%.2f,%.0f,%.2f,%.0f\n", traffic >> 20, copy * 1e3, traffic / (copy * 1e6), fill * 1e3,
                fits ? traffic / (fill * 1e6) : 0.0, graph * 1e3, traffic / (graph * 1e6));
  }
  return 0;
}
