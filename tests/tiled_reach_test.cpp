// The tiled variants' properties draw their problems from the variant's own domain
// (fuzz/problem_gen.cpp) and run them on the CPU backend's tile budget. These count, over the
// same draws, how often each structure of the tile plan comes up. A structure the draws never
// reach is one no CI fuzz run tests, so each must come up in at least 1% of the draws.
// avg.gather.tiled: several tiles along each axis with a partial last one, planes side by side
// and walked as rows with a partial last group, channels split into lane tiles with a partial
// last one, one, two and three passes, and both tap loops.
// max.gather.tiled: the same tiles, planes and lanes, and its bands: several rows of the tile's
// width with a partial last group, part of a row with a partial last segment, one whole row;
// tiles of whole planes (their sums leave as one run), the last group partial, and those whose
// windows are read as one run of dy, channels-first and channels-last (a partial last lane tile,
// and lanes read in packs, which only max.gather.tiled takes).
// max.gather.counted and max.scatter.tiled: the same tiles, planes and lanes, whole-plane tiles
// and window runs; for max.scatter.tiled also warps that combine their adds (on the GPU's plan)
// and its quads: runs of windows and of positions that start mid-quad, a partial last quad.
// avg.gather.planes: several blocks with a partial last one, several planes per block, each of its
// sums (runs with the kernel of 3 unrolled, runs of any kernel up to 8, per element with and
// without the unrolled tap loop), a partial last run, and both divisor paths.
// avg.gather.columns: several blocks with a partial last one, several planes per block, more
// columns than threads, each of its column walks (3 x 3 exactly, any kernel up to 8), window rows
// and columns past both edges, and both divisor paths.
// avg.broadcast.plane (not tiled, but its work items are runs too): channels-last runs of
// positions with a partial last one and planes shorter than a run, with and without positions
// outside the window, C a whole number of packs or not; channels-first packs that cross planes.
// max.gather.taps: slabs along each lead axis with a partial last one, whole planes several to a
// tile with a partial last group, halos past both ends, 1D, 2D and 3D stencils.
// max.direct.stored's keyed cells (max_reads.hpp, TapKeys): channels-last packs of lanes with
// each index format, 1D, 2D and 3D, gaps between windows, dilated windows, and windows with taps
// in the padding.
// max.direct.rows: packs that cross rows, rows shorter than a pack, in-row packs within one
// window's stride and across two (its decode-per-window path) and across more (its lane walk),
// gaps between windows, dilated windows, windows wholly in the padding, a partial last window
// (ceil mode) and a tail no window covers.
// avg.gather.rows: the unrolled k2, k3, k5 s1 packs (inside a row and at its edges), stride-1
// lane walks, strided packs, reciprocal and divided terms, packs that cross rows, rows shorter
// than a pack, the scalar path, gaps between windows, dilated and strided windows, windows past
// both ends of a row, each divisor rule and divisor_override.
// avg.gather.flat: 2D and 3D, the unrolled k2, k3, k5 packs with dy read as packs at an offset in
// a pack and as single values, flat runs (out == in) with one divisor and a divisor per window,
// across rows, and runs longer than a row, the lane walk of other W kernels, packs that cross rows, rows
// shorter than a pack, the scalar path, parts whose windows all lie inside (one reciprocal) and
// edge parts, reciprocal and divided terms, each divisor rule and divisor_override.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <initializer_list>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "fuzz/problem_gen.hpp"
#include "kernels/avg/avg_broadcast_plane.hpp"
#include "kernels/avg/avg_gather_columns.hpp"
#include "kernels/avg/avg_gather_flat.hpp"
#include "kernels/avg/avg_gather_planes.hpp"
#include "kernels/avg/avg_gather_rows.hpp"
#include "kernels/avg/avg_gather_tiled.hpp"
#include "kernels/max/max_direct.hpp"
#include "kernels/max/max_direct_rows.hpp"
#include "kernels/max/max_gather_counted.hpp"
#include "kernels/max/max_gather_taps.hpp"
#include "kernels/max/max_gather_tiled.hpp"
#include "kernels/max/max_scatter_tiled.hpp"

