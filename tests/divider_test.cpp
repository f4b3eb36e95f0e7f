// Divider<int32_t>'s multiply-high division against the hardware one, over its whole contract
// (dividends and divisors in [1, 2^31)): kernels divide tensor offsets by sizes with it, and an
// error that shows only for large dividends (past 2^30) is reached by no fuzz-sized problem.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/divider.hpp"

namespace pg {
namespace {

constexpr int64_t kTop = (int64_t{1} << 31) - 1;  // the largest dividend and divisor of the contract

// Divisors: every one up to 4096, each power of two and its neighbours, the largest ones, and
// random ones of every bit length.
std::vector<int64_t> divisors() {
  std::vector<int64_t> d;
  for (int64_t v = 1; v <= 4096; ++v) d.push_back(v);
  for (int b = 12; b <= 31; ++b)
    for (int64_t v : {(int64_t{1} << b) - 1, int64_t{1} << b, (int64_t{1} << b) + 1})
      if (v <= kTop) d.push_back(v);
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 4000; ++i) {
    const int bits = 1 + static_cast<int>(rng() % 31);
    const int64_t v = static_cast<int64_t>(rng() % (uint64_t{1} << bits)) + 1;
    d.push_back(v > kTop ? kTop : v);
  }
  return d;
}

// Dividends for divisor d: the small ones, the multiples of d and their neighbours around 2^30 and
// at the top of the range, powers of two and their neighbours, and random ones.
std::vector<int64_t> dividends(int64_t d, std::mt19937_64& rng) {
  std::vector<int64_t> n = {1, 2, d - 1, d, d + 1, 2 * d - 1, 2 * d, kTop, kTop - 1};
  for (int b = 20; b <= 30; ++b)
    for (int64_t v : {(int64_t{1} << b) - 1, int64_t{1} << b, (int64_t{1} << b) + 1}) n.push_back(v);
  for (int64_t around : {int64_t{1} << 30, kTop}) {
    const int64_t m = around / d * d;  // the multiple of d at or below `around`
    for (int64_t k = -2; k <= 2; ++k) n.push_back(m + k);
  }
  for (int i = 0; i < 24; ++i) n.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(kTop)) + 1);
  std::vector<int64_t> in;
  for (int64_t v : n)
    if (v >= 1 && v <= kTop) in.push_back(v);
  return in;
}

TEST(Divider, Int32MatchesDivisionOverItsRange) {
  std::mt19937_64 rng(1);
  int64_t checked = 0, past_2_30 = 0;
  for (const int64_t d : divisors()) {
    const Divider<int32_t> by(d);
    for (const int64_t n : dividends(d, rng)) {
      const auto v = static_cast<int32_t>(n);
      ASSERT_EQ(by.div(v), n / d) << n << " / " << d;
      ASSERT_EQ(by.mod(v), n % d) << n << " % " << d;
      ++checked;
      past_2_30 += n >= (int64_t{1} << 30);
    }
  }
  // The test itself: it must reach the large dividends it is for.
  EXPECT_GT(checked, 200000);
  EXPECT_GT(past_2_30, 50000);
}

TEST(Divider, Int64IsPlainDivision) {
  const Divider<int64_t> by(int64_t{3} << 40);
  EXPECT_EQ(by.div((int64_t{7} << 40) + 5), 2);
  EXPECT_EQ(by.mod((int64_t{7} << 40) + 5), (int64_t{1} << 40) + 5);
}

}  // namespace
}  // namespace pg
