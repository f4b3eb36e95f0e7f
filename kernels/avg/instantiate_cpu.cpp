// The CPU backend's instantiation of the avg-pool variants (g++). One unit per op, so the kernels
// compile in parallel and a change to one op's kernels rebuilds only its units.
#include "kernels/common/exec.hpp"
#include "kernels/avg/variants.hpp"

namespace pg {

std::vector<Variant> cpu_avg_variants() { return make_variants<CpuExec>(AvgVariants{}); }

}  // namespace pg
