// The built-in convolution problems `poolgrad check` runs every conv variant on: one case per
// edge of the definition (stride beyond the dilated kernel, asymmetric and "same" padding,
// dilation with padding, groups and depthwise, channels-last, every dtype), plus three cases
// from inside each variant's own domain. Small enough for the CPU backend.
#pragma once

#include <string>
#include <vector>

#include "src/model/conv_problem.hpp"
#include "src/harness/datagen.hpp"

namespace pg {

struct ConvCheckCase {
  std::string label;
  ConvProblem problem;
  DataSpec data;
};

std::vector<ConvCheckCase> conv_check_set();

}  // namespace pg
