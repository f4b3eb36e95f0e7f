// `poolgrad tune PROBLEM OPTIONS [--backend cpu|gpuN] [--perfdb FILE]`: every variant that supports
// the problem, verified and timed on it (bench/tune.hpp); the fastest verified one is recorded in
// the user perf-db, where every later --variant auto finds it first.
#include <cstdio>
#include <regex>

#include "bench/tune.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/exit_codes.hpp"
#include "src/model/invalid_input.hpp"
#include "src/model/run_errors.hpp"
#include "src/harness/selection.hpp"

namespace pg {
namespace {

int run(TuneCommandOptions& o) {
  if (!sized_problem_given(o.cmd)) throw InvalidInput("a problem is required: --op ... --input-size ... --kernel-size ...");
  const Problem p = sized_problem(o.cmd, o.problem);
  if (!(o.min_time > 0)) throw InvalidInput("--min-time = " + std::to_string(o.min_time) + " must be > 0 seconds");
  if (o.repetitions < 1) throw InvalidInput("--repetitions = " + std::to_string(o.repetitions) + " must be >= 1");
  std::regex filter;
  try {
    filter = std::regex(o.variants_regex.empty() ? "." : o.variants_regex);
  } catch (const std::regex_error& e) {
    throw InvalidInput("--variants = " + o.variants_regex + " is not a regular expression: " + e.what());
  }
  set_perfdb_file(o.perfdb);
  const std::string path = current_perfdb_path();
  if (!o.dry_run) check_perfdb_writable(path);
  std::string backend = o.backend, why;
  if (backend.empty()) backend = gpu_count(&why) > 0 ? "gpu0" : "cpu";
  const std::unique_ptr<Backend> b = backend_by_name(backend);
  bench::TuneOptions t;
  t.min_time = o.min_time;
  t.repetitions = o.repetitions;
  t.wanted = [&](const Variant& v) { return std::regex_search(v.name, filter); };
  const bench::TuneResult r =
      o.dry_run ? bench::tune(*b, p, t, [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); })
                : bench::tune_and_record(*b, p, t, path);
  if (r.timed.empty() && r.failed.empty())
    throw CannotRun("no variant" + std::string(o.variants_regex.empty() ? "" : " that --variants admits") +
                    " supports this problem on " + b->name());
  std::printf("problem: %s\nclass: %s\nbackend: %s (%s)\n", to_string(p).c_str(), problem_class(p).c_str(),
              b->name().c_str(), device_key(b->info()).c_str());
  std::printf("%-28s %10s %8s\n", "variant", "ms", "vs best");
  for (const bench::TunedVariant& tv : r.timed)
    std::printf("%-28s %10.4f %7.2fx%s%s\n", tv.variant->name.c_str(), tv.ms, tv.ms / r.timed.front().ms,
                tv.variant == r.best ? "  <- chosen" : "", tv.variant->vendor ? "  (vendor: a comparator)" : "");
  for (const bench::TunedVariant& tv : r.failed)
    std::printf("%-28s NOT VERIFIED: %s\n", tv.variant->name.c_str(), tv.failure.c_str());
  if (!r.best) {
    std::printf("no verified variant of poolgrad's own: nothing recorded\n");
    return kExitMismatch;
  }
  if (o.dry_run) std::printf("chosen: %s (--dry-run: not recorded)\n", r.best->name.c_str());
  else std::printf("chosen: %s, recorded in %s\n", r.best->name.c_str(), path.c_str());
  // A variant that disagreed with the oracle is a kernel bug: the choice stands, the exit says so.
  return r.failed.empty() ? kExitOk : kExitMismatch;
}

}  // namespace

void add_tune_command(CLI::App& app, TuneCommandOptions& o) {
  o.cmd = app.add_subcommand("tune", "verify and time every variant on one problem; record the fastest in the perf-db");
  add_sized_problem_options(o.cmd, o.problem);
  o.cmd->add_option("--backend", o.backend, "cpu or gpuN (default: gpu0 when a GPU is found, else cpu)");
  o.cmd->add_option("--perfdb", o.perfdb, "FILE: the perf-db (default: $POOLGRAD_PERFDB, else $XDG_CACHE_HOME/poolgrad/perfdb.json, else ~/.cache/poolgrad/perfdb.json)");
  o.cmd->add_option("--variants", o.variants_regex, "REGEX: only variants whose names match");
  o.cmd->add_option("--min-time", o.min_time, "seconds each variant is timed, at least (default 0.1)");
  o.cmd->add_option("--repetitions", o.repetitions, "timed batches per variant, at least (default 5); the median counts");
  o.cmd->add_flag("--dry-run", o.dry_run, "time and print, record nothing");
}

int run_tune_command(TuneCommandOptions& o) { return run(o); }

}  // namespace pg
