#include "src/model/problem.hpp"

#include "src/model/parse_number.hpp"
#include "src/model/problem_text.hpp"

#include <limits>
#include <optional>
#include <map>
#include <sstream>
#include <vector>

namespace pg {

const char* op_name(Op op) { return op == Op::max ? "max" : "avg"; }

const char* divisor_name(Divisor d) {
  switch (d) {
    case Divisor::include_pad: return "include_pad";
    case Divisor::full_kernel: return "full_kernel";
    case Divisor::exclude_pad: return "exclude_pad";
  }
  return "?";
}

const char* index_format_name(IndexFormat f) {
  switch (f) {
    case IndexFormat::plane: return "plane";
    case IndexFormat::global_row: return "global_row";
    case IndexFormat::global_col: return "global_col";
    case IndexFormat::window: return "window";
  }
  return "?";
}

const char* index_type_name(IndexType t) {
  switch (t) {
    case IndexType::i64: return "i64";
    case IndexType::i32: return "i32";
    case IndexType::u8: return "u8";
  }
  return "?";
}

int index_type_size(IndexType t) { return t == IndexType::i64 ? 8 : t == IndexType::i32 ? 4 : 1; }

int64_t pooled_length(int64_t length, int64_t kernel, int64_t stride, int64_t dilation,
                      int64_t pad_begin, int64_t pad_end, bool ceil_mode) {
  if (stride < 1) return 0;
  // 128-bit so that absurd sizes give a wrong-but-defined answer that validate() rejects,
  // never signed overflow.
  using wide = __int128;
  const wide span = wide(length) + pad_begin + pad_end - wide(dilation) * (kernel - 1) - 1 +
                    (ceil_mode ? stride - 1 : 0);
  // PyTorch's div_rtn (rounds toward minus infinity): in ceil mode a negative span can still
  // give one window, e.g. length 2, kernel 3, stride 2 -> 1 output.
  wide out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= wide(length) + pad_begin) --out;
  if (out > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (out < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(out);
}

void finalize(Problem& p) {
  for (int a = 0; a < kAxes; ++a)
    p.out[a] = pooled_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a], p.pad_begin[a],
                             p.pad_end[a], p.ceil_mode);
}

namespace {

bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

std::string validate_axis(const Problem& p, int a) {
  if (p.in[a] < 1) return bad_axis("input size", a, p.in[a], "must be >= 1");
  if (p.kernel[a] < 1) return bad_axis("kernel_size", a, p.kernel[a], "must be >= 1");
  if (p.stride[a] < 1) return bad_axis("stride", a, p.stride[a], "must be >= 1 (stride should not be zero)");
  if (p.dilation[a] < 1) return bad_axis("dilation", a, p.dilation[a], "must be >= 1");
  if (p.pad_begin[a] < 0) return bad_axis("padding begin", a, p.pad_begin[a], "must be non-negative");
  if (p.pad_end[a] < 0) return bad_axis("padding end", a, p.pad_end[a], "must be non-negative");
  int64_t span, padded;
  if (mul_overflows(p.dilation[a], p.kernel[a] - 1, &span))
    return bad_axis("dilation", a, p.dilation[a], "x (kernel_size - 1) overflows int64");
  if (__builtin_add_overflow(p.in[a], p.pad_begin[a], &padded) ||
      __builtin_add_overflow(padded, p.pad_end[a], &padded))
    return bad_axis("padding begin+end", a, p.pad_begin[a], "+ input size overflows int64");
  if (p.pad_limit == PadLimit::half_kernel) {
    const std::string rule = "must be at most half of kernel_size " + std::to_string(p.kernel[a]) +
                             " (pad should be smaller than or equal to half of kernel size)";
    if (p.pad_begin[a] > p.kernel[a] / 2) return bad_axis("padding begin", a, p.pad_begin[a], rule);
    if (p.pad_end[a] > p.kernel[a] / 2) return bad_axis("padding end", a, p.pad_end[a], rule);
  }
  if (p.op == Op::avg && p.dims == 3 && p.avg3d_input_at_least_kernel && p.in[a] < p.kernel[a])
    return bad_axis("input size", a, p.in[a],
               "is smaller than kernel_size " + std::to_string(p.kernel[a]) +
                   " (avg_pool3d: input image smaller than kernel size)");
  const int64_t expect = pooled_length(p.in[a], p.kernel[a], p.stride[a], p.dilation[a],
                                       p.pad_begin[a], p.pad_end[a], p.ceil_mode);
  if (expect < 1) {
    std::ostringstream e;
    e << "output size " << axis_name(a) << " = " << expect << " is too small (input " << p.in[a]
      << ", kernel_size " << p.kernel[a] << ", stride " << p.stride[a] << ", dilation "
      << p.dilation[a] << ", padding " << p.pad_begin[a] << "," << p.pad_end[a]
      << ", ceil_mode " << p.ceil_mode << ")";
    return e.str();
  }
  if (p.out[a] != expect)
    return bad_axis("output size", a, p.out[a],
               "does not match the parameters, which give " + std::to_string(expect) + " (call finalize)");
  return "";
}

}  // namespace