namespace pg {
namespace {

using Seen = std::map<std::string, int>;

// The problems a variant's property draws from its domain, made as a property run makes them
// (sizes 0 to 99 in turn) but from one fixed seed, so the counts below are the same on every run
// whatever RC_PARAMS says. Drawn by rapidcheck's runner they followed RC_PARAMS: at meson's 2,000
// cases of ten draws the thresholds held; a run by hand at the default 100 missed one about one
// time in fifteen. 20,000 draws, the count of meson's runs.
inline constexpr int kReachDraws = 20000;
inline constexpr uint64_t kReachSeed = 20261201;

std::vector<Problem> fuzz_draws(Op op, const Domain& domain) {
  const rc::Gen<Problem> gen = fuzz::problem(op, domain);
  rc::Random random(kReachSeed);
  std::vector<Problem> draws;
  draws.reserve(kReachDraws);
  for (int i = 0; i < kReachDraws; ++i) draws.push_back(gen(random.split(), i % 100).value());
  return draws;
}

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

// The run walk's decodes (max_tile_walk.hpp, named_in_run): plane-format indices of undilated
// windows on the short path, any other format or a dilated window on the general one; and each
// stored index type, which the walk switches on once per tile.
void count_window_run(const Problem& p, Seen& seen) {
  const bool plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
  ++seen[plain ? "run decode, plane indices of undilated windows" : "run decode, other formats or dilated windows"];
  ++seen[std::string("run decode, ") + index_type_name(p.index_type) + " indices"];
}

// The whole-plane structures of a max tile plan (max_tile_walk.hpp): tiles of whole planes, the
// last group partial; windows read as one run of dy, in channels-last too, where a lane tile may
// be partial.
void count_whole_planes(const Problem& p, const MaxTileShape& plan, Seen& seen) {
  const bool cl = p.layout == Layout::channels_last;
  const int64_t outer = cl ? p.n : p.n * p.c;
  if (!plan.whole_planes) return;
  ++seen[outer % plan.planes != 0 ? "whole-plane tiles, the last group partial" : "whole-plane tiles"];
  if (!plan.window_run) return;
  ++seen["windows read as one run of dy"];
  if (cl) ++seen[p.c % plan.lanes != 0 ? "channels-last windows read as one run, the last lane tile partial"
                                        : "channels-last windows read as one run"];
  // The fuzz's buffers are allocated aligned: what max_tile_lane_pack decides from the shapes.
  if (cl && max_tile_lane_pack(p, plan, BwdBuffers{}) > 1) ++seen["channels-last windows read in lane packs"];
  count_window_run(p, seen);
}

// Each of count_window_run's names came up in at least 5% of the draws read as one run (u8
// indices, which only small planes take, are about 9% of them).
void expect_window_run_decodes(const Seen& seen) {
  const auto runs = seen.find("windows read as one run of dy");
  ASSERT_NE(runs, seen.end());
  for (const char* what : {"run decode, plane indices of undilated windows", "run decode, other formats or dilated windows",
                           "run decode, i64 indices", "run decode, i32 indices", "run decode, u8 indices"}) {
    const auto it = seen.find(what);
    EXPECT_GE(it == seen.end() ? 0 : it->second, runs->second / 20) << what << " in " << runs->second << " window runs";
  }
}

// Each of the structures came up in at least 1% of the cases; prints what was seen.
void expect_reached(const Seen& seen, int cases, const std::vector<const char*>& structures) {
  std::string report;
  for (const auto& [what, n] : seen) report += "\n  " + what + ": " + std::to_string(n);
  std::cout << cases << " cases:" << report << "\n";
  for (const char* what : structures) {
    const auto it = seen.find(what);
    EXPECT_GE(it == seen.end() ? 0 : it->second, cases / 100) << what << " in " << cases << " cases:" << report;
  }
}

// Each structure of count_tiles and of the variant's own came up in at least 1% of the cases.
void expect_each_reached(const Seen& seen, int cases, const std::vector<const char*>& own) {
  std::vector<const char*> structures = {"several tiles along D, the last partial", "several tiles along H, the last partial",
                                         "several tiles along W, the last partial", "a partial last group of planes",
                                         "lane tiles, the last partial"};
  structures.insert(structures.end(), own.begin(), own.end());
  expect_reached(seen, cases, structures);
}

TEST(AvgTiledReach, TheFuzzDrawsEveryTileStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgGatherTiled::domain())) {
    if (!AvgGatherTiled::supports(p).ok || p.n == 0) continue;
    AvgTilePlan plan;
    ASSERT_TRUE(plan_avg_tiles(p, p.dtype == DType::f64 ? 8 : 4, kTiledCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kTiledSmemBytes) << to_string(p);
    ++cases;
    count_tiles(p, plan.tile, plan.planes, plan.lanes, seen);
    if (plan.col_planes > 1) ++seen["planes side by side"];
    if (plan.row_planes > 1) ++seen["planes walked as rows"];
    ++seen[std::to_string(plan.sums[0] + plan.sums[1] + plan.sums[2]) + " passes"];
    ++seen[plan.max_taps <= kTiledUnrolledTaps ? "unrolled tap loop" : "tap loop of any length"];
  }
  expect_each_reached(seen, cases, {"planes side by side", "planes walked as rows", "1 passes", "2 passes", "3 passes",
                                    "unrolled tap loop", "tap loop of any length"});
}

TEST(MaxTiledReach, TheFuzzDrawsEveryTileStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::max, MaxGatherTiled::domain())) {
    if (!MaxGatherTiled::supports(p).ok || p.n == 0) continue;
    MaxTilePlan plan;
    ASSERT_TRUE(plan_max_tiles(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kMaxTiledSmemBytes) << to_string(p);
    ++cases;
    count_tiles(p, plan.tile, plan.planes, plan.lanes, seen);
    if (plan.band_rows > 1 && plan.tile[1] % plan.band_rows != 0) ++seen["bands of several rows, the last partial"];
    if (plan.segments > 1 && plan.tile[2] % plan.band_width != 0) ++seen["bands of part of a row, the last partial"];
    if (plan.band_rows == 1 && plan.segments == 1) ++seen["bands of one whole row"];
    count_whole_planes(p, plan, seen);
  }
  expect_each_reached(seen, cases, {"bands of several rows, the last partial", "bands of part of a row, the last partial",
                                    "bands of one whole row", "whole-plane tiles", "whole-plane tiles, the last group partial",
                                    "windows read as one run of dy", "channels-last windows read as one run",
                                    "channels-last windows read as one run, the last lane tile partial",
                                    "channels-last windows read in lane packs"});
  expect_window_run_decodes(seen);
}

