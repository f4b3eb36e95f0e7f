// Kernel selection from benchmark reports (MIOpen perf-db style): a table from problem class
// to the variants that ran it, fastest first. `poolgrad select` builds one from reports,
// `--variant auto` reads it (src/harness/auto_variant.hpp).
//
// A problem class is what decides which body is fastest, and no more, so that one measured row
// speaks for the problems a user brings: op, dims, layout, dtype, the window (kernel, stride,
// dilation, pads, whether ceil_mode adds a window, the avg divisor, the max index format; a
// window covering the whole input is "global" whatever its size), and a size bucket of the
// input's bytes (below L2, around it, far above it). Batch and channel counts beyond that
// bucket do not enter: every variant walks (n, c) planes the same way.
//
// This file depends only on the problem description, so the build's generator of the built-in
// table (bench/make_builtin_selection.cpp) links it without the kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/model/problem.hpp"
#include "src/harness/selection_model.hpp"

namespace pg {

// "max 2d cf f32 k3s2p1 idx=plane/i64 L": op, dims, layout, dtype, window class, size bucket.
std::string problem_class(const Problem& p);
// The class without its size bucket: the fallback when no row of the exact class was measured.
std::string problem_class_any_size(const Problem& p);
// One spatial parameter as classes and row names write it: "3" when every axis agrees, else "1x3x3".
std::string axes_text(const Problem& p, const int64_t* v);
// "S" (input < 4 MiB), "M" (< 64 MiB) or "L".
const char* size_bucket(const Problem& p);

// One variant's standing in a class: its time relative to each row's fastest verified variant.
struct RankedVariant {
  std::string variant;
  int rows = 0;                 // rows of the class it was verified and timed on
  double mean_slowdown = 1.0;   // mean over those rows of ms / the row's best ms
  double worst_slowdown = 1.0;
};

struct SelectionEntry {
  std::string key;                     // problem_class()
  int rows = 0;                        // rows of the class in the reports
  // Best first: the smallest worst slowdown over the class's rows (so the pick is as close as any
  // variant can be to every row's fastest), then the smallest mean; a variant that missed a row
  // ranks below those that ran all.
  std::vector<RankedVariant> ranking;
  std::string source;                  // the file it came from
  // The runner-up's worst slowdown over the winner's, in percent; negative when only one variant ran.
  double margin_pct() const;
};

// One timed run from a report: a verified variant on one problem.
struct TimedRun {
  std::string variant;
  std::string row;  // the row's name, to group runs of the same problem
  Problem problem;
  double ms = 0;
  bool deterministic = true;  // the variant's own claim, as the report recorded it
  bool vendor = false;        // a vendor library's (cudnn.*): a comparator, never auto's pick
  double copy_gbps = 0;       // the report's copy ceiling (0: unknown)
};

// Ranks the variants of every class the runs cover.
std::vector<SelectionEntry> build_selection(const std::vector<TimedRun>& runs, const std::string& source);
// The same ranking from times already grouped: class -> row -> variant -> ms (conv's classes use it,
// src/harness/conv_selection.hpp). add_class_time keeps a variant's better time on a row.
using ClassTimes = std::map<std::string, std::map<std::string, std::map<std::string, double>>>;
void add_class_time(ClassTimes& table, const std::string& key, const std::string& row, const std::string& variant,
                    double ms);
std::vector<SelectionEntry> rank_classes(const ClassTimes& table, const std::string& source);
// Every measured problem with its variants' times (a variant timed twice on it keeps its better time).
std::vector<Example> examples_from_runs(const std::vector<TimedRun>& runs);

// What one device's reports say: per exact problem, per class, and the model for the rest.
struct SelectionTable {
  std::string device;                  // the reports' device, "NAME (ARCH)"; empty in old files
  std::vector<std::string> sources;    // the reports it was made from
  std::vector<SelectionEntry> classes;
  std::vector<Example> problems;       // the exact problems measured: exact keys and the model's examples
  ModelWeights weights = default_model_weights();
  std::string source;                  // where this table was read from
};

// A table from runs of one device; the model's weights are learned from its problems when `fit`.
SelectionTable build_selection_table(const std::vector<TimedRun>& runs, const std::string& device,
                                     const std::vector<std::string>& sources, bool fit);

// The selection file: {"format": "poolgrad-selection/2", "device", "sources", "classes": {key: entry},
// "problems": [{row, problem, times}], "model": {feature: weight}}. Version 1 files (classes only)
// are still read.
std::string selection_to_json(const SelectionTable& table);
// Throws InvalidInput naming `source` when the text is not a selection file.
SelectionTable selection_from_json(const std::string& text, const std::string& source);

}  // namespace pg
