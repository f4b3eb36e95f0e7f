// `--variant auto`: the variant a selection table ranks fastest for the problem's class, among
// those whose supports() admits the problem on the backend.
//
// The tables are layered as MIOpen layers its user and system perf-dbs: the file given by
// --selection first, then each file in POOLGRAD_SELECTION (':'-separated), then the built-in table
// the build generated from the latest committed H100 reports (bench/results/). The first layer with
// an entry for the problem's class and a usable variant in it decides. Without one, the same
// layers are asked for the class at another size bucket; without that, the first registered
// variant that supports the problem (the registry's order), and the reason says so.
#pragma once

#include <functional>
#include <string>

#include "src/backend.hpp"
#include "src/problem.hpp"
#include "src/registry.hpp"

namespace pg {

// The --selection file, asked before POOLGRAD_SELECTION and the built-in table; "" for none.
// Throws InvalidInput when the file cannot be read or is not a selection.
void set_selection_file(const std::string& path);

struct AutoChoice {
  const Variant* variant = nullptr;  // null: no registered variant supports the problem
  std::string why;                   // lines: the class, the table that decided, the ranking read
};

// `usable` narrows the candidates further (e.g. no stored-index variant without indices).
AutoChoice choose_auto_variant(const Problem& p, BackendKind backend,
                               const std::function<bool(const Variant&)>& usable = {});

}  // namespace pg
