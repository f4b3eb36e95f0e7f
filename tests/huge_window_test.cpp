// Windows far larger than the input (kernel 2^40 with matching padding on a 4-element axis):
// the oracle and every CPU variant that supports the problem visit only the taps inside the
// input, so each finishes in well under 2 s instead of looping over 2^40 taps (issue 14).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "reference/pool_reference.hpp"
#include "src/model/backend.hpp"
#include "src/model/profile.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"

namespace pg {
namespace {

constexpr int64_t kHuge = int64_t{1} << 40;

// in=4 along each used axis, kernel `k` with padding k/2 both sides, stride 1.
Problem huge(Op op, int dims, int64_t k, Divisor divisor = Divisor::include_pad) {
  Problem p;
  apply_profile("pytorch", p);
  p.op = op;
  p.dims = dims;
  p.n = 2;
  p.c = 3;
  for (int a = kAxes - dims; a < kAxes; ++a) {
    p.in[a] = 4;
    p.kernel[a] = k;
    p.pad_begin[a] = p.pad_end[a] = k / 2;
  }
  p.divisor = divisor;
  p.avg3d_input_at_least_kernel = false;  // PyTorch's avg_pool3d check would refuse the 3D case
  finalize(p);
  EXPECT_EQ(validate(p), "") << to_string(p);
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<Problem> problems() {
  return {huge(Op::max, 1, kHuge), huge(Op::max, 2, int64_t{1} << 20), huge(Op::max, 3, int64_t{1} << 13),
          huge(Op::avg, 1, kHuge), huge(Op::avg, 1, kHuge, Divisor::exclude_pad),
          huge(Op::avg, 2, int64_t{1} << 20, Divisor::full_kernel), huge(Op::avg, 3, int64_t{1} << 13)};
}

TEST(HugeWindow, OracleVisitsOnlyInsideTaps) {
  for (const Problem& p : problems()) {
    const auto start = std::chrono::steady_clock::now();
    const HostData d = make_data(p, DataSpec{});
    const ref::Forward f = ref::forward(p, d.x);
    const ref::Gradient g = p.op == Op::max ? ref::backward_max_recompute(p, d.x, d.dy) : ref::backward_avg(p, d.dy);
    EXPECT_LT(seconds_since(start), 2.0) << to_string(p);
    // Every window covers the whole input: max routes each dy to the plane's maximum, avg
    // spreads every dy over all inside taps.
    double sum = 0;
    for (double v : g.dx) sum += v;
    EXPECT_TRUE(std::isfinite(sum)) << to_string(p);
    if (p.op == Op::max) {
      for (size_t i = 0; i < f.index.size(); ++i) EXPECT_NE(f.index[i], ref::kNoTap) << to_string(p);
    }
  }
}

TEST(HugeWindow, EveryCpuVariantThatSupportsItIsFast) {
  auto cpu = make_cpu_backend();
  int ran = 0;
  for (const Problem& p : problems()) {
    const auto expected = std::make_shared<const Expected>(compute_expected(p, DataSpec{}));
    for (const Variant& v : variants()) {
      if (v.op != p.op || !v.supports(p, BackendKind::cpu).ok) continue;
      const auto start = std::chrono::steady_clock::now();
      const Outcome o = run_and_verify(*cpu, v, p, DataSpec{}, expected);
      EXPECT_EQ(o.status, Status::pass) << o.message;
      EXPECT_LT(seconds_since(start), 2.0) << v.name << ": " << to_string(p);
      ++ran;
    }
  }
  EXPECT_GE(ran, 10) << "the huge-window problems should reach most general variants";
}

}  // namespace
}  // namespace pg
