// The built-in selection table: generated at build time by bench/make_builtin_selection.cpp
// from the latest committed H100 pool_bench report of each suite (bench/latest_reports.py).
#pragma once

namespace pg {

extern const char* const kBuiltinSelectionJson;
extern const char* const kBuiltinSelectionSource;  // the reports it was made from

}  // namespace pg
