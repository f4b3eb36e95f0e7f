// conv.gemm is GPU-only, so its index arithmetic would first meet a check on a GPU. This runs
// the kernel's own schedule (conv_gemm_schedule, kernels/conv/conv_gemm.hpp) for all 256 threads
// of every block on the host (kernels/conv/conv_gemm_host_block.hpp: the most adversarial order
// of a block's steps) and compares dx with the oracle on random problems inside the variant's
// domain.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/conv_problem_gen.hpp"
#include "kernels/conv/conv_gemm.hpp"
#include "kernels/conv/conv_gemm_host_block.hpp"
#include "kernels/conv/conv_gemm_tc.hpp"
#include "kernels/conv/conv_gemm_tma.hpp"
#include "kernels/conv/conv_gemm_wgmma.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

template <class T, int BM, int BN, bool CL>
void run_blocks(const ConvProblem& p, const ConvGemmPlan& plan, const ConvBuffers& b) {
  using Thread = ConvGemmThread<T, BM, BN, CL>;
  const typename Thread::Args args = make_conv_gemm_args<T>(p, plan, b);
  for (int64_t i = 0; i < plan.grid[0] * plan.grid[1] * plan.grid[2]; ++i)
    run_conv_gemm_block_on_host<Thread>(args, plan.grid, i, [](auto& block) { conv_gemm_schedule(block); });
}

TEST(ConvGemmOnHost, MatchesOracle) {
  const bool ok = rc::check("conv.gemm's block steps on the host match the oracle", [] {
    const ConvProblem p = *fuzz::conv_problem(ConvGemm::domain());
    const DataSpec spec = *fuzz::conv_data_spec();
    RC_PRE(ConvGemm::supports(p).ok);
    RC_TAG(std::to_string(p.dims) + "D", dtype_name(p.dtype), p.c_per_group() > 64 ? "128x128 tile" : "256x64 tile");
    const ConvExpected e = compute_conv_expected(p, spec);
    const ConvGemmPlan plan = plan_conv_gemm(p);
    const std::vector<unsigned char> dy = encode_values(p.dtype, e.data.dy, "dy"), w = encode_values(p.dtype, e.data.w, "w");
    std::vector<unsigned char> dx = poisoned(p.dtype, static_cast<size_t>(p.x_elems()) * dtype_size(p.dtype));
    std::vector<unsigned char> workspace(ConvGemm::workspace_bytes(p));
    const ConvBuffers b{dy.data(), w.data(), dx.data(), workspace.data()};
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      prepare_conv_gemm_weights<T>(CpuExec{}, p, plan, b);
      with_gemm_tile(p, [&]<int BM, int BN, bool CL>() { run_blocks<T, BM, BN, CL>(p, plan, b); });
    });
    const Mismatches bad = compare_with_oracle(p.dtype, dx.data(), OracleAnswer{&e.dx, &e.abs_sum, &e.terms}, 4,
                                              [&](int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); });
    if (bad.wrong > 0)
      RC_FAIL(conv_to_string(p) + " data=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + ": " +
              std::to_string(bad.wrong) + " wrong\n" + bad.detail);
  });
  EXPECT_TRUE(ok);
}


