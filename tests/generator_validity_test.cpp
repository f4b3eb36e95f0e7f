// The fuzz generators draw only valid problems: every registered variant's domain, pooling and
// conv, 100,000 draws each, every one through validate() / conv_validate(). An invalid draw is a
// case the property reports as the variant's failure: wide kernels on two axes once drew 256 taps
// with u8 window indices, about one draw in 70,000 of a max variant (with that bug back, this test
// fails at draw 67,989 of max.scatter.stored). The draws come from
// a fixed seed, outside any property (nothing to shrink: the failure prints the problem). Under
// the sanitize setup (POOLGRAD_FUZZ_CASES=100) it draws that many: ASan makes each draw about 50
// times slower, and the generators are plain code the normal suite already covers.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <string>

#include "fuzz/conv_problem_gen.hpp"
#include "fuzz/problem_gen.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/registry.hpp"

namespace pg {
namespace {

int draws() {
  const char* cases = std::getenv("POOLGRAD_FUZZ_CASES");
  return cases && *cases ? std::atoi(cases) : 100000;
}

TEST(GeneratorValidity, EveryPoolingDomainDrawsValidProblems) {
  for (const Variant& v : variants()) {
    rc::Random random(1);
    const rc::Gen<Problem> gen = fuzz::problem(v.op, v.domain);
    for (int i = 0; i < draws(); ++i) {
      const Problem p = gen(random.split(), fuzz::kFullSize).value();
      const std::string why = validate(p);
      ASSERT_EQ(why, "") << v.name << ", draw " << i << ": " << to_string(p);
    }
  }
}

TEST(GeneratorValidity, EveryConvDomainDrawsValidProblems) {
  for (const ConvVariant& v : conv_variants())
    for (fuzz::ConvShapeRule rule : {fuzz::ConvShapeRule::any, fuzz::ConvShapeRule::grouped}) {
      rc::Random random(1);
      const rc::Gen<ConvProblem> gen = fuzz::conv_problem(v.domain, rule);
      for (int i = 0; i < draws(); ++i) {
        const ConvProblem p = gen(random.split(), fuzz::kFullSize).value();
        ASSERT_EQ(conv_validate(p), "") << v.name << ", draw " << i << ": " << conv_to_string(p);
        ASSERT_TRUE(v.domain.admits(p).ok) << v.name << ", draw " << i << ": " << conv_to_string(p);
      }
    }
}

}  // namespace
}  // namespace pg
