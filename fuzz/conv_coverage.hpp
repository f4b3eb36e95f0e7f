// What a conv fuzz case exercised, as tags, and which tags a conv variant's domain admits (as
// fuzz/coverage.hpp does for pooling): a long run fails when an admitted tag never occurred.
#pragma once

#include <string>
#include <vector>

#include "src/model/conv_problem.hpp"
#include "src/harness/conv_registry.hpp"

namespace pg::fuzz {

std::vector<std::string> conv_observed_tags(const ConvProblem& p);
std::vector<std::string> conv_admitted_tags(const ConvVariant& v);

}  // namespace pg::fuzz