// A max variant on MaxTileShape plans (plan_for: its plan function) over the fuzz's draws: the
// tiles, whole planes and window runs every such plan has, and the variant's own structures,
// which own(p, seen) counts and own_names lists.
template <class V, class PlanFor, class Own>
void expect_max_tile_shapes_reached(PlanFor plan_for, Own own, const std::vector<const char*>& own_names) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::max, V::domain())) {
    if (!V::supports(p).ok || p.n == 0) continue;
    MaxTileShape plan;
    ASSERT_TRUE(plan_for(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kMaxTiledSmemBytes) << to_string(p);
    ++cases;
    count_tiles(p, plan.tile, plan.planes, plan.lanes, seen);
    count_whole_planes(p, plan, seen);
    own(p, seen);
  }
  std::vector<const char*> structures = {"whole-plane tiles", "whole-plane tiles, the last group partial",
                                         "windows read as one run of dy", "channels-last windows read as one run",
                                         "channels-last windows read as one run, the last lane tile partial"};
  structures.insert(structures.end(), own_names.begin(), own_names.end());
  expect_each_reached(seen, cases, structures);
  expect_window_run_decodes(seen);
}

// The channels-first window runs read in quads of four windows (MaxTileWalk::walk_window_quads),
// on the CPU's plan, where the fuzz runs: tiles whose run of windows starts mid-quad, a tensor
// whose last quad of windows is partial, and windows overlapping along W (consecutive windows of
// a quad that may name one position).
void count_window_quads(const Problem& p, const MaxTileShape& cpu, Seen& seen) {
  if (!cpu.window_run || p.layout != Layout::channels_first) return;
  if (int64_t{cpu.planes} * p.out_plane() % 4 != 0) ++seen["quads: window runs that start mid-quad"];
  if (p.n * p.c * p.out_plane() % 4 != 0) ++seen["quads: the tensor's last quad of windows partial"];
  if (p.dilation[2] * (p.kernel[2] - 1) + 1 > p.stride[2]) ++seen["quads: windows overlapping along W"];
}

