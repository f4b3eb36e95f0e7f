// The campaign targets of every registered variant whose name `names` matches (std::regex_search):
// the pooling variants (plugins' included), then the conv backward-data variants, each on the
// CPU (`cpu`, unless GPU-only) and on the GPU (`gpu`, when built for it). What `poolgrad fuzz`
// and the library's pg::fuzz() run.
#pragma once

#include <regex>

#include "fuzz/target.hpp"

namespace pg::fuzz {

Targets registered_targets(const std::regex& names, bool cpu, bool gpu);

}  // namespace pg::fuzz
