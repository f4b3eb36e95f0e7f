// The one-step simplifications a campaign's shrink tries after RapidCheck's (fuzz/simplify.hpp), on
// problems every registered variant's generator draws: each candidate is valid and simpler, and
// always taking the first one ends at the simplest problem of the op.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>

#include "fuzz/conv_problem_gen.hpp"
#include "fuzz/problem_gen.hpp"
#include "fuzz/simplify.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/registry.hpp"

namespace pg::fuzz {
namespace {

constexpr int kDrawsPerVariant = 40;

template <class P>
void expect_simplest_axes(const P& p, const std::string& from) {
  EXPECT_EQ(p.dims, 1) << from;
  EXPECT_EQ(p.in[2], 1) << from;
  EXPECT_EQ(p.kernel[2], 1) << from;
  EXPECT_EQ(p.stride[2], 1) << from;
  EXPECT_EQ(p.dilation[2], 1) << from;
  EXPECT_EQ(p.pad_begin[2], 0) << from;
  EXPECT_EQ(p.pad_end[2], 0) << from;
  EXPECT_EQ(p.n, std::min<int64_t>(p.n, 1)) << from;  // a batch of 0 stays 0
  EXPECT_EQ(p.layout, Layout::channels_first) << from;
  EXPECT_EQ(p.dtype, DType::f32) << from;
}

// Every candidate valid and different from p; the first-candidate walk from p ends within
// `limit` steps at a problem with none (returned).
template <class P, class Simpler, class Valid, class Text>
P walk(const P& start, Simpler simpler, Valid valid, Text text, int limit) {
  P p = start;
  for (int step = 0; step < limit; ++step) {
    const std::vector<P> next = simpler(p);
    for (const P& q : next) {
      EXPECT_EQ(valid(q), "") << text(q) << " from " << text(p);
      EXPECT_NE(text(q), text(p));
    }
    if (next.empty()) return p;
    p = next.front();
  }
  ADD_FAILURE() << "no end after " << limit << " steps from " << text(start);
  return p;
}

TEST(Simplify, PoolProblemsWalkToTheSimplest) {
  for (const Variant& v : variants()) {
    const rc::Gen<Problem> gen = problem(v.op, v.domain);
    for (int i = 0; i < kDrawsPerVariant; ++i) {
      const Problem start = gen(rc::Random(1000 + i), kFullSize).value();
      const Problem end = walk(start, simpler_problems, validate, [](const Problem& p) { return to_string(p); }, 2000);
      const std::string from = v.name + ": " + to_string(start);
      expect_simplest_axes(end, from);
      EXPECT_EQ(end.c, 1) << from;
      EXPECT_FALSE(end.ceil_mode) << from;
      EXPECT_FALSE(end.has_divisor_override) << from;
      // What the steps leave alone: the op and its rules.
      EXPECT_EQ(end.op, start.op) << from;
      EXPECT_EQ(end.tie, start.tie) << from;
      EXPECT_EQ(end.nan, start.nan) << from;
      EXPECT_EQ(end.divisor, start.divisor) << from;
      EXPECT_EQ(end.index_type, start.index_type) << from;
    }
  }
}

TEST(Simplify, ConvProblemsWalkToTheSimplest) {
  for (const ConvVariant& v : conv_variants()) {
    const rc::Gen<ConvProblem> gen = conv_problem(v.domain);
    for (int i = 0; i < kDrawsPerVariant; ++i) {
      const ConvProblem start = gen(rc::Random(2000 + i), kFullSize).value();
      const ConvProblem end =
          walk(start, simpler_conv_problems, conv_validate, [](const ConvProblem& p) { return conv_to_string(p); }, 2000);
      const std::string from = v.name + ": " + conv_to_string(start);
      expect_simplest_axes(end, from);
      EXPECT_EQ(end.c, 1) << from;
      EXPECT_EQ(end.k, 1) << from;
      EXPECT_EQ(end.groups, 1) << from;
      EXPECT_EQ(end.pad_mode, ConvPadMode::explicit_pads) << from;
    }
  }
}

// Where RapidCheck's own walk stopped from some first failures (campaign_test.cpp's planted
// bugs, before these steps): each is one step from a simpler problem that still shows the bug.
TEST(Simplify, StepsOutOfRapidChecksLocalMinima) {
  auto has = [](const auto& candidates, auto text, const std::string& want) {
    for (const auto& q : candidates)
      if (text(q) == want) return true;
    return false;
  };
  ConvProblem conv;
  std::string error;
  ASSERT_TRUE(parse_conv_problem("op=conv2d n=1 c=2 k=2 g=2 in=1x5 ks=1x1 s=1x1 d=1x1 pb=0x0 pe=0x0 layout=ncdhw dtype=f32",
                                 &conv, &error))
      << error;
  const auto conv_text = [](const ConvProblem& p) { return conv_to_string(p); };
  const std::vector<ConvProblem> cs = simpler_conv_problems(conv);
  EXPECT_TRUE(has(cs, conv_text, "op=conv1d n=1 c=2 k=2 g=2 in=5 ks=1 s=1 d=1 pb=0 pe=0 layout=ncdhw dtype=f32"));
  EXPECT_TRUE(has(cs, conv_text, "op=conv2d n=1 c=2 k=2 g=1 in=1x5 ks=1x1 s=1x1 d=1x1 pb=0x0 pe=0x0 layout=ncdhw dtype=f32"));
  EXPECT_TRUE(has(cs, conv_text, "op=conv2d n=1 c=1 k=1 g=1 in=1x5 ks=1x1 s=1x1 d=1x1 pb=0x0 pe=0x0 layout=ncdhw dtype=f32"));

  // pad=same: a pad step changes nothing (the mode sets the pads again), so it is no candidate;
  // the mode itself gives way to the pads it resolved to.
  ASSERT_TRUE(parse_conv_problem("op=conv1d n=1 c=1 k=1 g=1 in=5 ks=3 s=1 d=1 pad=same layout=ncdhw dtype=f32", &conv, &error))
      << error;
  const std::vector<ConvProblem> same = simpler_conv_problems(conv);
  EXPECT_TRUE(has(same, conv_text, "op=conv1d n=1 c=1 k=1 g=1 in=5 ks=3 s=1 d=1 pb=1 pe=1 layout=ncdhw dtype=f32"));
  EXPECT_TRUE(has(same, conv_text, "op=conv1d n=1 c=1 k=1 g=1 in=5 ks=1 s=1 d=1 pad=same layout=ncdhw dtype=f32"));
  EXPECT_FALSE(has(same, conv_text, conv_text(conv)));

  Problem pool;
  ASSERT_TRUE(parse_problem("op=avg1d n=1 c=1 in=9 k=9 s=1 d=1 pb=0 pe=0 ceil=0 div=full_kernel layout=ncdhw dtype=f32 "
                            "padlimit=none avg3dcheck=0",
                            &pool, &error))
      << error;
  const auto pool_text = [](const Problem& p) { return to_string(p); };
  const std::vector<Problem> ps = simpler_problems(pool);
  EXPECT_TRUE(has(ps, pool_text,
                  "op=avg1d n=1 c=1 in=9 k=1 s=1 d=1 pb=0 pe=0 ceil=0 div=full_kernel layout=ncdhw dtype=f32 padlimit=none "
                  "avg3dcheck=0"));
  // The input shorter than the window is no candidate: it is not a valid problem.
  EXPECT_FALSE(has(ps, pool_text,
                   "op=avg1d n=1 c=1 in=8 k=9 s=1 d=1 pb=0 pe=0 ceil=0 div=full_kernel layout=ncdhw dtype=f32 padlimit=none "
                   "avg3dcheck=0"));
}

}  // namespace
}  // namespace pg::fuzz
