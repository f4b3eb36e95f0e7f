// `poolgrad select REPORT.json... [--out selection.json]`: the fastest verified variant per
// problem class (src/harness/selection.hpp) and its margin over the next, from benchmark reports;
// conv_bench reports rank the conv variants per conv class (src/harness/conv_selection.hpp) and
// audit conv's --variant auto against each row's fastest.
// `poolgrad select --explain PROBLEM-OPTIONS`: which variant --variant auto picks, and why.
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/conv_report_runs.hpp"
#include "bench/report_runs.hpp"
#include "src/harness/conv_auto.hpp"
#include "src/harness/auto_variant.hpp"
#include "src/cli/commands.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/selection.hpp"

namespace pg {
namespace {

// Issue 16's bar: on every row, the variant auto picks is within 3% of the row's measured best.
constexpr double kAutoTolerancePct = 3.0;

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
  std::printf("each class ranking's first variant that ran on a row is within %.0f%% of the row's fastest on %d of %zu rows\n", kAutoTolerancePct, within,
              rows.size());
}

// One line per class: its fastest variant, the margin over the next, and how far the fastest
// falls behind on its worst row. `key_width` and `variant_width` are the columns' widths.
void print_class_table(const std::vector<SelectionEntry>& entries, const char* heading, int key_width, int variant_width) {
  std::printf("%-*s %4s  %-*s %8s  %s\n", key_width, heading, "rows", variant_width, "fastest", "margin", "next");
  for (const SelectionEntry& e : entries) {
    const RankedVariant& best = e.ranking.front();
    char margin[32] = "-";
    if (e.margin_pct() >= 0) std::snprintf(margin, sizeof margin, "%.1f%%", e.margin_pct());
    std::printf("%-*s %4d  %-*s %8s  %s\n", key_width, e.key.c_str(), e.rows, variant_width, best.variant.c_str(), margin,
                e.ranking.size() > 1 ? e.ranking[1].variant.c_str() : "(only one variant ran)");
    if (best.worst_slowdown > 1.0)
      std::printf("    %s is %.1f%% behind the fastest on its worst row of the class\n", best.variant.c_str(),
                  100.0 * (best.worst_slowdown - 1.0));
  }
}

// The conv classes of conv_bench reports, ranked, and what --variant auto (src/harness/conv_auto.cpp)
// tries first on each measured row against the row's fastest.
void report_conv_classes(const std::vector<ConvTimedRun>& runs, const std::string& source) {
  const std::vector<SelectionEntry> entries = build_conv_selection(runs, source);
  print_class_table(entries, "conv class", 40, 16);
  std::printf("%zu conv classes from %zu timed runs\n", entries.size(), runs.size());
  const ConvAuditResult audit = audit_conv_order(
      runs, [](const ConvProblem& p) { return conv_auto_order(p, BackendKind::gpu); }, kAutoTolerancePct);
  for (const std::string& miss : audit.misses) std::printf("  %s\n", miss.c_str());
  std::printf("conv --variant auto's first variant that ran on a row is within %.0f%% of the row's fastest on %d of %d rows",
              kAutoTolerancePct, audit.within, audit.rows);
  if (audit.untimed) std::printf(" (%d rows timed none of the variants it tries first)", audit.untimed);
  std::printf("\n");
}

using AutoChooser = std::function<AutoChoice(const Problem&, const DeviceInfo&)>;

// What --variant auto picks (through `choose`) on each row of the reports, against the row's
// measured fastest. A pick the report did not time is listed and counted apart.
void report_holdout(const std::vector<std::string>& paths, const AutoChooser& choose, const std::string& json_out) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  int rows = 0, within3 = 0, within10 = 0, own3 = 0, own10 = 0, untimed = 0;
  double worst = 1, log_sum = 0, own_worst = 1;
  std::map<std::string, int> by_layer;
  std::printf("held-out rows: what --variant auto picks with only this table, against each row's fastest the default "
              "may pick (deterministic where any ran), then against the fastest of every own variant\n");
  for (const std::string& path : paths) {
    bench::ReportRuns report = bench::report_runs(bench::read_report_file(path), path);
    const auto open = report.device.rfind(" (");
    DeviceInfo device;
    device.name = report.device.substr(0, open);
    device.arch = open == std::string::npos ? "" : report.device.substr(open + 2, report.device.size() - open - 3);
    for (const Example& e : examples_from_runs(report.runs)) {
      const AutoChoice c = choose(e.problem, device);
      if (!c.variant) continue;
      double ms = 0;
      for (const VariantTime& t : e.times)
        if (t.variant == c.variant->name) ms = t.ms;
      if (ms <= 0) {
        ++untimed;
        std::printf("  auto picks %s (%s), which the report did not time: %s\n", c.variant->name.c_str(), c.layer.c_str(),
                    e.name.c_str());
        continue;
      }
      // Against the fastest the default may pick (a deterministic one where any ran), and against
      // the fastest of all own variants (atomic ones included).
      const double slowdown = ms / e.best_default_ms(), own = ms / e.best_ms();
      ++rows;
      ++by_layer[c.layer];
      within3 += slowdown <= 1.03;
      within10 += slowdown <= 1.10;
      own3 += own <= 1.03;
      own10 += own <= 1.10;
      worst = std::max(worst, slowdown);
      own_worst = std::max(own_worst, own);
      log_sum += std::log(slowdown);
      std::printf("  %5.2fx %5.2fx %-24s %-28s %s\n", slowdown, own, c.variant->name.c_str(), c.layer.c_str(), e.name.c_str());
      records.push_back({{"row", e.name}, {"report", path}, {"variant", c.variant->name}, {"layer", c.layer},
                         {"slowdown", slowdown}, {"slowdown_all_own", own}});
    }
  }
  std::string layers;
  for (const auto& [layer, n] : by_layer) layers += (layers.empty() ? "" : ", ") + layer + " " + std::to_string(n);
  std::printf("held out: within 3%% on %d, within 10%% on %d of %d rows, geomean %.3fx, worst %.2fx (decided by: %s); "
              "against every own variant, atomic ones included: within 3%% on %d, within 10%% on %d, worst %.2fx\n",
              within3, within10, rows, rows ? std::exp(log_sum / rows) : 1.0, worst, layers.c_str(), own3, own10, own_worst);
  if (untimed) std::printf("%d rows where the report did not time auto's pick (not counted)\n", untimed);
  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << records.dump(1) << "\n";
    if (!out) throw InvalidInput("--holdout-json = " + json_out + " cannot be written");
  }
}

