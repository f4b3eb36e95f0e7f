// Division by a divisor fixed at launch. Hot loops divide by tensor sizes and strides on every
// work item; a hardware 64-bit division is a long instruction sequence on GPUs, and even the
// 32-bit one is ~20 instructions, so the int32 path uses a multiply-high and a shift with a
// magic number computed once on the host (Granlund-Montgomery, as PyTorch's IntDivider).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace pg {

template <class Idx>
struct Divider;

// Exact for dividends and divisors in [1, 2^31): the int32 path only runs on such values.
template <>
struct Divider<int32_t> {
  uint32_t divisor = 1, magic = 1, shift = 0;

  Divider() = default;
  explicit Divider(int64_t d) : divisor(static_cast<uint32_t>(d)) {
    while ((uint64_t{1} << shift) < static_cast<uint64_t>(d)) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  PG_HD int32_t div(int32_t n) const {
    const uint32_t un = static_cast<uint32_t>(n);
#if PG_DEVICE_PASS
    const uint32_t high = __umulhi(un, magic);
#else
    const uint32_t high = static_cast<uint32_t>((uint64_t{un} * magic) >> 32);
#endif
    return static_cast<int32_t>((high + un) >> shift);
  }
  PG_HD int32_t mod(int32_t n) const { return n - div(n) * static_cast<int32_t>(divisor); }
};

template <>
struct Divider<int64_t> {
  int64_t divisor = 1;

  Divider() = default;
  explicit Divider(int64_t d) : divisor(d) {}
  PG_HD int64_t div(int64_t n) const { return n / divisor; }
  PG_HD int64_t mod(int64_t n) const { return n % divisor; }
};

}  // namespace pg
