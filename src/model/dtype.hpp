// The element types a problem names, with their sizes and rounding units. Host-only and free of
// any kernel code, so the problem description and the oracle depend on nothing but this.
#pragma once

#include <cstdint>

namespace pg {

enum class DType : uint8_t { f16, bf16, f32, f64 };

inline constexpr int dtype_size(DType t) { return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2; }

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
    case DType::f64: return "f64";
  }
  return "?";
}

// Unit roundoff of the storage type: half the distance from 1 to the next value.
inline constexpr double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16: return 1.0 / 2048;
    case DType::bf16: return 1.0 / 256;
    case DType::f32: return 1.0 / 16777216;
    case DType::f64: return 1.1102230246251565e-16;
  }
  return 0;
}

}  // namespace pg
