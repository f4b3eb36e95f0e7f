// The CPU oracle for N-D convolution forward and backward-data: the plainest loops that follow
// the definition in src/model/conv_problem.hpp, values in double, nothing shared with kernels/.
//
// Tensors are flat vectors in the problem's layout (the same element order as the device
// buffers): x has x_elems(), w w_elems(), y and dy y_elems() values.
#pragma once

#include <cstdint>
#include <vector>

#include "src/model/conv_problem.hpp"

namespace pg::ref {

// y = conv(x, w).
std::vector<double> conv_forward(const ConvProblem& p, const std::vector<double>& x,
                                 const std::vector<double>& w);

// Every dx element with the facts the comparison bound needs (as pooling's Gradient).
struct ConvGradient {
  std::vector<double> dx;       // x_elems()
  std::vector<double> abs_sum;  // sum of |dy * w| over the terms added into the element
  std::vector<int64_t> terms;   // how many terms were added (taps inside the input x K per group)
};

// dx = conv_transpose(dy, w): the adjoint of conv_forward in x.
ConvGradient conv_backward_data(const ConvProblem& p, const std::vector<double>& dy,
                                const std::vector<double>& w);

}  // namespace pg::ref
