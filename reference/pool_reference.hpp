// The CPU oracle for max and average pooling, forward and backward: the plainest loops that
// follow the definitions, values in double, nothing shared with kernels/.
//
// Tensors are flat vectors in the problem's layout (the same element order as the device
// buffers). Definitions the frameworks leave open are fixed here and documented in README.md:
// - max: candidates are the window's taps inside the input, in row-major window order. The
//   first candidate starts as the maximum (ignore-NaN: the first non-NaN one, if any); a later
//   tap v replaces it when v > max (tie first) or v >= max (tie last), or, under propagate,
//   when v is NaN. So PyTorch's rule (a NaN wins, the last NaN wins) is reproduced, an all
//   -inf window still selects a real tap, and y equals x at the selected index.
// - a window with no tap inside the input (dilation with padding can make one): max gives
//   y = -inf and index -1 (255 as u8), avg gives y = 0; neither routes any gradient.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/model/problem.hpp"

namespace pg::ref {

inline constexpr int64_t kNoTap = -1;

struct Forward {
  std::vector<double> y;        // out_elems(), output layout
  std::vector<int64_t> index;   // max only: in the problem's index format, kNoTap when none
};

// Every dx element with the facts the comparison bound needs.
struct Gradient {
  std::vector<double> dx;
  std::vector<double> abs_sum;  // sum of |term| over the terms added into the element
  std::vector<int64_t> terms;   // how many terms were added
};

Forward forward(const Problem& p, const std::vector<double>& x);

Gradient backward_avg(const Problem& p, const std::vector<double>& dy);

// A stored index that is not a tap of its window inside the input. what() reads "index V at
// output (n=.., c=.., pos=..) is not a tap ..."; `output_offset` lets a caller that decoded the
// indices (u8 255 is kNoTap here) quote the value as the file holds it.
struct BadIndex : std::invalid_argument {
  BadIndex(const std::string& what, int64_t output_offset) : std::invalid_argument(what), output_offset(output_offset) {}
  int64_t output_offset;
};

// What to do with an index that is not a tap of its window inside the input: reject (throw
// BadIndex naming the output position, as `poolgrad backward` wants for a user's file) or skip
// (route nothing, what every stored-index kernel does; the fuzz's foreign-index data).
enum class ForeignIndex { reject, skip };

// Routes dy through stored indices; nothing is ever written out of bounds.

Gradient backward_max_indices(const Problem& p, const std::vector<double>& dy,
                              const std::vector<int64_t>& index, ForeignIndex foreign = ForeignIndex::reject);

// Recomputes each window's argmax from x with the problem's tie and NaN rules.
Gradient backward_max_recompute(const Problem& p, const std::vector<double>& x,
                                const std::vector<double>& dy);

// The divisor of an average window (before any divisor_override); exposed for golden tests.
int64_t avg_divisor(const Problem& p, const int64_t* out_pos);

}  // namespace pg::ref