std::string validate(const Problem& p) {
  std::ostringstream e;
  if (p.dims < 1 || p.dims > 3) {
    e << "dims = " << p.dims << " must be 1, 2 or 3";
    return e.str();
  }
  if (p.n < 0) return "batch N = " + std::to_string(p.n) + " must be >= 0";
  if (p.c < 1) return "channels C = " + std::to_string(p.c) + " must be >= 1";
  const int first = kAxes - p.dims;
  for (int a = 0; a < kAxes; ++a) {
    if (a >= first) {
      const std::string why = validate_axis(p, a);
      if (!why.empty()) return why;
    } else if (p.in[a] != 1 || p.kernel[a] != 1 || p.stride[a] != 1 || p.dilation[a] != 1 ||
               p.pad_begin[a] != 0 || p.pad_end[a] != 0) {
      e << "axis " << axis_name(a) << " is not used by a " << p.dims << "D problem but is set";
      return e.str();
    }
  }
  int64_t taps = 1;
  for (int a = 0; a < kAxes; ++a)
    if (mul_overflows(taps, p.kernel[a], &taps))
      return "kernel_size volume (the product of the kernel sizes) overflows int64 (" + to_string(p) + ")";
  int64_t elems = p.n, outs = p.n;
  if (mul_overflows(elems, p.c, &elems) || mul_overflows(outs, p.c, &outs))
    return "N x C = " + std::to_string(p.n) + " x " + std::to_string(p.c) + " overflows int64";
  for (int a = 0; a < kAxes; ++a) {
    if (mul_overflows(elems, p.in[a], &elems) || mul_overflows(outs, p.out[a], &outs))
      return "element count of input or output overflows int64 (" + to_string(p) + ")";
  }
  int64_t bytes;
  if (mul_overflows(elems, 8, &bytes) || mul_overflows(outs, 8, &bytes))
    return "tensor size in bytes overflows int64 (input " + std::to_string(elems) + " elements)";
  if (p.has_divisor_override && p.divisor_override == 0)
    return "divisor_override = 0 must not be zero (divisor must be not zero)";
  if (p.op == Op::max) {
    if (p.index_type == IndexType::u8 && p.index_format != IndexFormat::window)
      return std::string("index type u8 needs index format window, got ") +
             index_format_name(p.index_format);
    if (p.index_format == IndexFormat::window && p.index_type == IndexType::u8 && p.taps() >= 255) {
      e << "kernel taps = " << p.taps() << " must be below 255 for u8 window indices (255 marks no tap)";
      return e.str();
    }
    if (p.index_type == IndexType::i32) {
      const int64_t range = p.index_format == IndexFormat::plane    ? p.in_plane()
                            : p.index_format == IndexFormat::window ? p.taps()
                                                                    : elems;
      if (range > std::numeric_limits<int32_t>::max()) {
        e << "index type i32 cannot address " << range << " positions; use i64";
        return e.str();
      }
    }
  }
  return "";
}

