// `poolgrad check`'s sets reach every variant: at least three cases inside each variant's domain
// on every backend it runs on, derived from supports(), never from a list of names.
#include <gtest/gtest.h>

#include "src/harness/check_set.hpp"
#include "src/harness/conv_check_set.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/registry.hpp"

namespace pg {
namespace {

TEST(CheckSet, GivesEveryVariantThreeCasesOnEachBackend) {
  const std::vector<CheckCase> cases = check_set();
  ASSERT_FALSE(variants().empty());
  for (const Variant& v : variants()) {
    int cpu = 0, gpu = 0;
    for (const CheckCase& c : cases) {
      if (c.problem.op != v.op) continue;
      EXPECT_EQ(validate(c.problem), "") << c.label;
      const bool in_domain = v.domain.admits(c.problem).ok && v.supports_problem(c.problem).ok;
      gpu += in_domain;
      cpu += in_domain && v.supports(c.problem, BackendKind::cpu).ok;
    }
    EXPECT_GE(gpu, 3) << v.name << ": fewer than 3 check cases in its domain";
    if (!v.gpu_only) EXPECT_GE(cpu, 3) << v.name << ": fewer than 3 check cases on the CPU backend";
  }
}

TEST(ConvCheckSet, GivesEveryConvVariantThreeCasesOnEachBackend) {
  const std::vector<ConvCheckCase> cases = conv_check_set();
  ASSERT_FALSE(conv_variants().empty());
  for (const ConvVariant& v : conv_variants()) {
    int cpu = 0, gpu = 0;
    for (const ConvCheckCase& c : cases) {
      EXPECT_EQ(conv_validate(c.problem), "") << c.label;
      const bool in_domain = v.domain.admits(c.problem).ok && v.supports_problem(c.problem).ok;
      gpu += in_domain;
      cpu += in_domain && v.supports(c.problem, BackendKind::cpu).ok;
    }
    EXPECT_GE(gpu, 3) << v.name << ": fewer than 3 conv check cases in its domain";
    if (!v.gpu_only) EXPECT_GE(cpu, 3) << v.name << ": fewer than 3 conv check cases on the CPU backend";
  }
}

}  // namespace
}  // namespace pg