int explain(SelectCommandOptions& o) {
  if (!o.reports.empty()) throw InvalidInput("--explain takes problem options, not reports");
  if (!sized_problem_given(o.cmd)) throw InvalidInput("--explain needs a problem: --op ... --input-size ... --kernel-size ...");
  const Problem p = sized_problem(o.cmd, o.problem);
  set_selection_file(o.selection);
  set_perfdb_file(o.perfdb);
  std::string backend = o.backend, why_no_gpu, note;
  const bool have_gpu = gpu_count(&why_no_gpu) > 0;
  if (backend.empty()) {
    backend = have_gpu ? "gpu0" : "cpu";
    if (!have_gpu) note = " (no GPU: " + why_no_gpu + ")";
  }
  if (backend == "gpu") backend = "gpu0";
  BackendKind kind = BackendKind::gpu;
  DeviceInfo device;
  if (backend.rfind("gpu", 0) == 0 && !have_gpu) {
    device.name = "no GPU here";
    note = " (absent here: " + why_no_gpu + "; the first built-in table stands in for its device)";
  } else {
    const std::unique_ptr<Backend> b = backend_by_name(backend);
    kind = b->kind();
    device = b->info();
  }
  const AutoChoice c = choose_auto_variant(p, kind, device);
  std::printf("problem: %s\nbackend: %s%s\n%s", to_string(p).c_str(), backend.c_str(), note.c_str(), c.why.c_str());
  if (c.variant) std::printf("decided by: %s\n", c.layer.c_str());
  return c.variant ? 0 : 1;
}

