// `poolgrad select REPORT.json... [--out selection.json]`: the fastest verified variant per
// problem class (src/selection.hpp) and its margin over the next, from benchmark reports.
// `poolgrad select --explain PROBLEM-OPTIONS`: which variant --variant auto picks, and why.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/report_runs.hpp"
#include "src/auto_variant.hpp"
#include "src/cli/commands.hpp"
#include "src/invalid_input.hpp"
#include "src/selection.hpp"

namespace pg {
namespace {

// Issue 16's bar: on every row, the variant auto picks is within 3% of the row's measured best.
constexpr double kAutoTolerancePct = 3.0;

std::string read_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput("report " + path + " cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What --variant auto gets on each measured row: the first variant of its class's ranking that
// ran on the row (on the device that ran it, the one supports() admits), against the row's best.
void report_rows_against_best(const std::vector<SelectionEntry>& entries, const std::vector<TimedRun>& runs) {
  std::map<std::string, const SelectionEntry*> by_key;
  for (const SelectionEntry& e : entries) by_key[e.key] = &e;
  std::map<std::string, std::map<std::string, double>> rows;  // row -> variant -> ms
  std::map<std::string, std::string> row_class;
  for (const TimedRun& r : runs) {
    double& ms = rows[r.row][r.variant];
    ms = ms > 0 ? std::min(ms, r.ms) : r.ms;
    row_class[r.row] = problem_class(r.problem);
  }
  int within = 0;
  for (const auto& [row, times] : rows) {
    double best = 1e300;
    std::string fastest;
    for (const auto& [variant, ms] : times)
      if (ms < best) best = ms, fastest = variant;
    for (const RankedVariant& r : by_key.at(row_class[row])->ranking) {
      const auto it = times.find(r.variant);
      if (it == times.end()) continue;
      const double behind = 100.0 * (it->second / best - 1.0);
      if (behind <= kAutoTolerancePct) ++within;
      else
        std::printf("  row %s: auto picks %s, %.1f%% behind %s\n", row.c_str(), r.variant.c_str(), behind, fastest.c_str());
      break;
    }
  }
  std::printf("auto's pick is within %.0f%% of the row's fastest on %d of %zu rows\n", kAutoTolerancePct, within,
              rows.size());
}

int explain(SelectCommandOptions& o) {
  if (!o.reports.empty()) throw InvalidInput("--explain takes problem options, not reports");
  if (!sized_problem_given(o.cmd)) throw InvalidInput("--explain needs a problem: --op ... --input-size ... --kernel-size ...");
  const Problem p = sized_problem(o.cmd, o.problem);
  set_selection_file(o.selection);
  set_perfdb_file(o.perfdb);
  std::string backend = o.backend, why_cpu;
  if (backend.empty()) backend = gpu_count(&why_cpu) > 0 ? "gpu0" : "cpu";
  if (backend == "gpu") backend = "gpu0";
  const std::unique_ptr<Backend> b = backend_by_name(backend);
  const AutoChoice c = choose_auto_variant(p, b->kind(), b->info());
  std::printf("problem: %s\nbackend: %s%s\n%s", to_string(p).c_str(), backend.c_str(),
              why_cpu.empty() ? "" : (" (no GPU: " + why_cpu + ")").c_str(), c.why.c_str());
  if (c.variant) std::printf("decided by: %s\n", c.layer.c_str());
  return c.variant ? 0 : 1;
}

int select(SelectCommandOptions& o) {
  if (o.reports.empty()) throw InvalidInput("no REPORT.json given (poolgrad bench --out writes one)");
  if (sized_problem_given(o.cmd)) throw InvalidInput("problem options go with --explain");
  std::vector<TimedRun> runs;
  std::string device, device_source;
  for (const std::string& path : o.reports) {
    bench::ReportRuns report = bench::report_runs(read_report(path), path);
    // A class ranks variants against each other on one device; two devices' times do not compare.
    if (!device_source.empty() && report.device != device)
      throw InvalidInput("report " + path + " ran on '" + report.device + "', " + device_source + " on '" + device +
                         "': select one device's reports at a time");
    device = report.device;
    device_source = path;
    for (TimedRun& r : report.runs) runs.push_back(std::move(r));
    for (const std::string& u : report.unknown)
      std::fprintf(stderr, "poolgrad select: %s: '%s' names no problem (no problem label, no known row): left out\n",
                   path.c_str(), u.c_str());
  }
  if (runs.empty()) throw InvalidInput("the reports hold no verified, timed variant run");
  const SelectionTable table = build_selection_table(runs, device, o.reports, true);
  const std::vector<SelectionEntry>& entries = table.classes;
  std::printf("%-58s %4s  %-22s %8s  %s\n", "class", "rows", "fastest", "margin", "next");
  for (const SelectionEntry& e : entries) {
    const RankedVariant& best = e.ranking.front();
    char margin[32] = "-";
    if (e.margin_pct() >= 0) std::snprintf(margin, sizeof margin, "%.1f%%", e.margin_pct());
    std::printf("%-58s %4d  %-22s %8s  %s\n", e.key.c_str(), e.rows, best.variant.c_str(), margin,
                e.ranking.size() > 1 ? e.ranking[1].variant.c_str() : "(only one variant ran)");
    if (best.worst_slowdown > 1.0)
      std::printf("    %s is %.1f%% behind the fastest on its worst row of the class\n", best.variant.c_str(),
                  100.0 * (best.worst_slowdown - 1.0));
  }
  std::printf("%zu classes from %zu timed runs\n", entries.size(), runs.size());
  report_rows_against_best(entries, runs);
  const ModelScore score = leave_one_out(table.problems, table.weights);
  std::printf("the model for unmeasured problems, each problem left out and ranked from the others: its pick within 3%% "
              "of the fastest on %d, within 10%% on %d of %d, geomean %.3fx, worst %.2fx (%s)\n",
              score.within_3pct, score.within_10pct, score.problems, score.geomean, score.worst,
              score.worst_problem.c_str());
  if (!o.out.empty()) {
    std::ofstream out(o.out);
    out << selection_to_json(table);
    if (!out) throw InvalidInput("--out = " + o.out + " cannot be written");
    std::printf("selection written to %s (use it with --selection or POOLGRAD_SELECTION)\n", o.out.c_str());
  }
  return 0;
}

}  // namespace

void add_select_command(CLI::App& app, SelectCommandOptions& o) {
  o.cmd = app.add_subcommand("select", "the fastest verified variant per problem class from bench reports; --explain a choice");
  o.cmd->add_option("reports", o.reports, "REPORT.json... written by poolgrad bench --out (or pool_bench)");
  o.cmd->add_option("--out", o.out, "selection.json: the table, for --selection or POOLGRAD_SELECTION");
  o.cmd->add_flag("--explain", o.explain, "say which variant --variant auto picks for the problem given, and why");
  o.cmd->add_option("--selection", o.selection, "with --explain: selection.json asked before the built-in table");
  o.cmd->add_option("--perfdb", o.perfdb, "with --explain: the perf-db asked first (default: the user's)");
  o.cmd->add_option("--backend", o.backend, "with --explain: cpu, gpu or gpuN (default: gpu0 when one is found)");
  add_sized_problem_options(o.cmd, o.problem);
}

int run_select_command(SelectCommandOptions& o) {
  try {
    return o.explain ? explain(o) : select(o);
  } catch (const InvalidInput& e) {
    std::fprintf(stderr, "poolgrad select: %s\n", e.what());
    return 2;
  }
}

}  // namespace pg
