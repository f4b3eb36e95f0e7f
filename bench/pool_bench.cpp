// Google Benchmark over the baseline rows x every registered variant, on the first GPU (or the
// CPU backend with --backend=cpu, for a smoke run). The engine is bench/engine.hpp, which
// `poolgrad bench` runs too; this binary keeps Google Benchmark's own flags and console table.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "bench/engine.hpp"

int main(int argc, char** argv) {
  using namespace pg::bench;
  std::string which = "gpu";
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--backend=", 10) == 0) which = argv[i] + 10;
  std::string command;
  for (int i = 0; i < argc; ++i) {
    if (i) command += ' ';
    command += argv[i];
  }
  benchmark::Initialize(&argc, argv);
  const pg::BackendKind kind = which == "gpu" ? pg::BackendKind::gpu : pg::BackendKind::cpu;
  std::string why;
  if (!open_backend(kind, "baseline", command, &why)) {
    std::fprintf(stderr, "pool_bench: no GPU (%s); use --backend=cpu for a smoke run\n", why.c_str());
    return 77;
  }
  register_copy_benchmarks();
  // On the CPU a smoke run of the harness itself: the full rows take minutes per variant there.
  const std::vector<Row> rows = kind == pg::BackendKind::cpu ? resized(baseline_rows(), 1, 0) : baseline_rows();
  const int total = register_rows(rows, {});
  run_registered(false, total);
  benchmark::Shutdown();
  return 0;
}
