// The standard benchmark suite: the rows of bench/baselines/README.md, same shapes, so a
// report can put poolgrad's variants beside PyTorch's figures. bench/pytorch_baseline.py
// times PyTorch on the same list (keep the two in step: the names are the join key).
#pragma once

#include <string>
#include <vector>

#include "src/problem.hpp"

namespace pg::bench {

struct Row {
  std::string name;  // e.g. "maxpool2d_bwd (64, 64, 112, 112) k3s2p1 float32"
  Problem problem;
};

std::vector<Row> baseline_rows();

}  // namespace pg::bench
