// Variants agree with each other, not only with the oracle. Each case takes the domain of a
// randomly chosen variant, so the fast paths' shapes are compared too, and runs every variant of
// the op that supports the problem:
// - max, on integer data every sum is exact, so all of them, stored-index and recomputed, scatter
//   and gather, must give the same bits whatever their summation order;
// - max, on any data the deterministic ones must: each sums a dx element's windows in row-major
//   window order in the accumulator type and rounds once, so a variant that rounds differently
//   (bf16 truncated instead of rounded to nearest even, say) stands out even where the oracle's
//   bound would let it pass;
// - avg, where no two windows share an input element, on any data: every dx element is one term,
//   dy / divisor in the accumulator type rounded once, so all of them (the atomic one too: one
//   add onto zero) must give the same bits. A variant that multiplies by a rounded reciprocal,
//   or rounds twice, differs here by an ulp the oracle's bound allows.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstring>

#include "fuzz/coverage.hpp"
#include "fuzz/problem_gen.hpp"
#include "fuzz/property.hpp"
#include "kernels/common/numeric.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
#include "tests/backend_main.hpp"

namespace pg {
namespace {

// NaN payloads depend on the order operands meet (inf + -inf vs a propagated NaN), so any two
// NaNs count as equal, and so do +0 and -0 (a sum that starts from zero turns a lone -0 term into
// +0, a store of the term keeps it: IEEE-equal either way); every other element must match bit
// for bit.
bool same_bits_or_both_nan(DType t, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  if (a.size() != b.size()) return false;
  const int es = dtype_size(t);
  for (size_t i = 0; i < a.size() / es; ++i) {
    if (std::memcmp(a.data() + i * es, b.data() + i * es, es) == 0) continue;
    const auto at = static_cast<int64_t>(i);
    const double x = load_as_double(t, a.data(), at), y = load_as_double(t, b.data(), at);
    if (!(std::isnan(x) && std::isnan(y)) && !(x == 0 && y == 0)) return false;
  }
  return true;
}

// Runs every variant of `pool` that supports a problem drawn from the domain of one of `from`, and
// fails the property when two that `compare` admits for the data differ bitwise.
template <class Compare>
void expect_agreement(const std::string& title, Op op, Inputs data_inputs, const std::vector<const Variant*>& from,
                      const std::vector<const Variant*>& pool, Compare compare) {
  Backend& b = test::backend();
  ASSERT_FALSE(from.empty());
  ASSERT_GE(pool.size(), 2u);
  fuzz::Property prop(title + " on " + b.name());
  if (!prop.selected()) GTEST_SKIP() << "RC_PARAMS reproduces another property";
  std::string report;
  const bool ok = prop.check(
      [&] {
        const Variant& source = **rc::gen::elementOf(from);
        const Problem p = *fuzz::problem(op, source.domain);
        const DataSpec spec = *fuzz::data_spec(data_inputs);
        int supporting = 0;
        for (const Variant* v : pool) supporting += v->supports(p, b.kind()).ok && compare(*v, spec);
        if (supporting < 2) prop.discard("fewer than 2 variants to compare");
        const auto expected = std::make_shared<const Expected>(compute_expected(p, spec));
        std::string first_name;
        std::vector<unsigned char> first;
        int compared = 0;
        for (const Variant* v : pool) {
          if (!v->supports(p, b.kind()).ok || !compare(*v, spec)) continue;
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
        prop.ran(fuzz::observed_tags(p, spec, data_inputs));
      },
      {}, &report);
  std::cout << report;
  EXPECT_TRUE(ok) << report;
}

std::vector<const Variant*> runnable(Op op, bool (*keep)(const Variant&)) {
  std::vector<const Variant*> out;
  for (const Variant& v : variants())
    if (is_own(v) && v.op == op && !(test::backend().kind() == BackendKind::cpu && v.gpu_only) && keep(v))
      out.push_back(&v);
  return out;
}

// Every problem of the domain has windows no two of which share an input element.
bool disjoint_domain(const Variant& v) {
  if (v.domain.windows == WindowRule::disjoint || v.domain.windows == WindowRule::single) return true;
  if (v.domain.windows != WindowRule::listed) return false;
  for (const WindowShape& s : v.domain.shapes)
    if (s.stride < s.kernel) return false;
  return true;
}

TEST(MaxVariants, AgreeBitwise) {
  const auto all = runnable(Op::max, [](const Variant&) { return true; });
  // Recompute variants take part, so the data carries x too.
  expect_agreement("max variants agree bitwise", Op::max, Inputs::dy_and_x, all, all,
                   [](const Variant& v, const DataSpec& spec) { return spec.kind != DataKind::real || v.deterministic; });
}

TEST(AvgVariants, AgreeBitwiseOnDisjointWindows) {
  expect_agreement("avg variants agree bitwise on disjoint windows", Op::avg, Inputs::dy_only,
                   runnable(Op::avg, disjoint_domain), runnable(Op::avg, [](const Variant&) { return true; }),
                   [](const Variant&, const DataSpec&) { return true; });
}

}  // namespace
}  // namespace pg
