#include "src/model/domain.hpp"

#include <algorithm>
#include <sstream>

namespace pg {
namespace {

const char* tie_name(TieRule t) { return t == TieRule::first ? "first" : "last"; }
const char* nan_name(NanRule n) { return n == NanRule::propagate ? "propagate" : "ignore"; }

template <class T, class Name>
std::string joined(const std::vector<T>& list, Name name) {
  std::string s;
  for (const T& v : list) s += (s.empty() ? "" : ",") + std::string(name(v));
  return s;
}

bool shape_fits(const WindowShape& s, const Problem& p, int a) {
  return p.kernel[a] == s.kernel && p.stride[a] == s.stride && p.dilation[a] == 1 && p.pad_begin[a] >= s.pad_min &&
         p.pad_begin[a] <= s.pad_max && p.pad_end[a] >= s.pad_min && p.pad_end[a] <= s.pad_max;
}

}  // namespace

const char* layout_name(Layout l) { return l == Layout::channels_first ? "channels-first" : "channels-last"; }

bool axis_trivial(const Problem& p, int a) {
  return p.in[a] == 1 && p.out[a] == 1 && p.kernel[a] == 1 && p.stride[a] == 1 && p.dilation[a] == 1 &&
         p.pad_begin[a] == 0 && p.pad_end[a] == 0;
}

bool axis_copy(const Problem& p, int a) {
  return p.kernel[a] == 1 && p.stride[a] == 1 && p.dilation[a] == 1 && p.pad_begin[a] == 0 && p.pad_end[a] == 0;
}

Domain::Verdict Domain::admits(const Problem& p) const {
  auto no = [](std::string why) { return Verdict{false, std::move(why)}; };
  if (p.dims < min_dims || p.dims > max_dims)
    return no("dims: " + std::to_string(min_dims) + "D to " + std::to_string(max_dims) + "D only");
  if (!in_list(layouts, p.layout)) return no(std::string("layout: ") + layout_name(p.layout) + " not handled");
  if (!in_list(dtypes, p.dtype)) return no(std::string("dtype: ") + dtype_name(p.dtype) + " not handled");
  if (p.op == Op::max && !in_list(index_formats, p.index_format))
    return no(std::string("index_format: ") + index_format_name(p.index_format) + " not decoded here");
  if (p.op == Op::max && !in_list(index_types, p.index_type))
    return no(std::string("index_type: ") + index_type_name(p.index_type) + " not read here");
  if (p.op == Op::max && !in_list(ties, p.tie)) return no(std::string("tie: ") + tie_name(p.tie) + " not followed");
  if (p.op == Op::max && !in_list(nans, p.nan)) return no(std::string("nan: ") + nan_name(p.nan) + " not followed");
  if (p.op == Op::avg && !in_list(divisors, p.divisor))
    return no(std::string("divisor: ") + divisor_name(p.divisor) + " not computed");
  if (p.op == Op::avg && !divisor_override && p.has_divisor_override) return no("divisor_override: not applied");
  if (!ceil_mode && p.ceil_mode) return no("ceil_mode: floor output sizes only");
  for (int a = 0; a < kAxes; ++a) {
    if (!dilation && p.dilation[a] != 1) return no("dilation: 1 only");
    if (pads_symmetric && p.pad_begin[a] != p.pad_end[a]) return no("padding: begin and end must be equal");
  }
  if (windows == WindowRule::disjoint && !p.windows_disjoint())
    return no("windows overlap (stride < effective kernel on some axis)");
  if (windows == WindowRule::unit_stride) {
    for (int a = 0; a < kAxes; ++a)
      if (p.stride[a] != 1)
        return no(std::string("stride: 1 only; ") + "DHW"[a] + " has " + std::to_string(p.stride[a]));
  }
  if (windows == WindowRule::single) {
    for (int a = 0; a < kAxes; ++a)
      if (p.out[a] != 1)
        return no(std::string("window: one per plane only (output size 1); ") + "DHW"[a] + " has " +
                  std::to_string(p.out[a]));
  }
  if (windows == WindowRule::listed) {
    int first = 0;
    while (first < trivial_leading && first < kAxes - 1 && axis_trivial(p, first)) ++first;
    if (first == 0 && copy_leading && axis_copy(p, 0)) first = 1;
    bool found = false;
    for (const WindowShape& s : shapes) {
      bool all = true;
      for (int a = first; a < kAxes; ++a) all = all && shape_fits(s, p, a);
      found = found || all;
    }
    if (!found) return no("window: " + describe_windows());
    for (int a = first; a < kAxes; ++a) {
      if (same_pad_parity && p.pad_begin[a] % p.stride[a] != p.pad_begin[kAxes - 1] % p.stride[kAxes - 1])
        return no("padding: pad_begin mod stride must be the same on every axis");
      if (whole_windows && p.in[a] != p.out[a] * p.kernel[a])
        return no(std::string("input size: not a whole number of windows along ") + "DHW"[a] + " (" +
                  std::to_string(p.in[a]) + " != " + std::to_string(p.out[a]) + " x kernel " +
                  std::to_string(p.kernel[a]) + ")");
    }
  }
  if (contiguous_packs) {
    const int64_t pack = 16 / dtype_size(p.dtype);
    const bool cl = p.layout == Layout::channels_last;
    if ((cl ? p.c : p.in[2]) % pack != 0)
      return no(std::string(cl ? "C" : "W") + " is not a whole number of 16-byte packs (" + std::to_string(pack) +
                " " + dtype_name(p.dtype) + ")");
  }
  return {};
}

std::string Domain::describe_windows() const {
  std::ostringstream o;
  if (windows == WindowRule::any) o << "any";
  if (windows == WindowRule::disjoint) o << "disjoint (stride >= effective kernel)";
  if (windows == WindowRule::single) o << "one per plane (output size 1 on every axis)";
  if (windows == WindowRule::unit_stride) o << "stride 1 (any kernel)";
  if (windows == WindowRule::listed) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      const WindowShape& s = shapes[i];
      o << (i ? " or " : "") << "k" << s.kernel << "s" << s.stride << " pad " << s.pad_min;
      if (s.pad_max != s.pad_min) o << "-" << s.pad_max;
    }
    o << " on every axis" << (trivial_leading == 0 ? "" : trivial_leading == 1 ? " (D may be flat)" : " (D, H may be flat)");
    if (copy_leading) o << " or on H, W with D a copy axis (kernel 1, stride 1, no padding)";
  }
  if (pads_symmetric) o << ", symmetric pads";
  if (!dilation) o << ", no dilation";
  if (!ceil_mode) o << ", floor sizes only";
  if (same_pad_parity) o << ", one pad parity";
  if (whole_windows) o << ", whole windows (in = out x kernel)";
  return o.str();
}

std::string Domain::describe() const {
  std::ostringstream o;
  o << min_dims << "D";
  if (max_dims != min_dims) o << "-" << max_dims << "D";
  o << "; windows " << describe_windows();
  o << "; " << joined(layouts, layout_name) << "; " << joined(dtypes, dtype_name);
  if (index_formats.size() < 4 || index_types.size() < 3)
    o << "; indices " << joined(index_formats, index_format_name) << " as " << joined(index_types, index_type_name);
  if (contiguous_packs) o << "; contiguous axis in 16-byte packs";
  if (ties.size() < 2 || nans.size() < 2) o << "; tie " << joined(ties, tie_name) << ", nan " << joined(nans, nan_name);
  if (divisors.size() < 3 || !divisor_override)
    o << "; divisor " << joined(divisors, divisor_name) << (divisor_override ? " or override" : "");
  return o.str();
}

}  // namespace pg
