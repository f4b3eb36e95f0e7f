// The fuzz generators draw only valid problems: every registered variant's domain, pooling and
// conv, 20,000 draws each, every one through validate() / conv_validate(). An invalid draw is a
// case the property reports as the variant's failure: wide kernels on two axes once drew 256 taps
// with u8 window indices, a draw this test first makes after a few thousand.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "fuzz/conv_problem_gen.hpp"
#include "fuzz/problem_gen.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/registry.hpp"

namespace pg {
namespace {

TEST(GeneratorValidity, EveryPoolingDomainDrawsValidProblems) {
  for (const Variant& v : variants()) {
    const bool ok = rc::check(v.name + "'s generator draws valid problems", [&v] {
      const Problem p = *fuzz::problem(v.op, v.domain);
      RC_ASSERT(validate(p) == "");
    });
    EXPECT_TRUE(ok) << v.name;
  }
}

TEST(GeneratorValidity, EveryConvDomainDrawsValidProblems) {
  for (const ConvVariant& v : conv_variants()) {
    const bool ok = rc::check(v.name + "'s generator draws valid problems", [&v] {
      for (fuzz::ConvShapeRule rule : {fuzz::ConvShapeRule::any, fuzz::ConvShapeRule::grouped}) {
        const ConvProblem p = *fuzz::conv_problem(v.domain, rule);
        RC_ASSERT(conv_validate(p) == "");
        RC_ASSERT(v.domain.admits(p).ok);
      }
    });
    EXPECT_TRUE(ok) << v.name;
  }
}

}  // namespace
}  // namespace pg
