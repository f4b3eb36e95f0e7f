// conv.gemm is GPU-only, so its index arithmetic would first meet a check on a GPU. This runs
// the kernel's own schedule (conv_gemm_schedule, kernels/conv/conv_gemm.hpp) for all 256 threads
// of every block on the host and compares dx with the oracle on random problems inside the
// variant's domain. Within a stage, every thread's stage() into the next buffer runs before any
// thread's multiply() of the current one: the most adversarial order a GPU may choose, so a stage
// that overwrote the buffer being read would show.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <memory>
#include <vector>

#include "fuzz/conv_problem_gen.hpp"
#include "kernels/conv/conv_gemm.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/verify_common.hpp"

namespace pg {
namespace {

// A whole block on the host for conv_gemm_schedule(): each step runs for all 256 threads in
// turn. multiply() waits for the barrier, so every thread's stage() into the next buffer runs
// before any thread's multiply() of the current one.
template <class T, int BM, int BN, bool CL>
struct HostBlock {
  using Thread = ConvGemmThread<T, BM, BN, CL>;
  std::vector<Thread>& threads;
  typename Thread::Smem& smem;
  const ConvGemmArgs<T>& args;
  int x, y, z;
  int pending_multiply = -1;

  template <class Step>
  void every(Step step) {
    for (Thread& t : threads) step(t);
  }
  bool begin() {
    bool active = false;
    for (int t = 0; t < kGemmThreads; ++t) active = threads[t].begin(args, smem, t, x, y, z);
    return active;
  }
  int iterations() const { return threads[0].iterations(); }
  void fetch() { every([](Thread& t) { t.fetch(); }); }
  void stage(int buf) { every([&](Thread& t) { t.stage(smem, buf); }); }
  void advance() { every([&](Thread& t) { t.advance(smem); }); }
  void multiply(int buf) { pending_multiply = buf; }
  void barrier() {
    if (pending_multiply >= 0) every([&](Thread& t) { t.multiply(smem, pending_multiply); });
    pending_multiply = -1;
  }
  void finish() {
    barrier();  // a multiply the schedule left without a barrier still runs before the results go out
    every([&](Thread& t) { t.finish(smem); });
  }
};

template <class T, int BM, int BN, bool CL>
void run_blocks(const ConvProblem& p, const ConvGemmPlan& plan, const ConvBuffers& b) {
  using Thread = ConvGemmThread<T, BM, BN, CL>;
  const ConvGemmArgs<T> args = make_conv_gemm_args<T>(p, plan, b);
  auto smem = std::make_unique<typename Thread::Smem>();
  std::vector<Thread> threads(kGemmThreads);
  for (int64_t z = 0; z < plan.grid[2]; ++z)
    for (int64_t y = 0; y < plan.grid[1]; ++y)
      for (int64_t x = 0; x < plan.grid[0]; ++x) {
        HostBlock<T, BM, BN, CL> block{threads, *smem, args, static_cast<int>(x), static_cast<int>(y), static_cast<int>(z)};
        conv_gemm_schedule(block);
      }
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

}  // namespace
}  // namespace pg
