// Tensors past 2^31 elements on the GPU (issue 14): every registered variant that reads dy or
// stored indices (the recompute variants re-read x and are left out), max and avg, f16, on
//   - 130 planes of 4096 x 4096: 2.18e9 input elements in all, each plane small;
//   - one 1D plane of 2^31 + 2^16 elements: per-plane indices and offsets past 2^31.
// Each variant's dx is verified element by element against the oracle, which is computed once
// per problem (threads over planes, and over slices of the one long plane: its windows do not
// overlap). A variant's verification (upload, run, download, compare, second run for the
// deterministic ones) must finish within 120 s.
//
// It needs ~95 GB of host memory and ~25 GB on the GPU, so it runs only when POOLGRAD_SCALE=1:
// `meson test --setup scale --suite gpu`, or `bash .carry/run_gpu.sh scale` on the GPU machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "src/model/backend.hpp"
#include "src/model/profile.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
#include "tests/backend_main.hpp"

namespace pg {
namespace {

constexpr double kSecondsPerVariant = 120;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Problem f16_k2s2(Op op, int dims, int64_t c, int64_t length) {
  Problem p;
  apply_profile("pytorch", p);
  p.op = op;
  p.dims = dims;
  p.c = c;
  p.dtype = DType::f16;
  for (int a = kAxes - dims; a < kAxes; ++a) {
    p.in[a] = length;
    p.kernel[a] = p.stride[a] = 2;
  }
  finalize(p);
  return p;
}

void verify_every_variant(const Problem& p) {
  if (!std::getenv("POOLGRAD_SCALE")) GTEST_SKIP() << "set POOLGRAD_SCALE=1 (meson test --setup scale): ~95 GB of host memory";
  Backend& b = test::backend();
  if (b.kind() != BackendKind::gpu) GTEST_SKIP() << "the scale test runs on a GPU (--backend=gpu)";
  ASSERT_EQ(validate(p), "");
  ASSERT_GT(p.in_elems(), int64_t{1} << 31);
  const auto oracle_start = std::chrono::steady_clock::now();
  const auto expected = std::make_shared<const Expected>(compute_expected(p, DataSpec{7, DataKind::ints}));
  std::printf("scale: %s: oracle and data in %.1f s\n", to_string(p).c_str(), seconds_since(oracle_start));
  int ran = 0;
  for (const Variant& v : variants()) {
    if (v.op != p.op || v.inputs == Inputs::dy_and_x) continue;
    const Support s = v.supports(p, b.kind());
    if (!s.ok) {
      std::printf("scale:   %-24s unsupported: %s\n", v.name.c_str(), s.why.c_str());
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const Outcome o = run_and_verify(b, v, p, DataSpec{7, DataKind::ints}, expected);
    const double took = seconds_since(start);
    std::printf("scale:   %-24s %s in %.1f s\n", v.name.c_str(), o.status == Status::pass ? "verified" : "FAILED", took);
    std::fflush(stdout);
    EXPECT_EQ(o.status, Status::pass) << o.message;
    EXPECT_LT(took, kSecondsPerVariant) << v.name;
    ++ran;
  }
  EXPECT_GE(ran, 2) << "at least the general scatter and gather variants support these problems";
}

TEST(Scale, MaxManyPlanesPast2To31) { verify_every_variant(f16_k2s2(Op::max, 2, 130, 4096)); }
TEST(Scale, AvgManyPlanesPast2To31) { verify_every_variant(f16_k2s2(Op::avg, 2, 130, 4096)); }
TEST(Scale, MaxOnePlanePast2To31) { verify_every_variant(f16_k2s2(Op::max, 1, 1, (int64_t{1} << 31) + (1 << 16))); }
TEST(Scale, AvgOnePlanePast2To31) { verify_every_variant(f16_k2s2(Op::avg, 1, 1, (int64_t{1} << 31) + (1 << 16))); }

}  // namespace
}  // namespace pg
