#include "bench/engine.hpp"

#include <benchmark/benchmark.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "bench/timing.hpp"
#include "src/harness/copy.hpp"
#include "src/harness/host_memory.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"

namespace pg::bench {
namespace {

std::unique_ptr<Backend> g_backend;
double g_copy_gbps = 0;  // hipMemcpy device-to-device, bytes read + written
size_t g_copy_bytes = 0;
std::optional<std::chrono::steady_clock::time_point> g_deadline;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Where one benchmark's wall time went, summed over Google Benchmark's calls of its function (it
// calls it again with more iterations until --min-time is reached). The progress line prints it.
struct Spent {
  int calls = 0;
  double oracle = 0;  // the row's data and oracle answer, when this benchmark computed them
  double verify = 0;  // the variant's run prepared (inputs encoded, poisoned, uploaded) and verified
  double timed = 0;   // the timing loop
};
Spent g_spent;
// The row of each registered benchmark in registration order ("" for the copies): the progress
// lines close a row with its wall time.
std::vector<std::string> g_row_of;

// The ceiling's copy: 1 GiB on a GPU, far beyond L2; 64 MiB on the CPU, whose run is a smoke test.
constexpr size_t kGpuCopyBytes = size_t{1} << 30;
constexpr size_t kCpuCopyBytes = size_t{64} << 20;

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

// The benchmark loop (bench/timing.hpp) with the rate counters; returns the time per launch.
template <class Launch>
double timed_loop(benchmark::State& state, double bytes_per_launch, const Launch& launch, Timing mode = timing_mode()) {
  const double total_ms = pg::bench::timed_loop(state, *g_backend, launch, mode);
  set_rate(state, bytes_per_launch, total_ms);
  return total_ms / static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
}

// The harness's copy kernel moving `bytes` (half read, half written), timed as a variant is (the
// fastest of ten batches, replayed or issued as --timing says): what a row of that many bytes can
// reach. Up to about 32 MiB the buffers stay in L2 between launches, and timed by batch, a launch
// of up to 16 MiB costs what the host takes to issue it, 3.0-4.4 us
// (bench/results/2026-11-29_h200_copy_by_size.md). Measured once per size; -1 where the device
// has no room for the two buffers beside the row's own (the row is timed all the same).
double copy_ms_at(size_t bytes) {
  static std::map<size_t, double> measured;
  const size_t half = std::max<size_t>(bytes / 2, 16);
  if (const auto it = measured.find(half); it != measured.end()) return it->second;
  try {
    Backend& b = *g_backend;
    Buffer src(b, half), dst(b, half);
    return measured[half] = fastest_batch_ms(b, [&] { copy_kernel(b, dst.get(), src.get(), half); }, 10);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "no copy of the row's size timed: %s\n", e.what());
    return measured[half] = -1;
  }
}

// Issued, never replayed: a 1 GiB copy hides the host's cost of issuing it, and captured in a graph
// the runtime's copy ran at 81% of its issued speed (a memcpy node, not the copy the ceiling
// measures; H100, 2026-12-07, bench/results/2026-12-07_h100_replay.md).
void bench_memcpy(benchmark::State& state, size_t bytes) {
  Buffer src(*g_backend, bytes), dst(*g_backend, bytes);
  timed_loop(state, 2.0 * static_cast<double>(bytes), [&] { g_backend->copy(dst.get(), src.get(), bytes); }, Timing::batch);
}

void bench_copy_kernel(benchmark::State& state, size_t bytes) {
  Buffer src(*g_backend, bytes), dst(*g_backend, bytes);
  timed_loop(state, 2.0 * static_cast<double>(bytes), [&] { copy_kernel(*g_backend, dst.get(), src.get(), bytes); });
}

// Appends `n` copies of `one` to `out`.
template <class T>
void repeat_into(std::vector<T>* out, const std::vector<T>& one, int64_t n) {
  out->reserve(one.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out->insert(out->end(), one.begin(), one.end());
}

// The row's inputs and the oracle's answer (sample_expected), kept for the row's other variants:
// rows run one after another, so one row's answer is kept, not the suite's.
std::shared_ptr<const Expected> row_expected(const Row& row, const DataSpec& spec) {
  static std::string cached_row;
  static std::shared_ptr<const Expected> cached;
  if (cached_row != row.name) {
    cached.reset();  // free the last row's tensors before building this row's
    cached_row.clear();
    const auto t0 = Clock::now();
    require_host_memory(case_host_bytes(row.problem), "the row " + row.name);
    cached = sample_expected(row.problem, spec);
    cached_row = row.name;
    g_spent.oracle += seconds_since(t0);
  }
  return cached;
}

// The benchmark now running: its run, prepared and verified once and kept over Google Benchmark's
// calls of bench_variant (it calls it again with more iterations until --min-time is reached).
struct Current {
  const Variant* variant = nullptr;
  std::string row;
  std::unique_ptr<PreparedRun> run;
  Outcome check;
};
Current g_current;

void bench_variant(benchmark::State& state, const Variant* v, Row row) {
  Backend& b = *g_backend;
  const DataSpec spec{7, DataKind::real};
  ++g_spent.calls;
  if (g_current.variant != v || g_current.row != row.name) {
    g_current = {};  // the last benchmark's device buffers go before this one's are allocated
    if (g_deadline && Clock::now() > *g_deadline) {
      state.SkipWithError("not run: the time budget (--max-seconds) was spent");
      for (auto _ : state) {}
      return;
    }
    if (!sample_repeats(row.problem)) {
      state.SkipWithError("benchmark rows replicate per-plane indices; this row's format is not plane");
      for (auto _ : state) {}
      return;
    }
    g_current.variant = v;
    g_current.row = row.name;
    try {
      const auto expected = row_expected(row, spec);
      const auto t0 = Clock::now();
      // The very run that is timed, on the row's full problem: the benchmark never times a run it
      // has not verified.
      g_current.check = run_and_verify(b, *v, row.problem, spec, expected, {}, &g_current.run);
      g_spent.verify += seconds_since(t0);
    } catch (const std::exception& e) {  // no host memory for the row, data the dtype cannot hold
      g_current.check.status = Status::fail;
      g_current.check.message = e.what();
    }
    if (g_current.check.status != Status::pass)
      std::fprintf(stderr, "%s\n  (the benchmark's data: the batch-1 sample of seed %llu repeated over the batch; the "
                   "replay line draws the whole batch from the seed)\n",
                   g_current.check.message.c_str(), static_cast<unsigned long long>(spec.seed));
  }
  if (g_current.check.status != Status::pass) {
    const std::string& message = g_current.check.message;
    state.SkipWithError(("not verified: " + message.substr(0, message.find('\n'))).c_str());
    for (auto _ : state) {}
    return;
  }
  PreparedRun& run = *g_current.run;
  const auto t0 = Clock::now();
  const double ms = timed_loop(state, static_cast<double>(run.minimal_bytes()), [&] { run.launch(); });
  // The same bytes through the copy kernel: the ceiling at this row's size.
  const double copy_ms = copy_ms_at(static_cast<size_t>(run.minimal_bytes()));
  if (copy_ms > 0) {
    state.counters["copy_at_size_ms"] = copy_ms;
    state.counters["pct_copy_at_size"] = ms > 0 ? 100.0 * copy_ms / ms : 0;
  }
  // Selection's default never picks an atomic variant for an unmeasured problem when a
  // deterministic one runs it: the report says which is which.
  state.counters["deterministic"] = v->deterministic ? 1 : 0;
  state.counters["vendor"] = v->vendor ? 1 : 0;  // a comparator: never selection's pick
  g_spent.timed += seconds_since(t0);
  state.SetLabel(to_string(row.problem));
}

// One line per finished benchmark, so a long run shows where it is and where its time goes: the
// benchmark's wall time (from the previous line) and its parts; after a row's last benchmark, the
// row's wall time.
class ProgressReporter : public benchmark::BenchmarkReporter {
 public:
  explicit ProgressReporter(int total) : total_(total) {}
  bool ReportContext(const Context&) override {
    last_ = start_ = Clock::now();
    return true;
  }
  // Called once per benchmark with every repetition's run, and again with their aggregates.
  void ReportRuns(const std::vector<Run>& runs) override {
    bool any_run = false;
    for (const Run& r : runs) any_run = any_run || r.run_type != Run::RT_Aggregate;
    if (!any_run) return;
    ++done_;
    const double wall = seconds_since(last_);
    last_ = Clock::now();
    char spent[200];
    std::snprintf(spent, sizeof spent, "%.2f s wall (%d calls; oracle %.2f, prepare+verify %.2f, timed %.2f)", wall,
                  g_spent.calls, g_spent.oracle, g_spent.verify, g_spent.timed);
    g_spent = {};
    std::string name, times;
    const Run* failed = nullptr;
    double pct = 0;
    char at_size[64] = "";  // ", X% of a copy of its size" where the run timed one
    int repetitions = 0;
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Aggregate) continue;
      name = r.benchmark_name();
      if (const auto cut = name.rfind("/repeats:"); cut != std::string::npos) name.erase(cut);
      if (r.error_occurred) {
        failed = &r;
        continue;
      }
      char t[32];
      std::snprintf(t, sizeof t, "%s%.4f", times.empty() ? "" : " ", r.GetAdjustedRealTime());
      times += t;
      const auto it = r.counters.find("pct_copy");
      if (it != r.counters.end()) pct = it->second;
      if (const auto c = r.counters.find("pct_copy_at_size"); c != r.counters.end())
        std::snprintf(at_size, sizeof at_size, " (%.1f%% of a copy of its size)", c->second.value);
      ++repetitions;
    }
    if (failed)
      std::fprintf(stderr, "[%d/%d] %s: %s; %s\n", done_, total_, name.c_str(), failed->error_message.c_str(), spent);
    else
      std::fprintf(stderr, "[%d/%d] %s: %s ms%s, %.1f%% of copy%s; %s\n", done_, total_, name.c_str(), times.c_str(),
                   repetitions > 1 ? (" (" + std::to_string(repetitions) + " repetitions)").c_str() : "", pct, at_size,
                   spent);
    row_wall_ += wall;
    ++row_count_;
    const size_t at = static_cast<size_t>(done_ - 1);
    const std::string row = at < g_row_of.size() ? g_row_of[at] : "";
    const bool row_ends = at + 1 >= g_row_of.size() || g_row_of[at + 1] != row;
    if (row_ends && !row.empty())
      std::fprintf(stderr, "row done: %s: %d benchmarks, %.2f s wall; %.1f s since the start\n", row.c_str(),
                   row_count_, row_wall_, seconds_since(start_));
    if (row_ends) row_wall_ = 0, row_count_ = 0;
  }

