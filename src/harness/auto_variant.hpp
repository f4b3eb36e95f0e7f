// `--variant auto`: the variant to run on a problem, from what was measured, nearest first.
//
// The layers, asked in this order (MIOpen's user perf-db over its system one; the first that has a
// usable variant decides, and AutoChoice says which):
//   1. the exact problem: the user perf-db (`poolgrad tune`, src/harness/perfdb.hpp, this device and
//      poolgrad version), then the --selection file and each POOLGRAD_SELECTION file, then the
//      built-in table of this device (or the nearest device's: same arch, else the first table);
//   2. the problem's class (src/harness/selection.hpp), in the same order;
//   3. the model (src/harness/selection_model.hpp) over every measured problem of the selection files and
//      of the built-in tables of this arch (each in its device's copy time), among the variants that
//      support the problem; only deterministic ones when any of them does.
// A usable variant is a registered one, not a vendor library's (cudnn.*: a comparator, never
// auto's pick), whose supports() admits the problem on the backend and that `usable` accepts.
#pragma once

#include <functional>
#include <string>

#include "src/model/backend.hpp"
#include "src/harness/perfdb.hpp"
#include "src/model/problem.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/selection.hpp"

namespace pg {

// The --selection file, asked before POOLGRAD_SELECTION and the built-in table; "" for none.
// Throws InvalidInput when the file cannot be read or is not a selection.
void set_selection_file(const std::string& path);
// The --perfdb file ("" for the default path, src/harness/perfdb.hpp). A damaged file is reported once on
// stderr and ignored.
void set_perfdb_file(const std::string& path);
// The perf-db path auto reads and `tune` writes.
std::string current_perfdb_path();
// Drops what was read (after `tune` wrote the perf-db): the next choice reads the files again.
void forget_auto_tables();

// "NAME (ARCH)", the device as reports and selection tables name it.
std::string device_key(const DeviceInfo& d);

struct AutoChoice {
  const Variant* variant = nullptr;  // null: no usable variant supports the problem
  std::string layer;                 // which layer decided: "perf-db, exact problem", "built-in table, class", "model", ...
  bool tuned = false;                // the perf-db's entry for this exact problem decided
  std::string why;                   // lines: the class, each layer asked, what it ranked, the choice
};

// `usable` narrows the candidates further (e.g. no stored-index variant without indices).
AutoChoice choose_auto_variant(const Problem& p, BackendKind backend, const DeviceInfo& device,
                               const std::function<bool(const Variant&)>& usable = {});

// The layers' contents: what choose_auto_variant reads from the files and the build.
struct AutoTables {
  PerfDb perfdb;
  std::vector<SelectionTable> files;    // --selection, then POOLGRAD_SELECTION's
  std::vector<SelectionTable> builtin;  // one per device measured
};
// The same choice from given tables (poolgrad select --holdout asks what auto would pick from a
// table made of some reports on the rows of others). The model's weights are those of the first
// file table with measured problems, else of the built-in table used.
AutoChoice choose_auto_variant(const AutoTables& tables, const Problem& p, BackendKind backend, const DeviceInfo& device,
                               const std::function<bool(const Variant&)>& usable = {});

}  // namespace pg
