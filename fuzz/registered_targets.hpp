// The campaign targets of every registered variant whose name `names` matches (std::regex_search):
// the pooling variants (plugins' included), then the conv backward-data variants, each on the
// CPU (`cpu`, unless GPU-only) and on the GPU (`gpu`, when built for it). What `poolgrad fuzz`
// and the library's pg::fuzz() run. Without `vendor`, a vendor library's variants (cudnn.*) are
// left out: their disagreements are findings about the vendor, not failures of one's own kernels.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "fuzz/target.hpp"

namespace pg::fuzz {

Targets registered_targets(const std::regex& names, bool cpu, bool gpu, bool vendor = true);
// The vendor variants `names` matches (what registered_targets leaves out without `vendor`).
std::vector<std::string> vendor_variants_matching(const std::regex& names);

}  // namespace pg::fuzz
