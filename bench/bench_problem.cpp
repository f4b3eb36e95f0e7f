#include "bench/bench_problem.hpp"

#include "src/invalid_input.hpp"

namespace pg::bench {

Problem bench_problem(const PoolArgs& args, const std::vector<int64_t>& input_size, DType dtype) {
  if (input_size.size() < 3 || input_size.size() > 5)
    throw InvalidInput("--input-size has " + std::to_string(input_size.size()) +
                       " values; it takes N,C and 1 to 3 spatial sizes");
  NpyHeader header;
  header.type = npy_type_of(dtype);
  header.shape = input_size;
  if (args.layout == "NHWC") {  // plan_pool reads a channels-last tensor's shape as (N, spatial..., C)
    header.shape.erase(header.shape.begin() + 1);
    header.shape.push_back(input_size[1]);
  }
  const PoolPlan plan = plan_pool(args, header);
  if (plan.unbatched)
    throw InvalidInput("--input-size has " + std::to_string(input_size.size()) + " values; " + args.op +
                       " takes N,C and " + std::to_string(plan.problem.dims) + " spatial sizes");
  return plan.problem;
}

}  // namespace pg::bench
