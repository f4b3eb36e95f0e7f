// Google Benchmark over the baseline rows x every registered variant, on the first GPU (or the
// CPU backend with --backend=cpu, for a smoke run).
//
// Each (variant, row) is first verified through run_and_verify on the same problem with the
// batch cut to 1 (the oracle is single-threaded; every (n, c) plane is computed the same way),
// and skipped with the failure as its error if wrong: only correct variants get a time.
// Timing: GPU events around a batch of back-to-back launches (UseManualTime), per launch. Counters: GB/s on the variant's
// minimal bytes (every input read once, dx written once) and that as % of a device-to-device
// copy of 1 GiB measured in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "bench/rows.hpp"
#include "bench/timing.hpp"
#include "src/backend.hpp"
#include "src/copy.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"

namespace pg::bench {
namespace {

std::unique_ptr<Backend> g_backend;
double g_copy_gbps = 0;  // hipMemcpy device-to-device, bytes read + written

void set_rate(benchmark::State& state, double bytes_per_iter, double total_ms) {
  const double gbps = bytes_per_iter * static_cast<double>(state.iterations()) / (total_ms * 1e-3) / 1e9;
  state.counters["GB/s"] = gbps;
  state.counters["pct_copy"] = g_copy_gbps > 0 ? 100.0 * gbps / g_copy_gbps : 0;
  state.counters["bytes"] = bytes_per_iter;
}

// Device-to-device copy through the runtime: the ceiling every row is compared with.
double measure_memcpy_gbps(Backend& b, size_t bytes, int reps) {
  Buffer src(b, bytes), dst(b, bytes);
  b.copy(dst.get(), src.get(), bytes);
  b.synchronize();
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    b.timer_start();
    b.copy(dst.get(), src.get(), bytes);
    best = std::min(best, b.timer_stop_ms());
  }
  return 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
}

// The benchmark loop (bench/timing.hpp) with the rate counters.
template <class Launch>
void timed_loop(benchmark::State& state, double bytes_per_launch, const Launch& launch) {
  set_rate(state, bytes_per_launch, pg::bench::timed_loop(state, *g_backend, launch));
}

void bench_memcpy(benchmark::State& state, size_t bytes) {
  Buffer src(*g_backend, bytes), dst(*g_backend, bytes);
  timed_loop(state, 2.0 * static_cast<double>(bytes), [&] { g_backend->copy(dst.get(), src.get(), bytes); });
}

void bench_copy_kernel(benchmark::State& state, size_t bytes) {
  Buffer src(*g_backend, bytes), dst(*g_backend, bytes);
  timed_loop(state, 2.0 * static_cast<double>(bytes), [&] { copy_kernel(*g_backend, dst.get(), src.get(), bytes); });
}

// The oracle's answer for a row with the batch cut to 1: every (n, c) plane is computed the
// same way, and the single-threaded oracle on a full row would cost minutes.
std::shared_ptr<const Expected> slice_expected(const Row& row, const DataSpec& spec) {
  static std::map<std::string, std::shared_ptr<const Expected>> cache;
  auto& slot = cache[row.name];
  if (!slot) {
    Problem small = row.problem;
    small.n = 1;
    finalize(small);
    slot = std::make_shared<const Expected>(compute_expected(small, spec));
  }
  return slot;
}

// Full-size inputs: the verified slice repeated over the batch. The batch is the outermost
// dimension in both layouts, and per-plane indices do not depend on it, so every sample is a
// valid copy of the slice.
std::shared_ptr<const Expected> full_inputs(const Row& row, const DataSpec& spec) {
  static std::map<std::string, std::shared_ptr<const Expected>> cache;
  auto& slot = cache[row.name];
  if (!slot) {
    const Expected& one = *slice_expected(row, spec);
    auto e = std::make_shared<Expected>();
    for (int64_t n = 0; n < row.problem.n; ++n) {
      e->data.x.insert(e->data.x.end(), one.data.x.begin(), one.data.x.end());
      e->data.dy.insert(e->data.dy.end(), one.data.dy.begin(), one.data.dy.end());
      e->indices.insert(e->indices.end(), one.indices.begin(), one.indices.end());
    }
    slot = e;
  }
  return slot;
}

void bench_variant(benchmark::State& state, const Variant* v, Row row) {
  Backend& b = *g_backend;
  const DataSpec spec{7, DataKind::real};
  if (row.problem.op == Op::max && row.problem.index_format != IndexFormat::plane) {
    state.SkipWithError("benchmark rows replicate per-plane indices; this row's format is not plane");
    for (auto _ : state) {}
    return;
  }
  Problem small = row.problem;
  small.n = 1;
  finalize(small);
  const Outcome check = run_and_verify(b, *v, small, spec, slice_expected(row, spec));
  if (check.status != Status::pass) {
    state.SkipWithError(("not verified: " + check.message.substr(0, check.message.find('\n'))).c_str());
    std::fprintf(stderr, "%s\n", check.message.c_str());
    for (auto _ : state) {}
    return;
  }
  PreparedRun run(b, *v, row.problem, spec, full_inputs(row, spec));
  timed_loop(state, static_cast<double>(run.minimal_bytes()), [&] { run.launch(); });
  state.SetLabel(row.name);
}

}  // namespace
}  // namespace pg::bench

int main(int argc, char** argv) {
  using namespace pg;
  using namespace pg::bench;
  std::string which = "gpu";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--backend=", 10) == 0) which = argv[i] + 10;
  benchmark::Initialize(&argc, argv);
  std::string why;
  if (which == "gpu") {
    if (gpu_count(&why) == 0) {
      std::fprintf(stderr, "pool_bench: no GPU (%s); use --backend=cpu for a smoke run\n", why.c_str());
      return 77;
    }
    g_backend = make_gpu_backend(0);
  } else {
    g_backend = make_cpu_backend();
  }
  const DeviceInfo info = g_backend->info();
  const size_t copy_bytes = which == "gpu" ? (size_t{1} << 30) : (size_t{64} << 20);
  g_copy_gbps = measure_memcpy_gbps(*g_backend, copy_bytes, 20);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  benchmark::AddCustomContext("device", info.name + " (" + info.arch + ")");
  benchmark::AddCustomContext("date", date);
  benchmark::AddCustomContext("copy_ceiling_GBps", std::to_string(g_copy_gbps));
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  benchmark::AddCustomContext("command", command);
  std::fprintf(stderr, "device: %s, copy ceiling %.0f GB/s (hipMemcpy D2D, %zu MiB, read+write)\n",
               info.name.c_str(), g_copy_gbps, copy_bytes >> 20);

  benchmark::RegisterBenchmark("copy/hipMemcpy_d2d", bench_memcpy, copy_bytes)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("copy/kernel_vec16", bench_copy_kernel, copy_bytes)->UseManualTime()->Unit(benchmark::kMillisecond);
  for (Row row : baseline_rows()) {
    if (g_backend->kind() == BackendKind::cpu) {
      // A smoke run of the harness itself: the full rows take minutes per variant on a CPU.
      row.problem.n = 1;
      finalize(row.problem);
    }
    for (const Variant& v : variants()) {
      if (!v.supports(row.problem, g_backend->kind()).ok) continue;
      benchmark::RegisterBenchmark((v.name + "/" + row.name).c_str(), bench_variant, &v, row)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
