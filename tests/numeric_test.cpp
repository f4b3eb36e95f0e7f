// f16/bf16 conversions: exact round-to-nearest-even against hand-checked bit patterns.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

// Every 16-bit pattern but NaN survives the trip to f32 and back.
template <class H>
void expect_round_trips(H (*narrow)(float), const char* name) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = to_float(H{static_cast<uint16_t>(h)});
    if (std::isnan(f)) continue;
    EXPECT_EQ(narrow(f).bits, h) << name << " round trip of " << h;
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(to_f16(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_f16(-2.0f).bits, 0xc000);
  EXPECT_EQ(to_f16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(to_f16(65520.0f).bits, 0x7c00);   // halfway to the next binade rounds to inf
  EXPECT_EQ(to_f16(0x1p-24f).bits, 0x0001);   // smallest subnormal
  EXPECT_EQ(to_f16(0x1p-25f).bits, 0x0000);   // tie rounds to even (zero)
  EXPECT_EQ(to_f16(1.0f + 0x1p-11f).bits, 0x3c00);  // tie to even
  EXPECT_EQ(to_f16(1.0f + 0x1.8p-11f).bits, 0x3c01);
  EXPECT_EQ(to_f16(INFINITY).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(to_float(to_f16(NAN))));
  expect_round_trips<f16>(to_f16, "f16");
}

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f).bits, 0x3f80);   // tie to even
  EXPECT_EQ(to_bf16(1.0f + 0x1.8p-8f).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(to_float(to_bf16(NAN))));
  expect_round_trips<bf16>(to_bf16, "bf16");
}

}  // namespace
}  // namespace pg
