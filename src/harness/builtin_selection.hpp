// The built-in selection tables: generated at build time by bench/make_builtin_selection.cpp from
// the latest committed report of each suite on each device (bench/latest_reports.py), one table per
// device, with the model's weights learned from that device's measured problems.
#pragma once

namespace pg {

struct BuiltinSelection {
  const char* device;   // "NAME (ARCH)", as the reports' context names it
  const char* sources;  // the reports it was made from
  const char* json;     // a poolgrad-selection/2 document
};

extern const BuiltinSelection kBuiltinSelections[];
extern const int kBuiltinSelectionCount;

}  // namespace pg
