// RapidCheck generators for random valid pooling problems inside a variant's Domain, and their
// data.
//
// Parameters are dependent (the input must be long enough for the window, u8 indices need
// fewer than 255 taps, a packed axis a multiple of the pack), so sizes are derived from the
// window and the domain rather than filtered: a case is only discarded for a condition the
// variant's supports() adds beyond its domain, and the property counts those.
#pragma once

#include <rapidcheck.h>

#include <iosfwd>
#include <vector>

#include "src/harness/datagen.hpp"
#include "src/model/domain.hpp"
#include "src/model/problem.hpp"
#include "src/harness/registry.hpp"

namespace pg {

// How RapidCheck prints a counterexample: the replayable problem line.
void showValue(const Problem& p, std::ostream& os);
void showValue(const DataSpec& d, std::ostream& os);

namespace fuzz {

inline constexpr int kFullSize = 100;  // RapidCheck's default maximum size

// One element of a non-empty list, drawn (inside a generator or a property).
template <class T>
T pick(const std::vector<T>& from) {
  RC_ASSERT(!from.empty());
  return *rc::gen::elementOf(from);
}

rc::Gen<Problem> problem(Op op, const Domain& domain);
// Whether problem(op, domain) could have drawn p's sizes: batch, channels, and each axis's length
// past its minimum within the domain's reach (the window, layout and dtype are for the domain's
// admits() to say). A campaign runs a case another variant's generator drew only on the variants
// whose own generator reaches it (fuzz/campaign.hpp), so that a lane keeps to its own sizes.
bool generator_reaches(const Domain& domain, const Problem& p);
// Foreign indices only for variants that read stored indices: the others recompute the argmax.
rc::Gen<DataSpec> data_spec(Inputs inputs);

}  // namespace fuzz
}  // namespace pg
