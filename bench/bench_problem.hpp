// A benchmark problem from the options `poolgrad forward/backward` take, with the input given
// by its size and dtype instead of a file: the options go through plan_pool(), the same parsing
// and validation as those commands, so a bench row means what the same options mean there.
#pragma once

#include <cstdint>
#include <vector>

#include "src/harness/pool_run.hpp"

namespace pg::bench {

// input_size is N, C, spatial... whatever the layout (args.layout says how the tensor is laid out).
// Throws InvalidInput naming the parameter.
Problem bench_problem(const PoolArgs& args, const std::vector<int64_t>& input_size, DType dtype);

}  // namespace pg::bench