TEST(MaxCountedReach, TheFuzzDrawsEveryTileStructure) {
  expect_max_tile_shapes_reached<MaxGatherCounted>(
      plan_max_counted,
      [](const Problem& p, Seen& seen) {
        MaxTileShape cpu;
        ASSERT_TRUE(plan_max_counted(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledCpuBudget, &cpu)) << to_string(p);
        count_window_quads(p, cpu, seen);
      },
      {"quads: window runs that start mid-quad", "quads: the tensor's last quad of windows partial",
       "quads: windows overlapping along W"});
}

TEST(MaxScatterTiledReach, TheFuzzDrawsEveryTileStructure) {
  expect_max_tile_shapes_reached<MaxScatterTiled>(
      plan_max_scatter_tiled, [](const Problem& p, Seen& seen) {
        // The combining runs on NVIDIA GPUs only, so on the GPU's plan, where the fuzz's planes are
        // whole-plane tiles read as one run. Its box walk (planes larger than a tile) is
        // MaxKernels.ScatterTiledCombinesLanesNamingOnePosition's.
        // Its channels-first window runs in quads (count_window_quads), and their tiles written
        // in quads of four positions: tiles whose run of positions starts mid-quad.
        MaxTileShape cpu;
        ASSERT_TRUE(plan_max_scatter_tiled(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledCpuBudget, &cpu)) << to_string(p);
        count_window_quads(p, cpu, seen);
        if (cpu.window_run && p.layout == Layout::channels_first && int64_t{cpu.planes} * p.in_plane() % 4 != 0)
          ++seen["quads: position runs that start mid-quad"];
        if (!combines_along_w(p)) return;
        MaxTileShape gpu;
        ASSERT_TRUE(plan_max_scatter_tiled(p, p.dtype == DType::f64 ? 8 : 4, kMaxTiledGpuBudget, &gpu)) << to_string(p);
        ++seen[gpu.window_run ? "warps combine adds, windows read as one run (GPU plan)" : "warps combine adds, boxes (GPU plan)"];
      },
      {"warps combine adds, windows read as one run (GPU plan)", "quads: window runs that start mid-quad",
       "quads: position runs that start mid-quad", "quads: the tensor's last quad of windows partial"});
}

// The run paths take stride-1 W axes only (about one draw in five), and the per-element sum of
// more than four taps along W needs a wide kernel (one axis in ten) at stride 1 or 2 (about one
// draw in a hundred), so that one must come up at least once and the others in at least 1% of
// the draws. tests/avg_kernels_test.cpp runs each path on
// fixed problems as well.
TEST(AvgPlanesReach, TheFuzzDrawsEveryBlockStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgGatherPlanes::domain())) {
    if (!AvgGatherPlanes::supports(p).ok || p.n == 0) continue;
    AvgPlanesPlan plan;
    ASSERT_TRUE(plan_avg_planes(p, p.dtype == DType::f64 ? 8 : 4, kPlanesCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kPlanesSmemBytes) << to_string(p);
    ++cases;
    const int64_t outer = p.n * p.c;
    if (outer > plan.planes && outer % plan.planes != 0) ++seen["several blocks, the last partial"];
    if (plan.planes > 1) ++seen["several planes per block"];
    if (plan.run_w == kPlanesExactRunW) ++seen["runs, kernel 3 unrolled"];
    if (plan.run_w == kPlanesMaxRunW) ++seen["runs, kernel up to 8"];
    if (plan.run_w > 0 && p.in[2] % kPlanesRun != 0) ++seen["a partial last run"];
    if (plan.run_w == 0) ++seen[plan.max_taps_w <= kPlanesUnrolledTaps ? "per element, unrolled taps" : "per element, any taps"];
    ++seen[plan.uniform ? "one divisor for every window" : "divisors by per-axis counts"];
  }
  expect_reached(seen, cases, {"several blocks, the last partial", "several planes per block", "runs, kernel 3 unrolled",
                               "runs, kernel up to 8", "a partial last run", "per element, unrolled taps",
                               "one divisor for every window", "divisors by per-axis counts"});
  EXPECT_GE(seen["per element, any taps"], 1) << cases << " cases";
}

