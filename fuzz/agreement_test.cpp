// Variants agree with each other, not only with the oracle: on integer data every sum is exact,
// so stored-index and recomputed-argmax variants, scatter and gather alike, must give the same
// bits whatever their summation order.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstring>

#include "fuzz/problem_gen.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "tests/backend_main.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

// NaN payloads depend on the order operands meet (inf + -inf vs a propagated NaN), so any two
// NaNs count as equal; every other element must match bit for bit.
bool same_bits_or_both_nan(DType t, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  if (a.size() != b.size()) return false;
  const int es = dtype_size(t);
  for (size_t i = 0; i < a.size() / es; ++i) {
    if (std::memcmp(a.data() + i * es, b.data() + i * es, es) == 0) continue;
    const auto at = static_cast<int64_t>(i);
    if (!(std::isnan(load_as_double(t, a.data(), at)) && std::isnan(load_as_double(t, b.data(), at)))) return false;
  }
  return true;
}

TEST(MaxVariants, AgreeBitwiseOnIntegerData) {
  Backend& b = test::backend();
  const bool ok = rc::check("max variants agree bitwise on integer data on " + b.name(), [&] {
    const bool disjoint = *rc::gen::arbitrary<bool>();
    const Problem p = *fuzz::problem({Op::max, disjoint});
    DataSpec spec = *fuzz::data_spec();
    if (spec.kind == DataKind::real) spec.kind = DataKind::ints;
    int supporting = 0;
    for (const Variant& v : variants()) supporting += v.supports(p, b.kind()).ok;
    RC_PRE(supporting >= 2);
    fuzz::classify(p, spec);
    const auto expected = std::make_shared<const Expected>(compute_expected(p, spec));
    std::string first_name;
    std::vector<unsigned char> first;
    int compared = 0;
    for (const Variant& v : variants()) {
      if (!v.supports(p, b.kind()).ok) continue;
      PreparedRun run(b, v, p, spec, expected);
      const Outcome o = run.verify();
      if (o.status != Status::pass) RC_FAIL(o.message);
      if (compared++ == 0) {
        first_name = v.name;
        first = run.output();
      } else if (!same_bits_or_both_nan(p.dtype, run.output(), first)) {
        RC_FAIL(v.name + " and " + first_name + " differ bitwise on integer data\n  problem: " + to_string(p) +
                "\n  data: kind=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed));
      }
    }
    RC_TAG(std::to_string(compared) + " variants compared");
  });
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace pg
