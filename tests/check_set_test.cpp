// `poolgrad check`'s sets reach every variant: at least three cases inside each variant's domain
// on every backend it runs on, derived from supports(), never from a list of names.
#include <gtest/gtest.h>

#include "src/harness/check_set.hpp"
#include "src/harness/conv_check_set.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/registry.hpp"

namespace pg {
namespace {

// Per variant record, how many cases of the set fall in its domain (the GPU's) and how many of
// those the CPU backend runs; every case must be valid on its own.
template <class Record, class Case, class Validate>
void expect_three_per_backend(const std::vector<Record>& records, const std::vector<Case>& cases, Validate validate,
                              const char* set) {
  ASSERT_FALSE(records.empty());
  for (const Record& v : records) {
    int cpu = 0, gpu = 0;
    for (const Case& c : cases) {
      if constexpr (requires { v.op; }) {
        if (c.problem.op != v.op) continue;
      }
      EXPECT_EQ(validate(c.problem), "") << c.label;
      const bool in_domain = v.domain.admits(c.problem).ok && v.supports_problem(c.problem).ok;
      gpu += in_domain;
      cpu += in_domain && v.supports(c.problem, BackendKind::cpu).ok;
    }
    EXPECT_GE(gpu, 3) << v.name << ": fewer than 3 " << set << " cases in its domain";
    if (!v.gpu_only) EXPECT_GE(cpu, 3) << v.name << ": fewer than 3 " << set << " cases on the CPU backend";
  }
}

TEST(CheckSet, GivesEveryVariantThreeCasesOnEachBackend) {
  expect_three_per_backend(variants(), check_set(), [](const Problem& p) { return validate(p); }, "check");
}

TEST(ConvCheckSet, GivesEveryConvVariantThreeCasesOnEachBackend) {
  expect_three_per_backend(conv_variants(), conv_check_set(), [](const ConvProblem& p) { return conv_validate(p); },
                           "conv check");
}

}  // namespace
}  // namespace pg
