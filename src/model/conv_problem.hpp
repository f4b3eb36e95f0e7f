// The convolution problem descriptor: N-D convolution (1D/2D/3D) forward and backward-data with
// PyTorch's parameters (torch.nn.functional.convNd, torch.nn.grad.convNd_input). Trivially
// copyable, so kernels take it by value.
//
// As for pooling, spatial axes are always three: a 1D or 2D problem has leading axes of size 1
// with kernel 1, stride 1, dilation 1 and no padding, which changes no result.
//
// Tensors (dense, in `layout`):
//   x  (N, C, D, H, W)           channels-last: (N, D, H, W, C)
//   w  (K, C/groups, kD, kH, kW) channels-last: (K, kD, kH, kW, C/groups)   (PyTorch's memory order)
//   y  (N, K, oD, oH, oW)        channels-last: (N, oD, oH, oW, K)
// Group g owns input channels [g*C/G, (g+1)*C/G) and output channels [g*K/G, (g+1)*K/G).
//   y[n, k, o] = sum over c in k's group, taps t: x[n, c, o*stride - pad_begin + t*dilation] * w[k, c - group_base, t]
// (taps outside the input contribute nothing). Backward-data dx is the adjoint: dx = conv^T(dy, w).
#pragma once

#include <cstdint>
#include <string>

#include "src/model/dtype.hpp"
#include "src/model/problem.hpp"  // Layout, kAxes

namespace pg {

// How the padding was given: explicit begin/end per axis, or PyTorch's padding="same" (total
// dilation*(kernel-1) per axis, the odd extra on the end side; stride must be 1) or "valid" (none).
enum class ConvPadMode : uint8_t { explicit_pads, same, valid };

struct ConvProblem {
  int dims = 2;  // spatial dims as the user gave them: 1..3
  int64_t n = 1, c = 1, k = 1, groups = 1;
  int64_t in[kAxes] = {1, 1, 1};
  int64_t out[kAxes] = {1, 1, 1};  // set by conv_finalize()
  int64_t kernel[kAxes] = {1, 1, 1};
  int64_t stride[kAxes] = {1, 1, 1};
  int64_t dilation[kAxes] = {1, 1, 1};
  int64_t pad_begin[kAxes] = {0, 0, 0};
  int64_t pad_end[kAxes] = {0, 0, 0};
  ConvPadMode pad_mode = ConvPadMode::explicit_pads;
  Layout layout = Layout::channels_first;
  DType dtype = DType::f32;

  int64_t c_per_group() const { return c / groups; }
  int64_t k_per_group() const { return k / groups; }
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t x_elems() const { return n * c * in_plane(); }
  int64_t y_elems() const { return n * k * out_plane(); }
  int64_t w_elems() const { return k * c_per_group() * taps(); }
  int64_t effective_kernel(int a) const { return dilation[a] * (kernel[a] - 1) + 1; }
  // Multiply-adds of the direct convolution (forward and backward-data alike): what TFLOP/s count.
  double macs() const { return static_cast<double>(n) * k * out_plane() * c_per_group() * taps(); }
};

// Output length of one axis: floor((in + pad_begin + pad_end - dilation*(kernel-1) - 1) / stride) + 1.
// Returns a value below 1 when the window does not fit; conv_validate() reports that.
int64_t conv_out_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                        int64_t pad_end);

// Resolves pad_mode same/valid into pad_begin/pad_end and sets out[] from the other fields. Call
// after any change to sizes or window parameters.
void conv_finalize(ConvProblem& p);

// "" when the problem is valid, else one line naming the first bad parameter and its value.
std::string conv_validate(const ConvProblem& p);

// One line with every parameter, in the syntax parse_conv_problem() reads (failures print it,
// `poolgrad replay` takes it back), e.g.
//   op=conv2d n=2 c=8 k=16 g=2 in=9x9 ks=3x3 s=1x1 d=1x1 pb=1x1 pe=1x1 layout=ncdhw dtype=f32
// (k= is the output channel count, ks= the kernel size). Padding given as "same" or "valid"
// prints as pad=same or pad=valid in place of pb=/pe=, so a replay keeps the mode's checks.
std::string conv_to_string(const ConvProblem& p);

// Parses conv_to_string()'s syntax, strictly: an unknown or repeated key, a token that is not
// key=value, a number with anything around it, or pad= beside pb=/pe= is an error (false, and
// *error set to one line). Keys left out keep ConvProblem's defaults; the result is finalized
// but not validated.
bool parse_conv_problem(const std::string& text, ConvProblem* p, std::string* error);

}  // namespace pg