TEST(AvgColumnsReach, TheFuzzDrawsEveryBlockStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgGatherColumns::domain())) {
    if (!AvgGatherColumns::supports(p).ok || p.n == 0) continue;
    AvgColumnsPlan plan;
    ASSERT_TRUE(plan_avg_columns(p, p.dtype == DType::f64 ? 8 : 4, kColumnsCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kColumnsSmemBytes) << to_string(p);
    ++cases;
    const int64_t outer = p.n * p.c;
    if (outer > plan.planes && outer % plan.planes != 0) ++seen["several blocks, the last partial"];
    if (plan.planes > 1) ++seen["several planes per block"];
    if (plan.planes * plan.W > plan.threads) ++seen["more columns than threads"];
    constexpr int K = kColumnsExactKernel;
    ++seen[plan.KH == K && plan.KW == K ? "3 x 3" : "any kernel up to 8"];
    if (plan.PH > 0 && plan.OH + plan.KH - 1 > plan.H + plan.PH) ++seen["window rows past both edges"];
    if (plan.PW > 0 && plan.OW + plan.KW - 1 > plan.W + plan.PW) ++seen["window columns past both edges"];
    ++seen[plan.uniform ? "one divisor for every window" : "a divisor per window"];
  }
  expect_reached(seen, cases, {"several blocks, the last partial", "several planes per block", "more columns than threads",
                               "3 x 3", "any kernel up to 8", "window rows past both edges",
                               "window columns past both edges", "one divisor for every window", "a divisor per window"});
}

TEST(AvgBroadcastReach, TheFuzzDrawsEveryRunStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgBroadcastPlane::domain())) {
    if (!AvgBroadcastPlane::supports(p).ok || p.n == 0) continue;
    ++cases;
    const int64_t positions = p.in_plane(), lanes = 16 / dtype_size(p.dtype);
    const bool whole = make_plane_window<int64_t>(p).whole;
    if (p.layout == Layout::channels_last) {
      if (positions > kBroadcastPositions && positions % kBroadcastPositions != 0)
        ++seen["channels-last, several runs of positions, the last partial"];
      if (positions < kBroadcastPositions) ++seen["channels-last, a plane shorter than a run"];
      ++seen[whole ? "channels-last, every position a tap" : "channels-last, positions outside the window"];
      ++seen[p.c % lanes == 0 ? "channels-last, C a whole number of packs" : "channels-last, C not a whole number of packs"];
    } else {
      if (p.in_elems() % lanes == 0 && positions % lanes != 0) ++seen["channels-first, packs across planes"];
      if (!whole) ++seen["channels-first, positions outside the window"];
    }
  }
  expect_reached(seen, cases,
                 {"channels-last, several runs of positions, the last partial", "channels-last, a plane shorter than a run",
                  "channels-last, every position a tap", "channels-last, positions outside the window",
                  "channels-last, C a whole number of packs", "channels-last, C not a whole number of packs",
                  "channels-first, packs across planes", "channels-first, positions outside the window"});
}

TEST(MaxDirectKeysReach, TheFuzzDrawsEveryKeyedCell) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::max, MaxDirectStored::domain())) {
    if (!MaxDirectStored::supports(p).ok || p.n == 0) continue;
    ++cases;
    // dispatch_max's vector path: the fuzz's buffers are allocated aligned.
    const int64_t lanes = 16 / dtype_size(p.dtype);
    if (p.layout != Layout::channels_last || p.c % lanes != 0 || !uses_int32(p, IndexWidth::fit)) continue;
    ++seen["keyed cells"];
    ++seen[std::string("keyed cells, ") + index_format_name(p.index_format) + " indices"];
    ++seen["keyed cells, " + std::to_string(p.dims) + "D"];
    bool gaps = false, dilated = false, padded = false;
    for (int a = kAxes - p.dims; a < kAxes; ++a) {
      gaps = gaps || p.stride[a] > p.effective_kernel(a);
      dilated = dilated || p.dilation[a] > 1;
      padded = padded || p.pad_begin[a] > 0 || p.pad_end[a] > 0;
    }
    if (gaps) ++seen["keyed cells, gaps between windows"];
    if (dilated) ++seen["keyed cells, dilated windows"];
    if (padded) ++seen["keyed cells, taps in the padding"];
  }
  expect_reached(seen, cases,
                 {"keyed cells", "keyed cells, plane indices", "keyed cells, global_row indices",
                  "keyed cells, global_col indices", "keyed cells, window indices", "keyed cells, 1D", "keyed cells, 2D",
                  "keyed cells, 3D", "keyed cells, gaps between windows", "keyed cells, dilated windows",
                  "keyed cells, taps in the padding"});
}

