// Problems the tests build by hand.
#pragma once

#include "src/model/problem.hpp"

namespace pg::test {

// A square 2D pooling problem with one kernel, stride and symmetric pad on both axes.
inline Problem pool2d(Op op, int64_t n, int64_t c, int64_t hw, int64_t k, int64_t s, int64_t pad) {
  Problem p;
  p.op = op;
  p.dims = 2;
  p.n = n;
  p.c = c;
  p.in[1] = p.in[2] = hw;
  p.kernel[1] = p.kernel[2] = k;
  p.stride[1] = p.stride[2] = s;
  p.pad_begin[1] = p.pad_begin[2] = p.pad_end[1] = p.pad_end[2] = pad;
  finalize(p);
  return p;
}

}  // namespace pg::test
