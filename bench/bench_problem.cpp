#include "bench/bench_problem.hpp"

#include "src/harness/axis_options.hpp"
#include "src/model/invalid_input.hpp"
#include "src/model/problem.hpp"

namespace pg::bench {

Problem bench_problem(const PoolArgs& args, const std::vector<int64_t>& input_size, DType dtype) {
  if (input_size.size() < 3 || input_size.size() > 5)
    throw InvalidInput("--input-size has " + std::to_string(input_size.size()) +
                       " values; it takes N,C and 1 to 3 spatial sizes");
  // The rank must say N and C: an unbatched size would be read as (C, spatial...).
  const size_t dims = args.op.size() == 10 && args.op[8] >= '1' && args.op[8] <= '3' ? args.op[8] - '0' : 0;
  if (dims && input_size.size() != dims + 2)
    throw InvalidInput("--input-size has " + std::to_string(input_size.size()) + " values; " + args.op +
                       " takes N,C and " + std::to_string(dims) + " spatial sizes");
  NpyHeader header;
  header.type = npy_type_of(dtype);
  header.shape = input_size;
  // plan_pool reads a channels-last tensor's shape as (N, spatial..., C), under any of its names.
  if (dims && layout_named(args.layout, static_cast<int>(dims)) == Layout::channels_last) {
    header.shape.erase(header.shape.begin() + 1);
    header.shape.push_back(input_size[1]);
  }
  return plan_pool(args, header).problem;
}

}  // namespace pg::bench