TEST(MaxDirectRowsReach, TheFuzzDrawsEveryRowStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::max, MaxDirectRows::domain())) {
    if (!MaxDirectRows::supports(p).ok || p.n == 0) continue;
    ++cases;
    const int64_t W = p.in[2], k = p.effective_kernel(2), s = p.stride[2], pb = p.pad_begin[2];
    const int64_t lanes = 16 / dtype_size(p.dtype);
    if (p.in_elems() % lanes == 0 && W % lanes != 0) ++seen["packs across rows"];
    if (p.in_elems() % lanes == 0) {
      bool one = false, two = false, more = false;
      for (int64_t e = 0; e < p.in_elems(); e += lanes) {
        const int64_t x = e % W, t = (x + pb) % s;
        if (x + lanes > W) continue;
        (t + lanes <= s ? one : t + lanes <= 2 * s ? two : more) = true;
      }
      if (one) ++seen["in-row packs within one window's stride"];
      if (two) ++seen["in-row packs across two windows' strides"];
      if (more) ++seen["in-row packs across more windows' strides"];
    }
    if (W < lanes) ++seen["rows shorter than a pack"];
    if (s > k) ++seen["gaps between windows"];
    if (p.dilation[2] > 1) ++seen["dilated windows"];
    if (pb >= s) ++seen["a window wholly in the padding"];
    if ((p.out[2] - 1) * s - pb + k > W) ++seen["a last window past the row's end"];
    if (p.out[2] * s - pb < W) ++seen["a tail no window covers"];
  }
  expect_reached(seen, cases,
                 {"packs across rows", "rows shorter than a pack", "in-row packs within one window's stride",
                  "in-row packs across two windows' strides", "in-row packs across more windows' strides",
                  "gaps between windows", "dilated windows", "a window wholly in the padding",
                  "a last window past the row's end", "a tail no window covers"});
}

// max.gather.taps: slabs along each lead axis (D, H, W) with a partial last one, whole-plane
// tiles several planes to one with a partial last group, grid cells with no window at both ends
// of the lead axis and past an inner axis' last window, and 1D, 2D and 3D stencils.
TEST(MaxTapsReach, TheFuzzDrawsEverySlabStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::max, MaxGatherTaps::domain())) {
    if (!MaxGatherTaps::supports(p).ok || p.n == 0) continue;
    MaxTapsPlan plan;
    ASSERT_TRUE(plan_max_taps(p, p.dtype == DType::f64 ? 8 : 4, kMaxTapsCpuBudget, &plan)) << to_string(p);
    ASSERT_TRUE(plan.bytes <= kMaxTiledSmemBytes) << to_string(p);
    ++cases;
    static const char* kAxisName[kAxes] = {"D", "H", "W"};
    const std::string lead = kAxisName[plan.lead];
    if (plan.slabs > 1)
      ++seen[p.in[plan.lead] % plan.slab != 0 ? "slabs along " + lead + ", the last partial" : "slabs along " + lead];
    if (plan.planes > 1)
      ++seen[p.n * p.c % plan.planes != 0 ? "whole planes, the last group partial" : "whole planes"];
    // Grid cells with no window: the halo before window 0 (reach > pad_begin) and after the last
    // window (reach > pad_end).
    const auto reach = [&](int a) { return p.effective_kernel(a) - 1; };
    if (plan.slabs > 1 && reach(plan.lead) > p.pad_begin[plan.lead] && reach(plan.lead) > p.pad_end[plan.lead])
      ++seen["slabs, cells with no window at both ends of the lead axis"];
    for (int a = plan.lead + 1; a < kAxes; ++a)
      if (reach(a) > p.pad_end[a]) ++seen["cells with no window past an inner axis' last"];
    ++seen[std::to_string(p.dims) + "D stencils"];
  }
  expect_reached(seen, cases,
                 {"slabs along D, the last partial", "slabs along H, the last partial", "slabs along W, the last partial",
                  "whole planes", "whole planes, the last group partial",
                  "slabs, cells with no window at both ends of the lead axis",
                  "cells with no window past an inner axis' last",
                  "1D stencils", "2D stencils", "3D stencils"});
}

