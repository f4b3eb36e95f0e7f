#include "src/harness/axis_options.hpp"

#include "src/model/invalid_input.hpp"
#include "src/model/problem.hpp"

namespace pg {

Layout layout_named(const std::string& name, int dims) {
  static const char* const kFirst[] = {"NCW", "NCHW", "NCDHW"};
  static const char* const kLast[] = {"NWC", "NHWC", "NDHWC"};
  const int r = dims >= 1 && dims <= 3 ? dims - 1 : 1;
  if (name == "NCHW" || name == kFirst[r]) return Layout::channels_first;
  if (name == "NHWC" || name == kLast[r]) return Layout::channels_last;
  throw InvalidInput("--layout = " + name + " must be NCHW or NHWC" +
                     (r == 1 ? std::string() : std::string(" (or ") + kFirst[r] + " or " + kLast[r] + ")"));
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

void per_axis(const std::string& option, const std::vector<int64_t>& given, int dims, int64_t* out) {
  if (given.empty()) return;
  if (given.size() != 1 && given.size() != static_cast<size_t>(dims))
    throw InvalidInput(option + " = " + list_text(given) + " has " + std::to_string(given.size()) + " values; a " +
                       std::to_string(dims) + "D op takes " + (dims == 1 ? "1" : "1 or " + std::to_string(dims)));
  for (int i = 0; i < dims; ++i) out[kAxes - dims + i] = given[given.size() == 1 ? 0 : i];
}

void onnx_pads(const std::vector<int64_t>& pads, int dims, int64_t* begin, int64_t* end) {
  const size_t n = static_cast<size_t>(dims);
  if (pads.size() != 2 * n)
    throw InvalidInput("--pads = " + list_text(pads) + " has " + std::to_string(pads.size()) + " values; a " +
                       std::to_string(dims) + "D op takes " + std::to_string(2 * n) + " (every begin, then every end)");
  for (size_t i = 0; i < n; ++i) {
    begin[kAxes - n + i] = pads[i];
    end[kAxes - n + i] = pads[n + i];
  }
}

}  // namespace pg
