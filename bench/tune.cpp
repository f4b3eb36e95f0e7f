#include "bench/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>

#include "bench/engine.hpp"
#include "bench/timing.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/harness/host_memory.hpp"
#include "src/harness/selection.hpp"
#include "src/harness/verify.hpp"

namespace pg::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The median batch time per launch, over batches of about 1 ms (bench/timing.hpp, replayed as
// poolgrad bench times) until `min_time` seconds of batches and at least `repetitions` of them.
double time_run(Backend& b, PreparedRun& run, const TuneOptions& o, int* batches) {
  LaunchTimer t(b, [&] { run.launch(); }, timing_mode());
  std::vector<double> per_launch;
  double total_ms = 0;
  while (static_cast<int>(per_launch.size()) < o.repetitions || total_ms < o.min_time * 1e3) {
    const double ms = t.batch_ms();
    total_ms += ms * t.reps();
    per_launch.push_back(ms);
  }
  *batches = static_cast<int>(per_launch.size());
  std::sort(per_launch.begin(), per_launch.end());
  const size_t m = per_launch.size() / 2;
  return per_launch.size() % 2 ? per_launch[m] : 0.5 * (per_launch[m - 1] + per_launch[m]);
}

}  // namespace

TuneResult tune(Backend& b, const Problem& p, const TuneOptions& o, const std::function<void(const std::string&)>& progress) {
  const DataSpec spec{7, DataKind::real};
  require_host_memory(case_host_bytes(p), "tuning " + to_string(p));
  const std::shared_ptr<const Expected> expected = sample_expected(p, spec);
  TuneResult r;
  for (const Variant& v : variants()) {
    if (v.op != p.op || !v.supports(p, b.kind()).ok) continue;
    if (o.wanted && !o.wanted(v)) continue;
    TunedVariant t;
    t.variant = &v;
    std::unique_ptr<PreparedRun> run;
    const Outcome check = run_and_verify(b, v, p, spec, expected, {}, &run);
    if (check.status != Status::pass) {
      t.failure = check.message.substr(0, check.message.find('\n'));
      progress(v.name + ": NOT VERIFIED, not timed: " + check.message);
      r.failed.push_back(t);
      continue;
    }
    t.ms = time_run(b, *run, o, &t.batches);
    char line[300];
    std::snprintf(line, sizeof line, "%s: %.4f ms (median of %d batches)%s", v.name.c_str(), t.ms, t.batches,
                  v.vendor ? ", a vendor library's: a comparator" : "");
    progress(line);
    r.timed.push_back(t);
  }
  std::stable_sort(r.timed.begin(), r.timed.end(), [](const TunedVariant& a, const TunedVariant& c) { return a.ms < c.ms; });
  for (const TunedVariant& t : r.timed)
    if (!t.variant->vendor) {
      r.best = t.variant;
      break;
    }
  return r;
}

PerfDbEntry perfdb_entry(const Backend& b, const Problem& p, const TuneResult& r) {
  const DeviceInfo d = b.info();
  PerfDbEntry e;
  e.device = d.name;
  e.arch = d.arch;
  e.version = poolgrad_version();
  e.problem = to_string(p);
  e.class_key = problem_class(p);
  e.variant = r.best->name;
  for (const TunedVariant& t : r.timed) {
    e.timed.push_back({t.variant->name, t.ms});
    if (t.variant == r.best) e.ms = t.ms;
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  e.date = date;
  return e;
}

TuneResult tune_and_record(Backend& b, const Problem& p, const TuneOptions& o, const std::string& perfdb) {
  bool header = false;  // printed with the first variant: nothing at all when no variant runs p
  TuneResult r = tune(b, p, o, [&](const std::string& line) {
    if (!header)
      std::fprintf(stderr, "tune: %s on %s (%s)\n", to_string(p).c_str(), b.name().c_str(), b.info().name.c_str());
    header = true;
    std::fprintf(stderr, "  %s\n", line.c_str());
  });
  if (!r.best) return r;
  const std::string warning = record_perfdb(perfdb, {perfdb_entry(b, p, r)});
  forget_auto_tables();  // the next --variant auto reads the new entry
  if (!warning.empty()) std::fprintf(stderr, "poolgrad: %s\n", warning.c_str());
  std::fprintf(stderr, "tune: fastest verified: %s, %.4f ms; recorded in %s\n", r.best->name.c_str(),
               r.timed.front().variant == r.best ? r.timed.front().ms : perfdb_entry(b, p, r).ms, perfdb.c_str());
  return r;
}

}  // namespace pg::bench
