// The built-in problem set `poolgrad check` runs every variant on: one case per edge the
// frameworks got wrong (../README.md lists them), small enough for the CPU backend.
#pragma once

#include <string>
#include <vector>

#include "src/harness/datagen.hpp"
#include "src/model/problem.hpp"

namespace pg {

struct CheckCase {
  std::string label;
  Problem problem;
  DataSpec data;
};

std::vector<CheckCase> check_set();

}  // namespace pg
