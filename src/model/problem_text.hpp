// What the pooling and the conv problem lines share (parse_problem, parse_conv_problem): the
// "key=value" tokens, each key once; integers and "3x3" axis lists as strict as the command line
// (parse_number.hpp); flags; names from a table; and the wording of an axis's refusal in
// validation ("stride H = 0 must be >= 1").
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "src/model/dtype.hpp"
#include "src/model/problem.hpp"  // Layout

namespace pg {

// Axis names as the user sees them: a 2D problem's axes are H and W, a 1D problem's is W.
const char* axis_name(int a);
// "kernel_size H = 0 must be >= 1": the parameter, the axis, the value, the rule.
std::string bad_axis(const char* param, int a, int64_t value, const std::string& rule);

// The tokens of a problem line; false with *error for a token that is not key=value or a key
// given twice.
bool split_key_values(const std::string& text, std::map<std::string, std::string>* kv, std::string* error);
bool parse_integer(const std::string& v, int64_t* out, std::string* error, const std::string& key);
// `dims` values into the last `dims` axes of out.
bool parse_axes(const std::string& v, int dims, int64_t* out, std::string* error, const std::string& key);
bool parse_flag(const std::string& v, bool* out, std::string* error, const std::string& key);

// The axes a window key of either problem line names (in, the kernel's key, s, d, pb, pe), or
// nullptr for another key.
template <class P>
int64_t* window_axes(P& p, const std::string& key, const char* kernel_key) {
  if (key == "in") return p.in;
  if (key == kernel_key) return p.kernel;
  if (key == "s") return p.stride;
  if (key == "d") return p.dilation;
  if (key == "pb") return p.pad_begin;
  if (key == "pe") return p.pad_end;
  return nullptr;
}

template <class E>
bool parse_enum(const std::string& v, const std::map<std::string, E>& names, E* out, std::string* error,
                const std::string& key) {
  auto it = names.find(v);
  if (it == names.end()) {
    std::string known;
    for (const auto& [name, value] : names) known += (known.empty() ? "" : ", ") + name;
    *error = "problem: " + key + " = '" + v + "' is not one of " + known;
    return false;
  }
  *out = it->second;
  return true;
}

// Every key of a problem line but op: the window's, layout and dtype here, the rest by
// own(key, value, &ok), which returns false for a key it does not know either (an unknown key).
template <class P, class Own>
bool parse_keys(const std::map<std::string, std::string>& kv, const char* kernel_key, P& p, std::string* error,
                Own own) {
  for (const auto& [key, value] : kv) {
    if (key == "op") continue;
    bool ok = true;
    if (int64_t* axes = window_axes(p, key, kernel_key)) ok = parse_axes(value, p.dims, axes, error, key);
    else if (key == "layout")
      ok = parse_enum<Layout>(value, {{"ncdhw", Layout::channels_first}, {"ndhwc", Layout::channels_last}}, &p.layout,
                              error, key);
    else if (key == "dtype")
      ok = parse_enum<DType>(value, {{"f16", DType::f16}, {"bf16", DType::bf16}, {"f32", DType::f32}, {"f64", DType::f64}},
                             &p.dtype, error, key);
    else if (!own(key, value, &ok)) {
      *error = "problem: unknown key '" + key + "'";
      return false;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace pg
