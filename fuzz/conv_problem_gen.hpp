// RapidCheck generators for random valid convolution problems inside a conv variant's
// ConvDomain, and their data. As for pooling (fuzz/problem_gen.hpp), sizes are derived from the
// window rather than filtered, so a case is only discarded for a condition the variant's
// supports() adds beyond its domain.
#pragma once

#include <rapidcheck.h>

#include <iosfwd>

#include "src/model/conv_problem.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/datagen.hpp"

namespace pg {

void showValue(const ConvProblem& p, std::ostream& os);

namespace fuzz {

// What a property needs beyond the domain: every problem, or only ones with an axis whose
// stride passes the dilated kernel (dx rows no window touches), or only grouped ones.
enum class ConvShapeRule { any, gaps, grouped };

rc::Gen<ConvProblem> conv_problem(const ConvDomain& domain, ConvShapeRule rule = ConvShapeRule::any);
// Whether conv_problem(domain) could have drawn p's sizes (batch, groups, channels per group, each
// axis's length past its minimum), as generator_reaches (fuzz/problem_gen.hpp) for pooling.
bool conv_generator_reaches(const ConvDomain& domain, const ConvProblem& p);
rc::Gen<DataSpec> conv_data_spec();

}  // namespace fuzz
}  // namespace pg