// A 16-bit GEMM variant's CPU launch (its blocks' steps with scalar math in its own ownership,
// as on a GPU without its matrix units) on each of its 12 paths: tile (wide C, narrow C) x A's
// source (channels-first dy copied, channels-last dy copied, channels-last dy read directly) x
// one or several `chunk`-step chunks of K/groups. The path is drawn first and the problem bent
// to it, and every path must have run by the end. 100 uniform draws left a path without a
// non-empty case (a zero batch runs nothing) now and then (seed 363919596051938975: one of 12
// missed), so a path still missing after a round gets up to two more rounds drawn from the
// missing paths alone. `max_dims` 2 keeps conv.gemm.tma's channels-last direct path direct (in 3D,
// 64-k chunks that cross groups take the copy).
template <class V>
void check_every_path(int64_t chunk, int max_dims = 3) {
  std::map<std::string, int> ran;
  std::vector<int> left = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, done(12, 0);
  bool ok = true;
  for (int round = 0; round < 3 && !left.empty(); ++round) {
    const std::vector<int> paths = left;
    ok = rc::check(std::string(V::traits.name) + "'s CPU launch matches the oracle on every path", [&] {
      // Full size: uniform from the first case.
      const int drawn = paths[*rc::gen::resize(100, rc::gen::inRange<size_t>(0, paths.size()))];
      const bool wide = drawn % 2 == 1, several = drawn / 2 % 2 == 1;
      const int a_path = drawn / 4;  // channels-first, channels-last copied, channels-last direct
      ConvDomain d = V::domain();
      d.reach[0] = 3;
      d.reach[1] = 6;
      d.reach[2] = 10;
      d.max_dims = max_dims;
      ConvProblem p = *fuzz::conv_problem(d);
      const int64_t groups = std::min<int64_t>(p.groups, 2);
      const int64_t cg = wide ? *rc::gen::inRange<int64_t>(65, 71) : *rc::gen::inRange<int64_t>(1, 65);
      int64_t kg = several ? *rc::gen::inRange<int64_t>(chunk + 1, chunk + 9) : *rc::gen::inRange<int64_t>(1, chunk + 1);
      if (a_path == 2) kg = several ? chunk + 8 : 8 * *rc::gen::inRange<int64_t>(1, chunk / 8 + 1);
      if (a_path == 1 && kg % 8 == 0) kg -= 1;
      p.layout = a_path == 0 ? Layout::channels_first : Layout::channels_last;
      p.groups = groups;
      p.c = groups * cg;
      p.k = groups * kg;
      conv_finalize(p);
      const DataSpec spec = *fuzz::conv_data_spec();
      RC_PRE(V::supports(p).ok);
      const ConvGemmTcPlan plan = V::plan(p);
      RC_ASSERT(plan.a_direct == (a_path == 2));
      const std::string path = std::to_string(plan.gemm.bm) + "x" + std::to_string(plan.gemm.bn) + ", " +
                               (a_path == 0 ? "channels-first" : a_path == 1 ? "channels-last copied" : "channels-last direct") +
                               ", " + (plan.gemm.kg_pad > chunk ? "several chunks" : "one chunk");
      RC_TAG(path);
      const ConvExpected e = compute_conv_expected(p, spec);
      const std::vector<unsigned char> dy = encode_values(p.dtype, e.data.dy, "dy"), w = encode_values(p.dtype, e.data.w, "w");
      std::vector<unsigned char> dx = poisoned(p.dtype, static_cast<size_t>(p.x_elems()) * dtype_size(p.dtype));
      // 16-byte aligned, as every backend's buffers are: the direct path needs it.
      std::vector<Pack<uint32_t, 4>> workspace(V::workspace_bytes(p) / 16 + 1);
      const ConvBuffers b{dy.data(), w.data(), dx.data(), workspace.data()};
      if (a_path == 2 && p.n > 0) RC_ASSERT(aligned16(dy.data()));
      V::launch(CpuExec{}, p, b);
      const Mismatches bad = compare_with_oracle(p.dtype, dx.data(), OracleAnswer{&e.dx, &e.abs_sum, &e.terms}, 4,
                                                [&](int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); });
      if (bad.wrong > 0)
        RC_FAIL(conv_to_string(p) + " data=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + ": " +
                std::to_string(bad.wrong) + " wrong\n" + bad.detail);
      if (p.x_elems() > 0) {
        ++ran[path];
        done[drawn] = 1;
      }
    }) && ok;
    left.clear();
    for (int path = 0; path < 12; ++path)
      if (!done[path]) left.push_back(path);
  }
  EXPECT_TRUE(ok);
  EXPECT_EQ(ran.size(), 12u) << "paths run: " << ran.size() << " of 12";
}

TEST(ConvGemmTcOnCpu, MatchesOracleOnEveryPath) { check_every_path<ConvGemmTc>(kTcBK); }

// conv.gemm.wgmma: its 64-k stages, 128-byte swizzle, the wgmma fragment's ownership and the
// ring whose multiplies run as late as a wgmma may read.
TEST(ConvGemmWgmmaOnCpu, MatchesOracleOnEveryPath) { check_every_path<ConvGemmWgmma>(kWgBK); }

// conv.gemm.tma: its boxes of dx positions, the tensors' coordinates per tap and chunk (the copies
// emulated element by element, zeros outside the tensor) and the ring.
TEST(ConvGemmTmaOnCpu, MatchesOracleOnEveryPath) { check_every_path<ConvGemmTma>(kWgBK, 2); }

