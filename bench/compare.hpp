// `poolgrad compare OLD.json NEW.json`: benchmark history. Two bench reports (any commits, any
// suites) are joined by (variant, problem line); each pair's change in time gets a noise-aware
// verdict, as Google Benchmark's compare.py gives one: with repetitions on both sides
// (`poolgrad bench --repetitions N`) a two-sided Mann-Whitney U test on the repetitions' times
// says whether the change is more than noise; a pair is a regression when it is slower by more
// than the threshold and significant (or untestable: one repetition on a side, said so). The copy
// rows are a control: they say whether the machine itself changed.
#pragma once

#include <string>
#include <vector>

namespace pg::bench {

struct CompareOptions {
  double threshold_pct = 5.0;  // a smaller change is never a regression
  double alpha = 0.05;         // the U test's significance level
};

enum class Verdict { regression, improvement, same, untested_regression, untested_improvement };

struct ComparedPair {
  std::string variant, row, problem;
  std::vector<double> old_ms, new_ms;  // one per repetition
  double old_median = 0, new_median = 0;
  double change_pct = 0;  // new median over old median, less 1, in percent
  double p_value = -1;    // -1: not testable (a side has one repetition)
  Verdict verdict = Verdict::same;
};

struct Comparison {
  std::string old_device, new_device, old_context, new_context;  // context: "device, date, commit"
  std::vector<ComparedPair> pairs;    // regressions first (largest change first), then the rest
  std::vector<ComparedPair> controls; // the copy rows
  int only_old = 0, only_new = 0;
  int regressions() const;            // regression and untested_regression pairs
};

// Throws InvalidInput naming the file when a text is not a bench report.
Comparison compare_reports(const std::string& old_text, const std::string& old_name, const std::string& new_text,
                           const std::string& new_name, const CompareOptions& o);

// Two-sided p-value of the Mann-Whitney U test of a against b: exact for small samples without
// ties, else the normal approximation with tie and continuity corrections.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace pg::bench
