// The problem as include/poolgrad/plugin.h's C struct, both ways: what plugins and the public
// API (include/poolgrad/poolgrad.hpp) see of pg::Problem. Every field maps one to one, so a
// problem comes back unchanged.
#pragma once

#include "poolgrad/plugin.h"
#include "src/model/problem.hpp"

namespace pg {

poolgrad_problem to_c(const Problem& p);
Problem from_c(const poolgrad_problem& c);

}  // namespace pg
