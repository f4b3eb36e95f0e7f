// `poolgrad compare OLD.json NEW.json [--threshold PCT] [--alpha A] [--all]`: per (variant, problem)
// the change in time between two bench reports with a noise-aware verdict (bench/compare.hpp);
// regressions first; exit 1 when any regression exceeds the threshold.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bench/compare.hpp"
#include "bench/report_runs.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/exit_codes.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {
namespace {

const char* verdict_name(bench::Verdict v) {
  switch (v) {
    case bench::Verdict::regression: return "SLOWER";
    case bench::Verdict::untested_regression: return "SLOWER?";
    case bench::Verdict::improvement: return "faster";
    case bench::Verdict::untested_improvement: return "faster?";
    case bench::Verdict::same: return "same";
  }
  return "?";
}

void print_pair(const bench::ComparedPair& p) {
  char pv[32] = "untested";
  if (p.p_value >= 0) std::snprintf(pv, sizeof pv, "p=%.4f", p.p_value);
  std::printf("  %-8s %+7.1f%%  %10.4f -> %10.4f ms  %-10s %2zu/%-2zu reps  %s  %s\n", verdict_name(p.verdict), p.change_pct,
              p.old_median, p.new_median, pv, p.old_ms.size(), p.new_ms.size(), p.variant.c_str(), p.row.c_str());
}

int run(CompareCommandOptions& o) {
  bench::CompareOptions opt;
  opt.threshold_pct = o.threshold;
  opt.alpha = o.alpha;
  const bench::Comparison c =
      bench::compare_reports(bench::read_report_file(o.old_report), o.old_report, bench::read_report_file(o.new_report), o.new_report, opt);
  std::printf("old: %s (%s)\nnew: %s (%s)\n", o.old_report.c_str(), c.old_context.c_str(), o.new_report.c_str(),
              c.new_context.c_str());
  if (c.old_device != c.new_device)
    std::printf("note: the reports ran on different devices: their times differ by the device as well\n");
  if (c.pairs.empty()) throw InvalidInput("the reports share no (variant, problem) pair to compare");
  int untested = 0, shown = 0;
  std::printf("%zu pairs joined by variant and problem (regressions first; threshold %.1f%%, U test alpha %.3f):\n",
              c.pairs.size(), o.threshold, o.alpha);
  for (const bench::ComparedPair& p : c.pairs) {
    untested += p.p_value < 0;
    if (o.all || p.verdict != bench::Verdict::same) print_pair(p), ++shown;
  }
  if (shown < static_cast<int>(c.pairs.size()))
    std::printf("  ... %zu pairs the same (within %.1f%% or not significant; --all lists them)\n",
                c.pairs.size() - static_cast<size_t>(shown), o.threshold);
  for (const bench::ComparedPair& p : c.controls)
    std::printf("control %s: %.4f -> %.4f ms (%+.1f%%): the machine's own change\n", p.row.c_str(), p.old_median,
                p.new_median, p.change_pct);
  if (c.only_old || c.only_new)
    std::printf("%d pairs only in the old report, %d only in the new one (not compared)\n", c.only_old, c.only_new);
  if (untested)
    std::printf("note: %d pairs have one repetition on a side, so no test can tell their change from noise; they are "
                "judged by the threshold alone (SLOWER?): run poolgrad bench --repetitions 9\n", untested);
  const int regressions = c.regressions();
  std::printf("%d regressions beyond %.1f%%\n", regressions, o.threshold);
  return regressions ? kExitMismatch : kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  o.cmd = app.add_subcommand("compare", "the change in time between two bench reports, regressions first");
  o.cmd->add_option("old", o.old_report, "OLD.json: a poolgrad bench report")->required();
  o.cmd->add_option("new", o.new_report, "NEW.json: a poolgrad bench report")->required();
  o.cmd->add_option("--threshold", o.threshold, "PCT: a slowdown beyond this that is significant is a regression (default 5)");
  o.cmd->add_option("--alpha", o.alpha, "the U test's significance level (default 0.05)");
  o.cmd->add_flag("--all", o.all, "list every pair, not only the changed ones");
}

int run_compare_command(CompareCommandOptions& o) { return run(o); }

}  // namespace pg
