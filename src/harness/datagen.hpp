// Deterministic test data: the same (problem, DataSpec) gives the same tensors on every
// machine, so a failure replays from one line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/conv_problem.hpp"
#include "src/model/problem.hpp"

namespace pg {

enum class DataKind : uint8_t {
  ints,     // small integers: exact sums, frequent ties in x
  special,  // small integers with NaN, -inf and +inf sprinkled into x and rarely into dy
  real,     // uniform reals in [-1, 1), rounded to the dtype
  // ints, and max pooling's stored indices partly replaced by ones no window produces (negative,
  // past the tensor, another plane's position, a tap with a nonzero high word, another window's
  // index): every stored-index kernel must skip an index that is not a tap of its own window.
  foreign,
};

struct DataSpec {
  uint64_t seed = 1;
  DataKind kind = DataKind::ints;
};

const char* data_kind_name(DataKind k);
bool parse_data_kind(const std::string& s, DataKind* k);

struct HostData {
  std::vector<double> x;   // in_elems(), values exactly representable in the dtype
  std::vector<double> dy;  // out_elems()
};

HostData make_data(const Problem& p, const DataSpec& spec);

// Convolution data: ints (small integers, so sums are exact in every dtype that holds them) or
// real (uniform in [-1, 1), rounded to the dtype); conv_data_kind_ok() says which kinds apply.
struct ConvHostData {
  std::vector<double> x;   // x_elems(): the forward input, for properties such as the adjoint
  std::vector<double> w;   // w_elems()
  std::vector<double> dy;  // y_elems()
};

bool conv_data_kind_ok(DataKind k);
ConvHostData make_conv_data(const ConvProblem& p, const DataSpec& spec);

// DataKind::foreign: replaces about a quarter of `index` (the oracle's forward indices in p's
// format and type) with indices no window produces, seeded by spec.seed. Windows without a tap
// keep their marker.
void make_foreign(const Problem& p, const DataSpec& spec, std::vector<int64_t>* index);

}  // namespace pg
