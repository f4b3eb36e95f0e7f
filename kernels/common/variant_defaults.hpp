// The answers most variants give to the registration interface (kernels/register.hpp states the
// whole contract as a concept): no condition beyond the domain, no workspace, a body the CPU
// backend runs too. A variant derives from these and writes only what differs.
#pragma once

#include <cstddef>

#include "src/model/conv_variant.hpp"
#include "src/model/variant.hpp"

namespace pg {

template <class P>
struct VariantDefaultsFor {
  static constexpr bool gpu_only = false;
  static Support supports(const P&) { return Support::yes(); }
  static size_t workspace_bytes(const P&) { return 0; }
};

using VariantDefaults = VariantDefaultsFor<Problem>;
using ConvVariantDefaults = VariantDefaultsFor<ConvProblem>;

}  // namespace pg
