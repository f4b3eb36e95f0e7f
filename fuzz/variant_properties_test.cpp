// Every registered variant against the oracle on random problems: one RapidCheck property per
// variant, run on the backend the binary was started with (--backend=cpu|gpu). A new variant
// is picked up with no change here.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "fuzz/problem_gen.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "tests/backend_main.hpp"

namespace pg {
namespace {

class VariantProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantProperty, MatchesOracle) {
  const Variant& v = *find_variant(GetParam());
  Backend& b = test::backend();
  if (b.kind() == BackendKind::cpu && v.gpu_only) GTEST_SKIP() << v.name << " is GPU only";
  // A GPU build whose GPU unit lacks a registered variant is a broken build, not a skip.
  if (b.kind() == BackendKind::gpu && !v.launch_gpu) FAIL() << v.name << " is registered but not built for the GPU";
  const bool ok = rc::check(v.name + " on " + b.name() + " matches the oracle", [&] {
    const bool disjoint = *rc::gen::arbitrary<bool>();
    const Problem p = *fuzz::problem({v.op, disjoint});
    const DataSpec spec = *fuzz::data_spec();
    const Support s = v.supports(p, b.kind());
    RC_PRE(s.ok);
    fuzz::classify(p, spec);
    const Outcome o = run_and_verify(b, v, p, spec);
    if (o.status != Status::pass) RC_FAIL(o.message);
  });
  EXPECT_TRUE(ok) << "replay the printed case with the 'replay:' line above, or the whole "
                     "property with RC_PARAMS=\"reproduce=...\"";
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  for (const Variant& v : variants()) names.push_back(v.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, VariantProperty, ::testing::ValuesIn(variant_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '.' || ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace pg
