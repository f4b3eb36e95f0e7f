// .npy arrays as the tests build and read them: from doubles, back to doubles, and the golden
// files' tensors (tests/golden/*.json: dtype, shape, little-endian values in base64, written by
// tools/golden_encode.py).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/numeric.hpp"
#include "src/harness/npy.hpp"
#include "src/model/invalid_input.hpp"

namespace pg {

inline NpyHeader npy_header(NpyType t, std::vector<int64_t> shape) {
  NpyHeader h;
  h.type = t;
  h.shape = std::move(shape);
  return h;
}

inline NpyArray npy_array(NpyType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  NpyArray a;
  a.header = npy_header(t, std::move(shape));
  a.data.resize(v.size() * npy_type_size(t));
  for (size_t i = 0; i < v.size(); ++i) store_from_double(npy_float_dtype(t), a.data.data(), static_cast<int64_t>(i), v[i]);
  return a;
}

inline std::vector<double> npy_values(const NpyArray& a) {
  std::vector<double> v(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(npy_float_dtype(a.header.type), a.data.data(), static_cast<int64_t>(i));
  return v;
}

inline std::vector<unsigned char> base64_decode(const std::string& text) {
  auto value = [](char ch) -> int {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
  };
  std::vector<unsigned char> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : text) {
    const int v = value(ch);
    if (v < 0) continue;  // '=' padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<unsigned char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

inline NpyArray golden_tensor(const nlohmann::json& t) {
  NpyArray a;
  const std::string dtype = t["dtype"];
  a.header.type = dtype == "float32" ? NpyType::f32 : dtype == "float64" ? NpyType::f64 : NpyType::i64;
  a.header.shape = t["shape"].get<std::vector<int64_t>>();
  a.data = base64_decode(t["data"]);
  EXPECT_EQ(a.data.size(), static_cast<size_t>(a.header.elements() * npy_type_size(a.header.type)));
  return a;
}

// The one-line refusal f throws (InvalidInput), or "" when it throws none.
template <class F>
std::string refusal_of(F f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace pg