 private:
  int total_, done_ = 0;
  Clock::time_point start_, last_;
  double row_wall_ = 0;
  int row_count_ = 0;
};

}  // namespace

bool sample_repeats(const Problem& p) { return p.op == Op::avg || p.index_format == IndexFormat::plane; }

std::shared_ptr<const Expected> sample_expected(const Problem& p, const DataSpec& spec) {
  if (!sample_repeats(p)) return std::make_shared<const Expected>(compute_expected(p, spec));
  Problem small = p;
  small.n = 1;
  finalize(small);
  const Expected one = compute_expected(small, spec);
  auto e = std::make_shared<Expected>();
  const int64_t n = p.n;
  {  // one thread per tensor: most rows' tensors are hundreds of MB
    std::vector<std::thread> pool;
    pool.emplace_back([&] { repeat_into(&e->data.x, one.data.x, n); });
    pool.emplace_back([&] { repeat_into(&e->data.dy, one.data.dy, n); });
    pool.emplace_back([&] { repeat_into(&e->indices, one.indices, n); });
    pool.emplace_back([&] { repeat_into(&e->dx, one.dx, n); });
    pool.emplace_back([&] { repeat_into(&e->abs_sum, one.abs_sum, n); });
    pool.emplace_back([&] { repeat_into(&e->terms, one.terms, n); });
    for (std::thread& th : pool) th.join();
  }
  return e;
}

