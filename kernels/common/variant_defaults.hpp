// The registration interface every variant answers (kernels/register.hpp and
// kernels/conv/register.hpp state it as a concept), the part that is data in one line:
//   static constexpr PoolTraits traits{.name = "max.gather.stored", .op = Op::max,
//                                      .inputs = Inputs::dy_and_indices, .deterministic = true};
// and the answers most variants give to the rest, stated once: no condition beyond the domain
// and no workspace. A variant derives from VariantDefaults and writes only what differs.
#pragma once

#include <cstddef>

#include "src/model/conv_variant.hpp"
#include "src/model/variant.hpp"

namespace pg {

// What a pooling variant says of itself: its name (op.strategy.source...), its op, what it reads,
// whether it is bitwise repeatable, whether it needs block cooperation (no CPU launch then).
struct PoolTraits {
  const char* name;
  Op op;
  Inputs inputs;
  bool deterministic;
  bool gpu_only = false;
};

struct ConvTraits {
  const char* name;
  bool deterministic;
  bool gpu_only = false;
  ConvErrorModel error_model = ConvErrorModel::direct;
};

template <class P>
struct VariantDefaultsFor {
  static Support supports(const P&) { return Support::yes(); }
  static size_t workspace_bytes(const P&) { return 0; }
};

using VariantDefaults = VariantDefaultsFor<Problem>;
using ConvVariantDefaults = VariantDefaultsFor<ConvProblem>;

}  // namespace pg
