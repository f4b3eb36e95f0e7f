// The CPU backend's instantiation of the max-pool variants (g++). One unit per op, so the kernels
// compile in parallel and a change to one op's kernels rebuilds only its units.
#include "kernels/common/exec.hpp"
#include "kernels/max/variants.hpp"

namespace pg {

std::vector<Variant> cpu_max_variants() { return make_variants<CpuExec>(MaxVariants{}); }

}  // namespace pg