bool open_backend(BackendKind kind, const std::string& suite, const std::string& command, std::string* why) {
#if defined(__GLIBC__)
  // A full-size row's host buffers (sentinel images, downloads) are hundreds of MB each, allocated
  // and freed for every variant. Above its mmap threshold (32 MB at most) glibc maps each from the
  // kernel afresh and unmaps it on free, so every page of every buffer faults on first touch;
  // kept in the heap, the next variant reuses the pages the last one freed. On a resnet50 stem row
  // (25.7M elements, CPU backend) that took the host side of a variant's prepare+verify from about
  // 1.3 s to 0.8 s. Only this process's benchmark run is affected: it holds its peak until exit.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  if (kind == BackendKind::gpu) {
    if (gpu_count(why) == 0) return false;
    g_backend = make_gpu_backend(0);
  } else {
    g_backend = make_cpu_backend();
  }
  const DeviceInfo info = g_backend->info();
  g_copy_bytes = kind == BackendKind::gpu ? kGpuCopyBytes : kCpuCopyBytes;
  g_copy_gbps = measure_memcpy_gbps(*g_backend, g_copy_bytes, 20);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  benchmark::AddCustomContext("device", info.name + " (" + info.arch + ")");
  benchmark::AddCustomContext("date", date);
  benchmark::AddCustomContext("commit", build_commit());
  benchmark::AddCustomContext("copy_ceiling_GBps", std::to_string(g_copy_gbps));
  benchmark::AddCustomContext("suite", suite);
  benchmark::AddCustomContext("command", command);
  benchmark::AddCustomContext("timing", to_string(timing_mode()));
  // 2: each run records its variant's determinism (bench/latest_reports.py takes only these).
  benchmark::AddCustomContext("poolgrad_report", "2");
  std::fprintf(stderr, "device: %s, copy ceiling %.0f GB/s (hipMemcpy D2D, %zu MiB, read+write)\n",
               info.name.c_str(), g_copy_gbps, g_copy_bytes >> 20);
  return true;
}

