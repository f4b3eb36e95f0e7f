// The registration list: every kernel variant, once, from the per-op lists (kernels/max/variants.hpp,
// kernels/avg/variants.hpp). Tests, fuzzing, `poolgrad check` and the benchmark pick them up.
#pragma once

#include "kernels/avg/variants.hpp"
#include "kernels/max/variants.hpp"

namespace pg {

using AllVariants = decltype(join(MaxVariants{}, AvgVariants{}));

}  // namespace pg