// conv.gemm.tma's boxes along the samples: several samples a box and several such boxes (the fuzz's
// batches of at most 3 rarely have both, and a box's first sample off by whole boxes then still
// writes every sample).
TEST(ConvGemmTmaOnCpu, BoxesAcrossSamplesMatchOracle) {
  std::map<int32_t, int> ran;
  const bool ok = rc::check("conv.gemm.tma's boxes of several samples match the oracle", [&] {
    ConvDomain d = ConvGemmTma::domain();
    d.reach[0] = 1;
    d.reach[1] = 5;
    d.reach[2] = 12;
    ConvProblem p = *fuzz::conv_problem(d);
    // The smallest batch with three boxes along the samples, each of two or more.
    const auto sample_boxes = [](const ConvProblem& q, const ConvGemmTmaPlan& pl) { return (q.n + pl.geo.box_n - 1) / pl.geo.box_n; };
    for (p.n = 4; p.n < 64; ++p.n) {
      const ConvGemmTmaPlan pl = plan_conv_gemm_tma(p);
      if (pl.geo.box_n >= 2 && sample_boxes(p, pl) >= 3) break;
    }
    conv_finalize(p);
    RC_PRE(conv_validate(p).empty() && ConvGemmTma::supports(p).ok);
    const ConvGemmTmaPlan plan = plan_conv_gemm_tma(p);
    RC_PRE(plan.geo.box_n >= 2 && sample_boxes(p, plan) >= 3);
    RC_TAG(std::to_string(plan.geo.box_n) + " samples a box");
    const DataSpec spec = *fuzz::conv_data_spec();
    const ConvExpected e = compute_conv_expected(p, spec);
    const std::vector<unsigned char> dy = encode_values(p.dtype, e.data.dy, "dy"), w = encode_values(p.dtype, e.data.w, "w");
    std::vector<unsigned char> dx = poisoned(p.dtype, static_cast<size_t>(p.x_elems()) * dtype_size(p.dtype));
    std::vector<Pack<uint32_t, 4>> workspace(ConvGemmTma::workspace_bytes(p) / 16 + 1);
    const ConvBuffers b{dy.data(), w.data(), dx.data(), workspace.data()};
    ConvGemmTma::launch(CpuExec{}, p, b);
    const Mismatches bad = compare_with_oracle(p.dtype, dx.data(), OracleAnswer{&e.dx, &e.abs_sum, &e.terms}, 4,
                                              [&](int64_t i) { return element_coord_text(p.layout, p.dims, p.c, p.in, i); });
    if (bad.wrong > 0)
      RC_FAIL(conv_to_string(p) + " data=" + data_kind_name(spec.kind) + " seed=" + std::to_string(spec.seed) + ": " +
              std::to_string(bad.wrong) + " wrong\n" + bad.detail);
    ++ran[plan.geo.box_n];
  });
  EXPECT_TRUE(ok);
  EXPECT_FALSE(ran.empty()) << "no case had several boxes of several samples";
}

// The box conv.gemm.tma picks: 256 rows, the fewest boxes, the widest W among equals, and on
// channels-first dx a W extent of at least 16 positions or the whole axis.
TEST(ConvGemmTmaBox, FewestBoxesWidestW) {
  const auto box_of = [](std::vector<int64_t> x, int64_t k, int64_t stride, Layout layout) {
    ConvProblem p;
    p.dims = static_cast<int>(x.size()) - 2;
    p.n = x[0];
    p.c = x[1];
    p.k = k;
    p.layout = layout;
    for (int a = 0; a < kAxes; ++a) {
      const int i = a - (kAxes - p.dims);
      p.in[a] = i >= 0 ? x[2 + i] : 1;
      p.kernel[a] = i >= 0 ? 3 : 1;
      p.stride[a] = i >= 0 ? stride : 1;
      p.pad_begin[a] = p.pad_end[a] = i >= 0 ? 1 : 0;
    }
    conv_finalize(p);
    int32_t box[kAxes] = {}, n = 0, tiles[kAxes] = {};
    conv_tma_box(p, 256, box, n, tiles);
    EXPECT_EQ(box[0] * box[1] * box[2] * n, 256);
    return std::to_string(box[0]) + "x" + std::to_string(box[1]) + "x" + std::to_string(box[2]) + " n" + std::to_string(n) +
           " tiles " + std::to_string(tiles[0]) + "x" + std::to_string(tiles[1]) + "x" + std::to_string(tiles[2]);
  };
  EXPECT_EQ(box_of({32, 128, 56, 56}, 256, 1, Layout::channels_last), "1x8x8 n4 tiles 1x7x7");
  EXPECT_EQ(box_of({32, 128, 56, 56}, 256, 1, Layout::channels_first), "1x4x64 n1 tiles 1x14x1");
  EXPECT_EQ(box_of({4, 64, 32, 32, 32}, 64, 1, Layout::channels_first), "1x8x32 n1 tiles 32x4x1");
  EXPECT_EQ(box_of({32, 256, 28, 28}, 512, 2, Layout::channels_last), "1x2x16 n8 tiles 1x7x1");
  EXPECT_EQ(box_of({32, 256, 2048}, 256, 1, Layout::channels_first), "1x1x256 n1 tiles 1x1x8");
  EXPECT_EQ(box_of({3, 5, 7}, 8, 1, Layout::channels_first), "1x1x64 n4 tiles 1x1x1");
}

}  // namespace
}  // namespace pg
