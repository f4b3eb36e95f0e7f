// The registration list: every kernel variant, once. Adding a variant is one file in
// kernels/ and one line here; tests, fuzzing, `poolgrad check` and the benchmark pick it up.
#pragma once

#include "register.hpp"

namespace pg {

using AllVariants = VariantList<>;

}  // namespace pg
