// The problem descriptor: one struct covers every framework's pooling convention, each axis
// explicit (../README.md "Semantic model"). Trivially copyable, so kernels take it by value.
//
// Spatial axes are always three: a 1D or 2D problem has leading axes of size 1 with kernel 1,
// stride 1, dilation 1 and no padding, which changes no result and no index (a per-plane flat
// index d*H*W + h*W + w equals h*W + w when D = 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/dtype.hpp"

namespace pg {

enum class Op : uint8_t { max, avg };
enum class Layout : uint8_t { channels_first, channels_last };
// include_pad: PyTorch's count_include_pad, the window clamped to input + padding.
// full_kernel: cuDNN/MIOpen/oneDNN/CK, always the product of the kernel sizes.
// exclude_pad: only taps inside the input.
enum class Divisor : uint8_t { include_pad, full_kernel, exclude_pad };
enum class TieRule : uint8_t { first, last };
// propagate: PyTorch, a NaN wins and the last NaN wins. ignore: NaN never wins.
enum class NanRule : uint8_t { propagate, ignore };
// plane: flat index inside the (n, c) plane, row-major (PyTorch).
// global_row / global_col: ONNX, plane offset (n*C + c)*plane plus the in-plane index in
// row-major or column-major (storage_order = 1) order. window: row-major tap number inside
// the window (MIOpen mask, oneDNN workspace).
enum class IndexFormat : uint8_t { plane, global_row, global_col, window };
enum class IndexType : uint8_t { i64, i32, u8 };
enum class PadLimit : uint8_t { none, half_kernel };

inline constexpr int kAxes = 3;

struct Problem {
  Op op = Op::max;
  int dims = 2;  // spatial dims as the user gave them: 1..3
  int64_t n = 1, c = 1;
  int64_t in[kAxes] = {1, 1, 1};
  int64_t out[kAxes] = {1, 1, 1};  // set by finalize()
  int64_t kernel[kAxes] = {1, 1, 1};
  int64_t stride[kAxes] = {1, 1, 1};
  int64_t dilation[kAxes] = {1, 1, 1};
  int64_t pad_begin[kAxes] = {0, 0, 0};
  int64_t pad_end[kAxes] = {0, 0, 0};
  bool ceil_mode = false;
  Divisor divisor = Divisor::include_pad;
  bool has_divisor_override = false;
  int64_t divisor_override = 0;
  TieRule tie = TieRule::first;
  NanRule nan = NanRule::propagate;
  IndexFormat index_format = IndexFormat::plane;
  IndexType index_type = IndexType::i64;
  Layout layout = Layout::channels_first;
  DType dtype = DType::f32;
  PadLimit pad_limit = PadLimit::half_kernel;
  bool avg3d_input_at_least_kernel = true;  // PyTorch's avg_pool3d check

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  int64_t in_elems() const { return n * c * in_plane(); }
  int64_t out_elems() const { return n * c * out_plane(); }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t effective_kernel(int a) const { return dilation[a] * (kernel[a] - 1) + 1; }
  // No two windows share an input element: every dx element is written at most once.
  bool windows_disjoint() const {
    for (int a = 0; a < kAxes; ++a)
      if (stride[a] < effective_kernel(a)) return false;
    return true;
  }
};

// Output length of one axis: PyTorch's pooling_output_shape_pad_lr, which ONNX shares.
// Returns a value below 1 when the window does not fit; validate() reports that.
int64_t pooled_length(int64_t length, int64_t kernel, int64_t stride, int64_t dilation,
                      int64_t pad_begin, int64_t pad_end, bool ceil_mode);

// Sets out[] from the other fields. Call after any change to sizes or window parameters.
void finalize(Problem& p);

// "" when the problem is valid, else one line naming the first bad parameter and its value.
std::string validate(const Problem& p);

// One line with every parameter, in the syntax parse_problem() reads: failures print it and
// `poolgrad replay` takes it back.
std::string to_string(const Problem& p);

// Parses to_string()'s syntax; on error returns false and sets *error to one line.
bool parse_problem(const std::string& text, Problem* p, std::string* error);

// Names used in to_string, the CLI and reports.
const char* op_name(Op op);
const char* divisor_name(Divisor d);
const char* index_format_name(IndexFormat f);
const char* index_type_name(IndexType t);
int index_type_size(IndexType t);

// A hand-built problem's window (the check sets', the tests'), each axis list given as its
// tail: a 2D problem passes {H, W}. An empty list leaves those axes as they are. For pooling and
// conv problems alike: both spell their window with these fields.
struct WindowTails {
  std::vector<int64_t> in, kernel, stride, pad_begin, pad_end, dilation;
};

// A cubic window: the same kernel, stride and padding on every axis of `in`.
inline WindowTails uniform_window(std::vector<int64_t> in, int64_t kernel, int64_t stride, int64_t pad) {
  const size_t n = in.size();
  return {std::move(in), std::vector<int64_t>(n, kernel), std::vector<int64_t>(n, stride), std::vector<int64_t>(n, pad),
          std::vector<int64_t>(n, pad), {}};
}

template <class P>
void set_window(P& p, const WindowTails& w) {
  auto put = [&](int64_t* dst, const std::vector<int64_t>& v) {
    for (size_t i = 0; i < v.size(); ++i) dst[kAxes - p.dims + static_cast<int>(i)] = v[i];
  };
  put(p.in, w.in);
  put(p.kernel, w.kernel);
  put(p.stride, w.stride);
  put(p.pad_begin, w.pad_begin);
  put(p.pad_end, w.pad_end);
  put(p.dilation, w.dilation);
}

}  // namespace pg
