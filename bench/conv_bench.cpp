// Google Benchmark over the conv rows (bench/conv_rows.cpp) x every registered conv variant, on
// the first GPU (or the CPU backend with --backend=cpu, for a smoke run on shrunken rows).
//
// Each (variant, row) is first verified through conv_run_and_verify on the row with the batch
// cut to 1 (the oracle is single-threaded; every sample is computed the same way), and skipped
// with the failure as its error if wrong: only correct variants get a time. Timed inputs are
// that verified slice repeated over the batch. Timing: GPU events around a batch of
// back-to-back launches (bench/timing.hpp), per launch. Counters: TFLOP/s counted as the direct
// convolution (2 x N x K x output points x C/groups x taps per launch, whatever the variant
// does) and that as % of the FP32 FMA ceiling (kernels/common/fma_chains.hpp) measured at the
// start of the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "bench/conv_rows.hpp"
#include "bench/timing.hpp"
#include "src/model/backend.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/fma_peak.hpp"

namespace pg::bench {
namespace {

std::unique_ptr<Backend> g_backend;
double g_peak_tflops = 0;

ConvProblem with_batch_one(ConvProblem p) {
  p.n = 1;
  conv_finalize(p);
  return p;
}

std::shared_ptr<const ConvExpected> slice_expected(const ConvRow& row, const DataSpec& spec) {
  static std::map<std::string, std::shared_ptr<const ConvExpected>> cache;
  auto& slot = cache[row.name];
  if (!slot) slot = std::make_shared<const ConvExpected>(compute_conv_expected(with_batch_one(row.problem), spec));
  return slot;
}

// The verified slice's dy repeated over the batch (the batch is the outermost dimension in
// both layouts), the same weights. Only the inputs: nothing compares the full-size result.
std::shared_ptr<const ConvExpected> full_inputs(const ConvRow& row, const DataSpec& spec) {
  static std::map<std::string, std::shared_ptr<const ConvExpected>> cache;
  auto& slot = cache[row.name];
  if (!slot) {
    const ConvExpected& one = *slice_expected(row, spec);
    auto e = std::make_shared<ConvExpected>();
    e->data.w = one.data.w;
    for (int64_t n = 0; n < row.problem.n; ++n) e->data.dy.insert(e->data.dy.end(), one.data.dy.begin(), one.data.dy.end());
    slot = e;
  }
  return slot;
}

void bench_variant(benchmark::State& state, const ConvVariant* v, ConvRow row) {
  Backend& b = *g_backend;
  const DataSpec spec{7, DataKind::real};
  const Outcome check = conv_run_and_verify(b, *v, with_batch_one(row.problem), spec, slice_expected(row, spec));
  if (check.status != Status::pass) {
    state.SkipWithError(("not verified: " + check.message.substr(0, check.message.find('\n'))).c_str());
    std::fprintf(stderr, "%s\n", check.message.c_str());
    for (auto _ : state) {}
    return;
  }
  ConvPreparedRun run(b, *v, row.problem, spec, full_inputs(row, spec));
  const double total_ms = timed_loop(state, b, [&] { run.launch(); });
  const double tflops = 2 * row.problem.macs() * static_cast<double>(state.iterations()) / (total_ms * 1e-3) / 1e12;
  state.counters["TFLOP/s"] = tflops;
  state.counters["pct_fma_peak"] = g_peak_tflops > 0 ? 100 * tflops / g_peak_tflops : 0;
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
      std::fprintf(stderr, "conv_bench: no GPU (%s); use --backend=cpu for a smoke run\n", why.c_str());
      return 77;
    }
    g_backend = make_gpu_backend(0);
  } else {
    g_backend = make_cpu_backend();
  }
  const DeviceInfo info = g_backend->info();
  g_peak_tflops = measure_fma_peak_tflops(*g_backend, 20);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  benchmark::AddCustomContext("device", info.name + " (" + info.arch + ")");
  benchmark::AddCustomContext("date", date);
  benchmark::AddCustomContext("fma_peak_TFLOPs", std::to_string(g_peak_tflops));
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  benchmark::AddCustomContext("command", command);
  std::fprintf(stderr, "device: %s, FP32 FMA ceiling %.1f TFLOP/s (kernels/common/fma_chains.hpp)\n", info.name.c_str(),
               g_peak_tflops);

  for (ConvRow row : conv_rows()) {
    if (g_backend->kind() == BackendKind::cpu) {
      // A smoke run of the harness itself: the full rows take minutes per variant on a CPU.
      row.problem.n = 1;
      for (int a = 0; a < kAxes; ++a) row.problem.in[a] = std::min<int64_t>(row.problem.in[a], 8);
      conv_finalize(row.problem);
    }
    for (const ConvVariant& v : conv_variants()) {
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
