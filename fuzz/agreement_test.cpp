// Variants agree with each other, not only with the oracle. Each case takes the domain of a
// randomly chosen max variant, so the fast paths' shapes are compared too, and runs every max
// variant that supports the problem:
// - on integer data every sum is exact, so all of them, stored-index and recomputed, scatter and
//   gather, must give the same bits whatever their summation order;
// - on any data the deterministic ones must: each sums a dx element's windows in row-major window
//   order in the accumulator type and rounds once, so a variant that rounds differently (bf16
//   truncated instead of rounded to nearest even, say) stands out even where the oracle's bound
//   would let it pass.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstring>

#include "fuzz/coverage.hpp"
#include "fuzz/problem_gen.hpp"
#include "fuzz/property.hpp"
#include "kernels/common/numeric.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "tests/backend_main.hpp"

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

TEST(MaxVariants, AgreeBitwise) {
  Backend& b = test::backend();
  std::vector<const Variant*> max_variants;
  for (const Variant& v : variants())
    if (v.op == Op::max && !(b.kind() == BackendKind::cpu && v.gpu_only)) max_variants.push_back(&v);
  ASSERT_GE(max_variants.size(), 2u);
  fuzz::Property prop("max variants agree bitwise on " + b.name());
  if (!prop.selected()) GTEST_SKIP() << "RC_PARAMS reproduces another property";
  std::string report;
  const bool ok = prop.check(
      [&] {
        const Variant& from = **rc::gen::elementOf(max_variants);
        const Problem p = *fuzz::problem(Op::max, from.domain);
        const DataSpec spec = *fuzz::data_spec(Inputs::dy_and_x);  // recompute variants take part
        const bool exact = spec.kind != DataKind::real;
        int supporting = 0;
        for (const Variant* v : max_variants) supporting += v->supports(p, b.kind()).ok && (exact || v->deterministic);
        if (supporting < 2) prop.discard("fewer than 2 variants to compare");
        const auto expected = std::make_shared<const Expected>(compute_expected(p, spec));
        std::string first_name;
        std::vector<unsigned char> first;
        int compared = 0;
        for (const Variant* v : max_variants) {
          if (!v->supports(p, b.kind()).ok || !(exact || v->deterministic)) continue;
          PreparedRun run(b, *v, p, spec, expected);
          const Outcome o = run.verify();
          if (o.status != Status::pass) prop.fail(o.message);
          if (compared++ == 0) {
            first_name = v->name;
            first = run.output();
          } else if (!same_bits_or_both_nan(p.dtype, run.output(), first)) {
            prop.fail(v->name + " and " + first_name + " differ bitwise\n  problem: " + to_string(p) +
                      "\n  data: kind=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) +
                      "\n  replay each: " + o.replay);
          }
        }
        RC_TAG(std::to_string(compared) + " variants compared");
        prop.ran(fuzz::observed_tags(p, spec, Inputs::dy_and_x));
      },
      {}, &report);
  std::cout << report;
  EXPECT_TRUE(ok) << report;
}

}  // namespace
}  // namespace pg
