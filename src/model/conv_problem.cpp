#include "src/model/conv_problem.hpp"

#include "src/model/problem_text.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

namespace pg {

int64_t conv_out_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                        int64_t pad_end) {
  if (stride < 1) return 0;
  // 128-bit so that absurd sizes give a wrong-but-defined answer that conv_validate() rejects,
  // never signed overflow.
  using wide = __int128;
  const wide span = wide(in) + pad_begin + pad_end - wide(dilation) * (wide(kernel) - 1) - 1;
  // Floor division: a window larger than the padded input (span < 0) gives an output below 1.
  const wide out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (out > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (out < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(out);
}

namespace {

// PyTorch's padding="same": the dilated kernel's overhang, the smaller half at the begin side.
// Values a later conv_validate() rejects (kernel or dilation < 1) leave the pads as they are.
void resolve_same(ConvProblem& p, int a) {
  if (p.kernel[a] < 1 || p.dilation[a] < 1) return;
  int64_t total;
  if (__builtin_mul_overflow(p.dilation[a], p.kernel[a] - 1, &total)) return;
  p.pad_begin[a] = total / 2;
  p.pad_end[a] = total - total / 2;
}

}  // namespace

void conv_finalize(ConvProblem& p) {
  for (int a = 0; a < kAxes; ++a) {
    if (p.pad_mode == ConvPadMode::same) resolve_same(p, a);
    if (p.pad_mode == ConvPadMode::valid) p.pad_begin[a] = p.pad_end[a] = 0;
    p.out[a] = conv_out_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a], p.pad_begin[a], p.pad_end[a]);
  }
}

namespace {

std::string validate_axis(const ConvProblem& p, int a) {
  if (p.in[a] < 1) return bad_axis("input size", a, p.in[a], "must be >= 1");
  if (p.kernel[a] < 1) return bad_axis("kernel_size", a, p.kernel[a], "must be >= 1");
  if (p.stride[a] < 1) return bad_axis("stride", a, p.stride[a], "must be >= 1");
  if (p.dilation[a] < 1) return bad_axis("dilation", a, p.dilation[a], "must be >= 1");
  if (p.pad_mode == ConvPadMode::same && p.stride[a] != 1)
    return bad_axis("stride", a, p.stride[a],
               "must be 1 with padding='same' (padding='same' is not supported for strided convolutions)");
  if (p.pad_begin[a] < 0) return bad_axis("padding begin", a, p.pad_begin[a], "must be non-negative");
  if (p.pad_end[a] < 0) return bad_axis("padding end", a, p.pad_end[a], "must be non-negative");
  int64_t span, padded;
  if (__builtin_mul_overflow(p.dilation[a], p.kernel[a] - 1, &span))
    return bad_axis("dilation", a, p.dilation[a], "x (kernel_size - 1) overflows int64");
  if (__builtin_add_overflow(p.in[a], p.pad_begin[a], &padded) ||
      __builtin_add_overflow(padded, p.pad_end[a], &padded))
    return bad_axis("padding begin+end", a, p.pad_begin[a], "+ input size overflows int64");
  if (span >= padded) {
    std::ostringstream e;
    e << "kernel_size " << axis_name(a) << " = " << p.kernel[a] << " with dilation " << p.dilation[a]
      << " spans " << static_cast<uint64_t>(span) + 1 << ", larger than the padded input " << padded << " (input " << p.in[a]
      << ", padding " << p.pad_begin[a] << "," << p.pad_end[a] << ")";
    return e.str();
  }
  const int64_t expect =
      conv_out_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a], p.pad_begin[a], p.pad_end[a]);
  if (p.out[a] != expect)
    return bad_axis("output size", a, p.out[a],
               "does not match the parameters, which give " + std::to_string(expect) + " (call conv_finalize)");
  return "";
}

// Padding the mode same/valid resolves to differs from the pads held: conv_finalize() was not
// called after a change.
bool pads_stale(const ConvProblem& p) {
  if (p.pad_mode == ConvPadMode::explicit_pads) return false;
  ConvProblem resolved = p;
  conv_finalize(resolved);
  for (int a = 0; a < kAxes; ++a)
    if (resolved.pad_begin[a] != p.pad_begin[a] || resolved.pad_end[a] != p.pad_end[a]) return true;
  return false;
}

// a * b * c..., false when the product overflows int64.
bool product(std::initializer_list<int64_t> factors, int64_t* out) {
  int64_t r = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(r, f, &r)) return false;
  *out = r;
  return true;
}

}  // namespace

