// Every registered variant against the oracle on random problems inside its own domain: one
// RapidCheck property per variant, run on the backend the binary was started with
// (--backend=cpu|gpu). A new variant is picked up with no change here.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <string>

#include "fuzz/coverage.hpp"
#include "fuzz/problem_gen.hpp"
#include "fuzz/property.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
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
  fuzz::Property prop(v.name + " on " + b.name() + " matches the oracle");
  if (!prop.selected()) GTEST_SKIP() << "RC_PARAMS reproduces another property";
  std::string report;
  const bool ok = prop.check(
      [&] {
        const Problem p = *fuzz::problem(v.op, v.domain);
        const DataSpec spec = *fuzz::data_spec(v.inputs);
        const Support s = v.supports(p, b.kind());
        if (!s.ok) prop.discard(s.why);
        RC_TAG(std::to_string(p.dims) + "D", dtype_name(p.dtype));
        const Outcome o = run_and_verify(b, v, p, spec);
        if (o.status != Status::pass) prop.fail(o.message);
        prop.ran(fuzz::observed_tags(p, spec, v.inputs));
      },
      fuzz::admitted_tags(v), &report);
  std::cout << report;
  EXPECT_TRUE(ok) << report;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> names;
  const bool vendor = std::getenv("POOLGRAD_VENDOR") && std::string(std::getenv("POOLGRAD_VENDOR")) == "1";
  for (const Variant& v : variants())
    if (!v.vendor || vendor) names.push_back(v.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, VariantProperty, ::testing::ValuesIn(variant_names()),
                         test::variant_param_name);

}  // namespace
}  // namespace pg
