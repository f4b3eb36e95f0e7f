// Conv variants ranked per problem class from conv_bench reports, as src/harness/selection.hpp
// ranks the pooling ones: `poolgrad select` prints the table and audits what `--variant auto`
// (src/harness/conv_auto.hpp) tries first on each measured row.
//
// A conv class is what decides which variant is fastest: dims, layout, dtype, the window (kernel,
// stride, dilation per axis; padding does not change which body runs) and the channels per group
// in the bands the variants are built for: depthwise (C/groups = 1), small (<= 8, conv.depthwise's
// domain), narrow (< 32) and wide (>= 32, where conv.winograd's GEMM fills its tiles).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/harness/selection.hpp"
#include "src/model/conv_problem.hpp"

namespace pg {

// "conv 2d cf f32 k3s1d1 C/g>=32".
std::string conv_problem_class(const ConvProblem& p);

// One timed run from a conv_bench report.
struct ConvTimedRun {
  std::string variant;
  std::string row;
  ConvProblem problem;
  double ms = 0;
};

std::vector<SelectionEntry> build_conv_selection(const std::vector<ConvTimedRun>& runs, const std::string& source);

// Per measured row, whether the first variant of `order(problem)` that the row timed is within
// `tolerance_pct` of the row's fastest; the rows where it is not, one line each in `misses`.
struct ConvAuditResult {
  int rows = 0, within = 0, untimed = 0;  // untimed: no variant of the order ran on the row
  std::vector<std::string> misses;
};
ConvAuditResult audit_conv_order(const std::vector<ConvTimedRun>& runs,
                                 const std::function<std::vector<std::string>(const ConvProblem&)>& order,
                                 double tolerance_pct);

}  // namespace pg