TEST(AvgGatherRowsReach, TheFuzzDrawsEveryRowStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgGatherRows::domain())) {
    if (!AvgGatherRows::supports(p).ok || p.n == 0) continue;
    ++cases;
    const int64_t W = p.in[2], k = p.effective_kernel(2), s = p.stride[2], pb = p.pad_begin[2];
    const int64_t lanes = 16 / dtype_size(p.dtype);
    const bool packed = p.in_elems() % lanes == 0;
    if (!packed) ++seen["scalar path"];
    const bool unit = p.stride[2] == 1 && p.dilation[2] == 1;
    const bool unrolled = unit && (p.kernel[2] == 2 || p.kernel[2] == 3 || p.kernel[2] == 5);
    if (packed && unrolled) {
      ++seen["unrolled k2, k3, k5 s1 packs"];
      // A pack whose windows all lie inside the row (one shared reciprocal), and one whose don't.
      bool inside = false, edge = false;
      for (int64_t x = 0; x + lanes <= W; x += lanes) {
        const int64_t first = x + pb - (k - 1), last = first + lanes + k - 2;
        (first >= pb && last - pb + k - 1 < W ? inside : edge) = true;
      }
      if (inside && rows_windows_share(p)) ++seen["unrolled packs inside the row"];
      if (edge) ++seen["unrolled packs at a row's edge"];
    }
    if (packed && p.stride[2] == 1 && !unrolled) ++seen["stride-1 lane walks"];
    if (packed && p.stride[2] > 1) ++seen["strided packs"];
    if (rows_windows_share(p)) ++seen["reciprocal terms"];
    else ++seen["divided terms"];
    if (packed && W % lanes != 0) ++seen["packs across rows"];
    if (packed && W < lanes) ++seen["rows shorter than a pack"];
    if (s > k) ++seen["gaps between windows"];
    if (p.dilation[2] > 1) ++seen["dilated windows"];
    if (s > 1 && s <= k) ++seen["strided overlapping windows"];
    if (pb > 0) ++seen["windows past a row's start"];
    if ((p.out[2] - 1) * s - pb + k > W) ++seen["windows past a row's end"];
    if (p.has_divisor_override) ++seen["divisor_override"];
    else if (p.divisor == Divisor::include_pad) ++seen["include_pad"];
    else if (p.divisor == Divisor::exclude_pad) ++seen["exclude_pad"];
    else ++seen["full_kernel"];
  }
  expect_reached(seen, cases,
                 {"scalar path", "unrolled k2, k3, k5 s1 packs", "unrolled packs inside the row",
                  "unrolled packs at a row's edge", "stride-1 lane walks", "strided packs",
                  "reciprocal terms", "divided terms", "packs across rows",
                  "rows shorter than a pack", "gaps between windows", "dilated windows", "strided overlapping windows",
                  "windows past a row's start", "windows past a row's end", "divisor_override", "include_pad",
                  "exclude_pad", "full_kernel"});
}