std::string to_string(const Problem& p) {
  std::ostringstream o;
  auto axes = [&](const int64_t* v) {
    std::string s;
    for (int a = kAxes - p.dims; a < kAxes; ++a) s += (s.empty() ? "" : "x") + std::to_string(v[a]);
    return s;
  };
  o << "op=" << op_name(p.op) << p.dims << "d n=" << p.n << " c=" << p.c << " in=" << axes(p.in)
    << " k=" << axes(p.kernel) << " s=" << axes(p.stride) << " d=" << axes(p.dilation)
    << " pb=" << axes(p.pad_begin) << " pe=" << axes(p.pad_end) << " ceil=" << p.ceil_mode;
  if (p.op == Op::avg) {
    o << " div=" << divisor_name(p.divisor);
    if (p.has_divisor_override) o << " override=" << p.divisor_override;
  } else {
    o << " tie=" << (p.tie == TieRule::first ? "first" : "last")
      << " nan=" << (p.nan == NanRule::propagate ? "propagate" : "ignore")
      << " idx=" << index_format_name(p.index_format) << "/" << index_type_name(p.index_type);
  }
  o << " layout=" << (p.layout == Layout::channels_first ? "ncdhw" : "ndhwc")
    << " dtype=" << dtype_name(p.dtype)
    << " padlimit=" << (p.pad_limit == PadLimit::half_kernel ? "half" : "none")
    << " avg3dcheck=" << p.avg3d_input_at_least_kernel;
  return o.str();
}

bool parse_problem(const std::string& text, Problem* result, std::string* error) {
  Problem p;
  std::map<std::string, std::string> kv;
  if (!split_key_values(text, &kv, error)) return false;
  const std::string op = kv.count("op") ? kv["op"] : "";
  if (op.size() != 5 || (op.rfind("max", 0) != 0 && op.rfind("avg", 0) != 0) || op[4] != 'd' ||
      op[3] < '1' || op[3] > '3') {
    *error = "problem: op must be max1d..max3d or avg1d..avg3d, got '" + op + "'";
    return false;
  }
  p.op = op[0] == 'm' ? Op::max : Op::avg;
  p.dims = op[3] - '0';
  const bool parsed = parse_keys(kv, "k", p, error, [&](const std::string& key, const std::string& value, bool* ok) {
    if (key == "n") *ok = parse_integer(value, &p.n, error, key);
    else if (key == "c") *ok = parse_integer(value, &p.c, error, key);
    else if (key == "ceil") *ok = parse_flag(value, &p.ceil_mode, error, key);
    else if (key == "override") {
      p.has_divisor_override = true;
      *ok = parse_integer(value, &p.divisor_override, error, key);
    } else if (key == "div")
      *ok = parse_enum<Divisor>(value, {{"include_pad", Divisor::include_pad}, {"full_kernel", Divisor::full_kernel}, {"exclude_pad", Divisor::exclude_pad}}, &p.divisor, error, key);
    else if (key == "tie")
      *ok = parse_enum<TieRule>(value, {{"first", TieRule::first}, {"last", TieRule::last}}, &p.tie, error, key);
    else if (key == "nan")
      *ok = parse_enum<NanRule>(value, {{"propagate", NanRule::propagate}, {"ignore", NanRule::ignore}}, &p.nan, error, key);
    else if (key == "idx") {
      const auto slash = value.find('/');
      if (slash == std::string::npos) {
        *error = "problem: idx = '" + value + "': expected FORMAT/TYPE like plane/i64";
        *ok = false;
        return true;
      }
      *ok = parse_enum<IndexFormat>(value.substr(0, slash), {{"plane", IndexFormat::plane}, {"global_row", IndexFormat::global_row}, {"global_col", IndexFormat::global_col}, {"window", IndexFormat::window}}, &p.index_format, error, key) &&
           parse_enum<IndexType>(value.substr(slash + 1), {{"i64", IndexType::i64}, {"i32", IndexType::i32}, {"u8", IndexType::u8}}, &p.index_type, error, key);
    } else if (key == "padlimit")
      *ok = parse_enum<PadLimit>(value, {{"half", PadLimit::half_kernel}, {"none", PadLimit::none}}, &p.pad_limit, error, key);
    else if (key == "avg3dcheck") *ok = parse_flag(value, &p.avg3d_input_at_least_kernel, error, key);
    else return false;
    return true;
  });
  if (!parsed) return false;
  finalize(p);
  *result = p;
  return true;
}

}  // namespace pg