int select(SelectCommandOptions& o) {
  if (!o.holdout_json.empty() && o.holdout.empty()) throw InvalidInput("--holdout-json goes with --holdout REPORT.json");
  if (o.reports.empty() && !o.holdout.empty()) {
    // An audit: what auto picks now (perf-db, selection files, built-in table) on the reports' rows.
    set_selection_file(o.selection);
    set_perfdb_file(o.perfdb);
    report_holdout(o.holdout, [](const Problem& p, const DeviceInfo& d) {
      return choose_auto_variant(p, BackendKind::gpu, d);
    }, o.holdout_json);
    return 0;
  }
  if (o.reports.empty()) throw InvalidInput("no REPORT.json given (poolgrad bench --out writes one)");
  if (sized_problem_given(o.cmd)) throw InvalidInput("problem options go with --explain");
  std::vector<TimedRun> runs;
  std::vector<ConvTimedRun> conv_runs;
  std::string device, device_source;
  // A class ranks variants against each other on one device; two devices' times do not compare.
  auto same_device = [&](const std::string& path, const std::string& report_device) {
    if (!device_source.empty() && report_device != device)
      throw InvalidInput("report " + path + " ran on '" + report_device + "', " + device_source + " on '" + device +
                         "': select one device's reports at a time");
    device = report_device;
    device_source = path;
  };
  for (const std::string& path : o.reports) {
    const std::string text = bench::read_report_file(path);
    if (bench::is_conv_report(text)) {
      bench::ConvReportRuns report = bench::conv_report_runs(text, path);
      same_device(path, report.device);
      for (ConvTimedRun& r : report.runs) conv_runs.push_back(std::move(r));
      for (const std::string& u : report.unknown)
        std::fprintf(stderr, "poolgrad select: %s: '%s' is no conv_bench row of this build: left out\n", path.c_str(), u.c_str());
      continue;
    }
    bench::ReportRuns report = bench::report_runs(text, path);
    same_device(path, report.device);
    for (TimedRun& r : report.runs) runs.push_back(std::move(r));
    for (const std::string& u : report.unknown)
      std::fprintf(stderr, "poolgrad select: %s: '%s' names no problem (no problem label, no known row): left out\n",
                   path.c_str(), u.c_str());
  }
  if (runs.empty() && conv_runs.empty()) throw InvalidInput("the reports hold no verified, timed variant run");
  if (runs.empty() && (!o.out.empty() || !o.holdout.empty()))
    throw InvalidInput("--out and --holdout take pooling reports; conv reports are ranked and audited, and conv's "
                       "--variant auto follows src/harness/conv_auto.cpp");
  if (!conv_runs.empty()) report_conv_classes(conv_runs, device_source);
  if (runs.empty()) return 0;
  const SelectionTable table = build_selection_table(runs, device, o.reports, true);
  const std::vector<SelectionEntry>& entries = table.classes;
  print_class_table(entries, "class", 58, 22);
  std::printf("%zu classes from %zu timed runs\n", entries.size(), runs.size());
  report_rows_against_best(entries, runs);
  const ModelScore score = leave_one_out(table.problems, table.weights);
  std::printf("the model for unmeasured problems, each problem left out and ranked from the others: its pick within 3%% "
              "of the fastest on %d, within 10%% on %d of %d, geomean %.3fx, worst %.2fx (%s)\n",
              score.within_3pct, score.within_10pct, score.problems, score.geomean, score.worst,
              score.worst_problem.c_str());
  if (!o.holdout.empty()) {
    AutoTables tables;
    tables.files.push_back(table);
    // Only this table: the choice among the variants each held-out row timed (complete reports).
    report_holdout(o.holdout, [&](const Problem& p, const DeviceInfo& d) {
      return choose_auto_variant(tables, p, BackendKind::gpu, d);
    }, o.holdout_json);
  }
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
  o.cmd->add_option("reports", o.reports, "REPORT.json... written by poolgrad bench --out (or pool_bench, or conv_bench)");
  o.cmd->add_option("--out", o.out, "selection.json: the table, for --selection or POOLGRAD_SELECTION");
  o.cmd->add_flag("--explain", o.explain, "say which variant --variant auto picks for the problem given, and why");
  o.cmd->add_option("--holdout-json", o.holdout_json, "FILE: with --holdout, each row's pick and slowdown as JSON (bench/plot_selection.py)");
  o.cmd->add_option("--holdout", o.holdout, "REPORT.json...: rows to test the table made of REPORTs on (auto's pick against each row's fastest); without REPORTs, what auto picks now");
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
