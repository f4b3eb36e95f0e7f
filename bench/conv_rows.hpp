// The conv backward-data benchmark rows (issue 13): the two rows cuDNN's figures are quoted for,
// a stride-2 row and a depthwise row, each in fp32 and bf16. bench/pytorch_conv_baseline.py
// times cuDNN on the same list (keep the two in step: the names are the join key).
#pragma once

#include <string>
#include <vector>

#include "src/model/conv_problem.hpp"

namespace pg::bench {

struct ConvRow {
  std::string name;  // e.g. "conv2d_bwd_data (32, 128, 56, 56) K256 k3s1p1 float32"
  ConvProblem problem;
};

std::vector<ConvRow> conv_rows();

}  // namespace pg::bench
