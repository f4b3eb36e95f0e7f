// Element types: f16 and bf16 as plain 16-bit storage with round-to-nearest-even conversions
// written out in integer arithmetic, so the host, the CPU backend, nvcc and hipcc all produce
// the same bits. On the device pass f16 converts in hardware instead: the integer version
// costs about a dozen instructions per element, which made the f16 kernels issue-bound, and
// the hardware conversion is the same round-to-nearest-even (only a NaN's payload may differ).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/common/hip_compat.hpp"
#include "src/model/dtype.hpp"
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace pg {

template <class To, class From>
PG_HD To bits_as(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  memcpy(&out, &v, sizeof(To));
  return out;
}

struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};

// Fabian Giesen's float_to_half_fast3_rtne: exact round-to-nearest-even, NaN stays NaN.
PG_HD f16 to_f16(float value) {
#if defined(__CUDA_ARCH__)
  return f16{__half_as_ushort(__float2half_rn(value))};
#elif defined(__HIP_DEVICE_COMPILE__)
  return f16{bits_as<uint16_t>(static_cast<_Float16>(value))};
#else
  uint32_t f = bits_as<uint32_t>(value);
  const uint32_t sign = f & 0x80000000u;
  f ^= sign;
  uint16_t o;
  if (f >= (127u + 16u) << 23) {
    o = f > (255u << 23) ? 0x7e00 : 0x7c00;
  } else if (f < (113u << 23)) {
    const uint32_t magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    o = static_cast<uint16_t>(bits_as<uint32_t>(bits_as<float>(f) + bits_as<float>(magic)) - magic);
  } else {
    const uint32_t mant_odd = (f >> 13) & 1u;
    f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;
    f += mant_odd;
    o = static_cast<uint16_t>(f >> 13);
  }
  return f16{static_cast<uint16_t>(o | (sign >> 16))};
#endif
}

PG_HD float to_float(f16 h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#elif defined(__HIP_DEVICE_COMPILE__)
  return static_cast<float>(bits_as<_Float16>(h.bits));
#else
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t o = (h.bits & 0x7fffu) << 13;
  const uint32_t exp = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    o += (128u - 16u) << 23;
  } else if (exp == 0) {
    o += 1u << 23;
    o = bits_as<uint32_t>(bits_as<float>(o) - bits_as<float>(113u << 23));
  }
  o |= (h.bits & 0x8000u) << 16;
  return bits_as<float>(o);
#endif
}

PG_HD bf16 to_bf16(float value) {
  const uint32_t f = bits_as<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<uint16_t>((f >> 16) | 0x40u)};
  return bf16{static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16)};
}

PG_HD float to_float(bf16 h) { return bits_as<float>(static_cast<uint32_t>(h.bits) << 16); }
PG_HD float to_float(float v) { return v; }
PG_HD double to_float(double v) { return v; }

// Storage <-> accumulator. Half types accumulate in f32, f64 in f64.
template <class T> struct Accum { using type = float; };
template <> struct Accum<double> { using type = double; };
template <class T> using accum_t = typename Accum<T>::type;

template <class T> PG_HD T from_accum(accum_t<T> v);
template <> PG_HD float from_accum<float>(float v) { return v; }
template <> PG_HD double from_accum<double>(double v) { return v; }
template <> PG_HD f16 from_accum<f16>(float v) { return to_f16(v); }
template <> PG_HD bf16 from_accum<bf16>(float v) { return to_bf16(v); }

PG_HD bool is_nan(float v) { return v != v; }
PG_HD bool is_nan(double v) { return v != v; }

template <class T> struct DTypeOf;
template <> struct DTypeOf<f16> { static constexpr DType value = DType::f16; };
template <> struct DTypeOf<bf16> { static constexpr DType value = DType::bf16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::f32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::f64; };

// Calls f(T{}) with T the storage type of `t`.
template <class F>
decltype(auto) with_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f16: return f(f16{});
    case DType::bf16: return f(bf16{});
    case DType::f32: return f(float{});
    case DType::f64: break;
  }
  return f(double{});
}

// Host-side conversions used by the harness, the oracle and the .npy reader.
inline double load_as_double(DType t, const void* base, int64_t i) {
  return with_dtype(t, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(to_float(static_cast<const T*>(base)[i]));
  });
}

inline void store_from_double(DType t, void* base, int64_t i, double v) {
  with_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (sizeof(T) == 2) {
      // Through f32, as every framework's half path rounds: f32 accumulate, then narrow.
      static_cast<T*>(base)[i] = from_accum<T>(static_cast<float>(v));
    } else {
      static_cast<T*>(base)[i] = static_cast<T>(v);
    }
  });
}

}  // namespace pg