std::string conv_validate(const ConvProblem& p) {
  if (p.dims < 1 || p.dims > 3) return "dims = " + std::to_string(p.dims) + " must be 1, 2 or 3";
  if (p.n < 0) return "batch N = " + std::to_string(p.n) + " must be >= 0";
  if (p.c < 1) return "input channels C = " + std::to_string(p.c) + " must be >= 1";
  if (p.k < 1) return "output channels K = " + std::to_string(p.k) + " must be >= 1";
  if (p.groups < 1) return "groups = " + std::to_string(p.groups) + " must be >= 1";
  if (p.c % p.groups != 0)
    return "groups = " + std::to_string(p.groups) + " must divide the input channels C = " + std::to_string(p.c);
  if (p.k % p.groups != 0)
    return "groups = " + std::to_string(p.groups) + " must divide the output channels K = " +
           std::to_string(p.k);
  const int first = kAxes - p.dims;
  for (int a = 0; a < kAxes; ++a) {
    if (a >= first) {
      const std::string why = validate_axis(p, a);
      if (!why.empty()) return why;
    } else if (p.in[a] != 1 || p.kernel[a] != 1 || p.stride[a] != 1 || p.dilation[a] != 1 ||
               p.pad_begin[a] != 0 || p.pad_end[a] != 0 || p.out[a] != 1) {
      return std::string("axis ") + axis_name(a) + " is not used by a " + std::to_string(p.dims) +
             "D problem but is set";
    }
  }
  if (pads_stale(p)) return "padding does not match the padding mode (call conv_finalize)";
  int64_t x, y, w, bytes;
  if (!product({p.n, p.c, p.in[0], p.in[1], p.in[2]}, &x))
    return "input element count N x C x spatial overflows int64 (" + conv_to_string(p) + ")";
  if (!product({p.n, p.k, p.out[0], p.out[1], p.out[2]}, &y))
    return "output element count N x K x spatial overflows int64 (" + conv_to_string(p) + ")";
  if (!product({p.k, p.c_per_group(), p.kernel[0], p.kernel[1], p.kernel[2]}, &w))
    return "weight element count K x C/groups x kernel overflows int64 (" + conv_to_string(p) + ")";
  if (!product({x, 8}, &bytes) || !product({y, 8}, &bytes) || !product({w, 8}, &bytes))
    return "tensor size in bytes overflows int64 (" + conv_to_string(p) + ")";
  return "";
}

namespace {

// The problem's axes joined by 'x'; a dims outside 1..3 (which conv_validate() reports) prints
// the axes that exist rather than reading past them.
std::string axes_text(const ConvProblem& p, const int64_t* v) {
  std::string s;
  for (int a = kAxes - std::clamp(p.dims, 1, kAxes); a < kAxes; ++a) {
    if (!s.empty()) s += 'x';
    s += std::to_string(v[a]);
  }
  return s;
}

}  // namespace

std::string conv_to_string(const ConvProblem& p) {
  std::ostringstream o;
  o << "op=conv" << p.dims << "d n=" << p.n << " c=" << p.c << " k=" << p.k << " g=" << p.groups
    << " in=" << axes_text(p, p.in) << " ks=" << axes_text(p, p.kernel) << " s=" << axes_text(p, p.stride)
    << " d=" << axes_text(p, p.dilation);
  if (p.pad_mode == ConvPadMode::explicit_pads)
    o << " pb=" << axes_text(p, p.pad_begin) << " pe=" << axes_text(p, p.pad_end);
  else
    o << " pad=" << (p.pad_mode == ConvPadMode::same ? "same" : "valid");
  o << " layout=" << (p.layout == Layout::channels_first ? "ncdhw" : "ndhwc") << " dtype=" << dtype_name(p.dtype);
  return o.str();
}

bool parse_conv_problem(const std::string& text, ConvProblem* result, std::string* error) {
  std::map<std::string, std::string> kv;
  if (!split_key_values(text, &kv, error)) return false;
  ConvProblem p;
  const std::string op = kv.count("op") ? kv["op"] : "";
  if (op != "conv1d" && op != "conv2d" && op != "conv3d") {
    *error = "problem: op must be conv1d, conv2d or conv3d, got '" + op + "'";
    return false;
  }
  p.dims = op[4] - '0';
  if (kv.count("pad") && (kv.count("pb") || kv.count("pe"))) {
    *error = "problem: pad= and pb=/pe= exclude each other";
    return false;
  }
  const bool parsed = parse_keys(kv, "ks", p, error, [&](const std::string& key, const std::string& value, bool* ok) {
    if (key == "n") *ok = parse_integer(value, &p.n, error, key);
    else if (key == "c") *ok = parse_integer(value, &p.c, error, key);
    else if (key == "k") *ok = parse_integer(value, &p.k, error, key);
    else if (key == "g") *ok = parse_integer(value, &p.groups, error, key);
    else if (key == "pad")
      *ok = parse_enum<ConvPadMode>(value, {{"same", ConvPadMode::same}, {"valid", ConvPadMode::valid}}, &p.pad_mode,
                                    error, key);
    else return false;
    return true;
  });
  if (!parsed) return false;
  conv_finalize(p);
  *result = p;
  return true;
}

}  // namespace pg
