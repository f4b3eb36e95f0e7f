// Benchmark suites: named rows, each one problem. `baseline` is bench/baselines/README.md (same
// shapes, so a report puts poolgrad's variants beside PyTorch's figures); `networks` is pooling
// layers of real networks, named after them (bench/networks.cpp). bench/pytorch_baseline.py
// times PyTorch on a suite's rows as `poolgrad bench --suite S --list --json` prints them: the
// names are the join key and the rows are defined here only.
#pragma once

#include <string>
#include <vector>

#include "src/model/problem.hpp"

namespace pg::bench {

struct Row {
  std::string name;   // label + describe_row(problem), e.g. "resnet50 stem: maxpool2d_bwd (32, 64, 112, 112) k3s2p1 float32 idx=int64"
  Problem problem;
  std::string label;  // the network and layer; empty in the baseline suite, whose names are the shapes alone
};

// PyTorch's name of a dtype ("float32", "bfloat16"): row names and --list --json use it.
const char* torch_dtype_name(DType t);

// A row named from its label and problem.
Row make_row(const std::string& label, const Problem& p);

std::vector<Row> baseline_rows();
std::vector<Row> networks_rows();

// The suites by name; empty when `suite` is not one of suite_names().
std::vector<Row> suite_rows(const std::string& suite);
const std::vector<std::string>& suite_names();

// The row's shape and window in the baseline's naming: "(N, C, D, H, W) k3s2p1 ..." as listed
// by a suite, from the problem itself so a changed batch shows in the name.
std::string describe_row(const Problem& p);

// Every row with its batch (and, when > 0, channel count) replaced: the small variants of a
// suite that a CPU run can afford. Names follow the new shapes.
std::vector<Row> resized(const std::vector<Row>& rows, int64_t batch, int64_t channels);

}  // namespace pg::bench
