// The tiled variants' properties draw their problems from the variant's own domain
// (fuzz/problem_gen.cpp) and run them on the CPU backend's tile budget. These count, over the
// same draws, how often each structure of the tile plan comes up. A structure the draws never
// reach is one no CI fuzz run tests, so each must come up in at least 1% of the draws.
// avg.gather.tiled: several tiles along each axis with a partial last one, planes side by side
// and walked as rows with a partial last group, channels split into lane tiles with a partial
// last one, one, two and three passes, and both tap loops.
// max.gather.tiled: the same tiles, planes and lanes, and its bands: several rows of the tile's
// width with a partial last group, part of a row with a partial last segment, one whole row;
// tiles of whole channels-first planes (their sums leave as one run), the last group partial.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <initializer_list>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "fuzz/problem_gen.hpp"
#include "kernels/avg/avg_gather_tiled.hpp"
#include "kernels/max/max_gather_tiled.hpp"

namespace pg {
namespace {

using Seen = std::map<std::string, int>;

// The structures every tiled plan shares: tiles along each axis with a partial last one, a
// partial last group of planes, a partial last lane tile.
void count_tiles(const Problem& p, const int* tile, int planes, int lanes, Seen& seen) {
  static const char* kAxisName[kAxes] = {"D", "H", "W"};
  for (int a = 0; a < kAxes; ++a)
    if (p.in[a] > tile[a] && p.in[a] % tile[a] != 0)
      ++seen[std::string("several tiles along ") + kAxisName[a] + ", the last partial"];
  const bool cl = p.layout == Layout::channels_last;
  if (planes > 1 && (cl ? p.n : p.n * p.c) % planes != 0) ++seen["a partial last group of planes"];
  if (cl && p.c > lanes && p.c % lanes != 0) ++seen["lane tiles, the last partial"];
}

// Each structure of count_tiles and of the variant's own came up in at least 1% of the cases.
void expect_each_reached(const Seen& seen, int cases, std::initializer_list<const char*> own) {
  std::vector<const char*> structures = {"several tiles along D, the last partial", "several tiles along H, the last partial",
                                         "several tiles along W, the last partial", "a partial last group of planes",
                                         "lane tiles, the last partial"};
  structures.insert(structures.end(), own.begin(), own.end());
  std::string report;
  for (const auto& [what, n] : seen) report += "\n  " + what + ": " + std::to_string(n);
  std::cout << cases << " cases:" << report << "\n";
  for (const char* what : structures) {
    const auto it = seen.find(what);
    EXPECT_GE(it == seen.end() ? 0 : it->second, cases / 100) << what << " in " << cases << " cases:" << report;
  }
}

TEST(AvgTiledReach, TheFuzzDrawsEveryTileStructure) {
  Seen seen;
  int cases = 0;
  const bool ok = rc::check("avg.gather.tiled's tile plans on the fuzz's problems", [&] {
    const Problem p = *fuzz::problem(Op::avg, AvgGatherTiled::domain());
    RC_PRE(AvgGatherTiled::supports(p).ok && p.n > 0);
    AvgTilePlan plan;
    RC_ASSERT(plan_avg_tiles(p, p.dtype == DType::f64 ? 8 : 4, kTiledCpuBudget, &plan));
    RC_ASSERT(plan.bytes <= kTiledSmemBytes);
    ++cases;
    count_tiles(p, plan.tile, plan.planes, plan.lanes, seen);
    if (plan.col_planes > 1) ++seen["planes side by side"];
    if (plan.row_planes > 1) ++seen["planes walked as rows"];
    ++seen[std::to_string(plan.sums[0] + plan.sums[1] + plan.sums[2]) + " passes"];
    ++seen[plan.max_taps <= kTiledUnrolledTaps ? "unrolled tap loop" : "tap loop of any length"];
  });
  ASSERT_TRUE(ok);
  expect_each_reached(seen, cases, {"planes side by side", "planes walked as rows", "1 passes", "2 passes", "3 passes",
                                    "unrolled tap loop", "tap loop of any length"});
}

TEST(MaxTiledReach, TheFuzzDrawsEveryTileStructure) {
  Seen seen;
  int cases = 0;
  const bool ok = rc::check("max.gather.tiled's tile plans on the fuzz's problems", [&] {
    const Problem p = *fuzz::problem(Op::max, MaxGatherTiled::domain());
    RC_PRE(MaxGatherTiled::supports(p).ok && p.n > 0);
    MaxTilePlan plan;
    RC_ASSERT(plan_max_tiles(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledCpuBudget, &plan));
    RC_ASSERT(plan.bytes <= kMaxTiledSmemBytes);
    ++cases;
    count_tiles(p, plan.tile, plan.planes, plan.lanes, seen);
    const int64_t outer = p.layout == Layout::channels_last ? p.n : p.n * p.c;
    if (plan.band_rows > 1 && plan.tile[1] % plan.band_rows != 0) ++seen["bands of several rows, the last partial"];
    if (plan.segments > 1 && plan.tile[2] % plan.band_width != 0) ++seen["bands of part of a row, the last partial"];
    if (plan.band_rows == 1 && plan.segments == 1) ++seen["bands of one whole row"];
    if (plan.whole_planes) ++seen[outer % plan.planes != 0 ? "whole-plane tiles, the last group partial" : "whole-plane tiles"];
  });
  ASSERT_TRUE(ok);
  expect_each_reached(seen, cases, {"bands of several rows, the last partial", "bands of part of a row, the last partial",
                                    "bands of one whole row", "whole-plane tiles", "whole-plane tiles, the last group partial"});
}

}  // namespace
}  // namespace pg