Backend& backend() { return *g_backend; }
double copy_ceiling_gbps() { return g_copy_gbps; }

void register_copy_benchmarks() {
  benchmark::RegisterBenchmark("copy/hipMemcpy_d2d", bench_memcpy, g_copy_bytes)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("copy/kernel_vec16", bench_copy_kernel, g_copy_bytes)->UseManualTime()->Unit(benchmark::kMillisecond);
  g_row_of.insert(g_row_of.end(), 2, "");
}

int register_rows(const std::vector<Row>& rows, const std::function<bool(const Variant&, const Row&)>& wanted) {
  int count = 0;
  for (const Row& row : rows)
    for (const Variant& v : variants()) {
      if (!v.supports(row.problem, g_backend->kind()).ok) continue;
      if (wanted && !wanted(v, row)) continue;
      benchmark::RegisterBenchmark((v.name + "/" + row.name).c_str(), bench_variant, &v, row)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
      g_row_of.push_back(row.name);
      ++count;
    }
  return count;
}

void set_time_budget(double seconds) {
  if (seconds > 0)
    g_deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  else g_deadline.reset();
}

void run_registered(bool progress, int total) {
  if (!progress) {
    benchmark::RunSpecifiedBenchmarks();
    g_current = {};
    return;
  }
  ProgressReporter display(total);
  benchmark::RunSpecifiedBenchmarks(&display);
  g_current = {};
}

}  // namespace pg::bench
