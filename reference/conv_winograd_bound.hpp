// The error bound of a Winograd backward-data variant, F(4x4, 3x3): what its rounding can move a
// dx element by, in the form the comparison takes (a term count and a sum of magnitudes), from
// the transforms' own matrices in double. Plain loops on the problem model, nothing from kernels/.
//
// Backward-data with a 3-tap window, stride 1 and dilation 1 is a correlation of dy with the
// flipped weights: dx[i] = sum over t' of w[2 - t'] * dy[i + pad_begin - 2 + t'] per axis. F(4, 3)
// computes 4 outputs of it from 6 inputs as A^T [(G f) . (B^T d)] per axis, summed over k between
// the transforms. dx is cut into 4-wide tiles from position 0 along every spatial axis.
//
// In floating point each stage is a short sum of products with small constants, so (Higham's
// first-order bound for products of matrices) the computed dx element differs from the exact one
// by at most gamma_n times the same chain in absolute values:
//   |A^T| (sum over k of (|G| |f_k| |G|^T) . (|B^T| |d_k| |B|)) |A|
// at the element's place in its tile, with n the longest chain of roundings one term passes
// through: K/groups for the sum over k and kWinogradF4x4DepthPerAxis for each axis's transforms. That sum of
// magnitudes also covers the cross terms F(4, 3) adds and cancels (products of a weight and a dy
// value no direct term pairs), which is why the oracle's own sum of |terms| is not a bound here.
#pragma once

#include <cstdint>
#include <vector>

#include "src/model/conv_problem.hpp"

namespace pg::ref {

// Roundings per term besides the sum over k, per transformed axis (one pass of each transform):
//   B^T d  4: up to 4 nonzero taps a row (3 additions), or 3 with the one non-power-of-two
//             constant (5) rounding its product;
//   G f    4: 3 taps a row (2 additions), each product and its constant (1/6, 1/12, 1/24) rounded;
//   A^T m  4: up to 5 taps a row (4 additions), constants powers of two;
// and the elementwise product once: 12.5 per axis in 2D. 16 leaves room for a kernel that orders
// its sums differently.
inline constexpr int64_t kWinogradF4x4DepthPerAxis = 16;

struct ConvBound {
  std::vector<double> abs_sum;  // x_elems(): the chain above in absolute values
  std::vector<int64_t> terms;   // x_elems(): K/groups + dims * kWinogradF4x4DepthPerAxis
};

// Throws pg::Error when a spatial axis's window is not 3 taps, stride 1, dilation 1.
ConvBound winograd_f4x4_bound(const ConvProblem& p, const std::vector<double>& dy, const std::vector<double>& w);

}  // namespace pg::ref