TEST(AvgGatherFlatReach, TheFuzzDrawsEveryPackStructure) {
  Seen seen;
  int cases = 0;
  for (const Problem& p : fuzz_draws(Op::avg, AvgGatherFlat::domain())) {
    if (!AvgGatherFlat::supports(p).ok || p.n == 0) continue;
    ++cases;
    const int64_t W = p.in[2], H = p.in[1], kw = p.kernel[2], kh = p.kernel[1], pw = p.pad_begin[2];
    const int64_t lanes = 16 / dtype_size(p.dtype);
    ++seen[p.dims == 3 ? "3D problems" : "2D problems"];
    const bool packed = p.in_elems() % lanes == 0;
    if (!packed) ++seen["scalar path"];
    const bool unrolled = kw == 2 || kw == 3 || kw == 5;
    if (packed && unrolled) {
      ++seen["unrolled k2, k3, k5 packs"];
      if (p.out_elems() % lanes != 0) ++seen["dy read as single values"];
      else if (W % lanes != 0 || (pw - (kw - 1)) % lanes != 0) ++seen["dy read as packs at an offset"];
    }
    if (packed && !unrolled) ++seen["lane walks"];
    // out == in on every axis: same()'s flat runs, where a run fits two rows.
    const bool same = p.out[0] == p.in[0] && p.out[1] == p.in[1] && W == p.out[2];
    if (packed && unrolled && same && undilated_windows_overlap(p)) {
      double divisor = 0;
      if (W < lanes + kw - 1) ++seen["flat runs longer than a row (parts)"];
      else {
        const bool one = p.has_divisor_override || avg_uniform_divisor(p, &divisor);
        ++seen[one ? "flat runs, one divisor" : "flat runs, a divisor per window"];
        // With a divisor per window, the window rows of a pack that count the whole kernel along D
        // and H add raw: some plane (row) whose covering window planes (rows) all do.
        FlatFields<float, int64_t> counts{};
        fill_flat_counts(p, counts);
        const auto inner = [&](int a) {
          for (int64_t y = 0; y < p.in[a]; ++y) {
            const int64_t lo = std::max<int64_t>(y + p.pad_begin[a] - (p.kernel[a] - 1), 0);
            const int64_t hi = std::min<int64_t>(y + p.pad_begin[a], p.in[a] - 1);
            if (lo >= counts.full_lo[a] && hi <= counts.full_hi[a]) return true;
          }
          return false;
        };
        if (!one && inner(0) && inner(1)) ++seen["flat runs, a divisor per window, whole-kernel window rows"];
        if (W % lanes != 0) ++seen["flat runs across rows"];
        // A pack across rows 0 and 1 (or H - 2 and H - 1) of a plane: its two rows have different
        // valid window rows, and the run columns of one row are masked.
        if (W % lanes != 0 && kh > 1) ++seen["flat runs masked at a plane's edge"];
        if (W % lanes != 0 && kh > 1 && one) ++seen["flat runs masked at a plane's edge, one divisor"];
        // A pack that crosses a plane's end: its second row is the next plane's first.
        if ((W * H) % lanes != 0) ++seen["flat runs across planes"];
      }
    }
    if (packed && W % lanes != 0) ++seen["packs across rows"];
    if (packed && W < lanes) ++seen["rows shorter than a pack"];
    if (undilated_windows_overlap(p)) {
      ++seen["reciprocal terms"];
      // A part whose windows all lie inside the input along H and W, and one at an edge.
      bool inside_w = false;
      for (int64_t x = 0; x + lanes <= W; x += lanes) inside_w |= x - (kw - 1) >= 0 && x + lanes - 1 + kw - 1 < W;
      const bool inside_h = H >= 2 * kh - 1 && (p.dims < 3 || p.in[0] >= 2 * p.kernel[0] - 1);
      if (packed && inside_w && inside_h) ++seen["parts inside the input"];
      if (pw > 0 || p.pad_begin[1] > 0) ++seen["parts at a padded edge"];
    } else {
      ++seen["divided terms"];
    }
    if (p.has_divisor_override) ++seen["divisor_override"];
    else if (p.divisor == Divisor::include_pad) ++seen["include_pad"];
    else if (p.divisor == Divisor::exclude_pad) ++seen["exclude_pad"];
    else ++seen["full_kernel"];
  }
  expect_reached(seen, cases,
                 {"2D problems", "3D problems", "scalar path", "unrolled k2, k3, k5 packs", "dy read as single values",
                  "dy read as packs at an offset", "lane walks", "flat runs longer than a row (parts)",
                  "flat runs, one divisor", "flat runs, a divisor per window", "flat runs across rows",
                  "flat runs masked at a plane's edge", "flat runs masked at a plane's edge, one divisor",
                  "flat runs across planes", "packs across rows", "rows shorter than a pack",
                  "reciprocal terms", "parts inside the input", "parts at a padded edge", "divided terms",
                  "divisor_override", "include_pad", "exclude_pad", "full_kernel"});
  // A subset of the 1.2% with a divisor per window: about 0.8% of the draws (some 80 of a
  // 10,000-case run), under expect_reached's 1%; FlatTakesEveryPath runs it on every exclude_pad
  // shape of its list.
  const auto whole = seen.find("flat runs, a divisor per window, whole-kernel window rows");
  EXPECT_GE(whole == seen.end() ? 0 : whole->second, cases / 200) << "whole-kernel window rows in " << cases << " cases";
}

}  // namespace
}  // namespace pg
