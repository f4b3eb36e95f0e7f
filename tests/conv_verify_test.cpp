// conv_run_and_verify judged by conv kernels known to be wrong: fake variants, written here,
// that skip an element, write past dx, write into dy or differ between two runs must each fail
// with the right reason and a replay line; one that writes the oracle's answer must pass.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>

#include "kernels/common/numeric.hpp"
#include "reference/conv_reference.hpp"
#include "src/harness/conv_verify.hpp"

namespace pg {
namespace {

// 2 x 4 x 7 x 6 input, K = 6 in 2 groups, 3x3, stride 2, padding 1.
ConvProblem problem() {
  ConvProblem p;
  p.dims = 2;
  p.n = 2;
  p.c = 4;
  p.k = 6;
  p.groups = 2;
  set_window(p, {.in = {7, 6}, .kernel = {3, 3}, .stride = {2, 2}, .pad_begin = {1, 1}, .pad_end = {1, 1}});
  conv_finalize(p);
  return p;
}

// Writes the oracle's answer for the uploaded dy and w (the CPU backend's buffers are host memory).
void write_right(const ConvProblem& p, const ConvBuffers& b) {
  std::vector<double> dy(p.y_elems()), w(p.w_elems());
  for (int64_t i = 0; i < p.y_elems(); ++i) dy[i] = load_as_double(p.dtype, b.dy, i);
  for (int64_t i = 0; i < p.w_elems(); ++i) w[i] = load_as_double(p.dtype, b.w, i);
  const std::vector<double> dx = ref::conv_backward_data(p, dy, w).dx;
  for (int64_t i = 0; i < p.x_elems(); ++i) store_from_double(p.dtype, b.dx, i, dx[i]);
}

ConvVariant fake(const std::string& name, std::function<void(const ConvProblem&, const ConvBuffers&)> body) {
  ConvVariant v;
  v.name = "fake." + name;
  v.deterministic = true;
  v.supports_problem = [](const ConvProblem&) { return Support::yes(); };
  v.workspace_bytes = [](const ConvProblem&) { return size_t{0}; };
  v.launch_cpu = [body](Backend&, const ConvProblem& p, const ConvBuffers& b) { body(p, b); };
  return v;
}

Outcome run(const ConvVariant& v) {
  const auto backend = make_cpu_backend();
  setenv("POOLGRAD_FAILURE_DIR", (::testing::TempDir() + "poolgrad-conv-verify").c_str(), 1);
  return conv_run_and_verify(*backend, v, problem(), DataSpec{5, DataKind::ints});
}

void expect_fail(const Outcome& o, const std::string& why) {
  EXPECT_EQ(o.status, Status::fail) << o.message;
  EXPECT_NE(o.message.find(why), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("replay: poolgrad replay --problem 'op=conv2d"), std::string::npos) << o.message;
}

TEST(ConvVerify, RightAnswerPasses) {
  const Outcome o = run(fake("right", write_right));
  EXPECT_EQ(o.status, Status::pass) << o.message;
}

TEST(ConvVerify, SkippedElementIsNeverWritten) {
  expect_fail(run(fake("skips", [](const ConvProblem& p, const ConvBuffers& b) {
                ConvBuffers copy = b;
                std::vector<unsigned char> keep(dtype_size(p.dtype));
                std::memcpy(keep.data(), static_cast<unsigned char*>(b.dx) + 5 * keep.size(), keep.size());
                write_right(p, copy);
                std::memcpy(static_cast<unsigned char*>(b.dx) + 5 * keep.size(), keep.data(), keep.size());
              })),
              "never written (still poisoned)");
}

TEST(ConvVerify, WritePastDxIsReported) {
  expect_fail(run(fake("past", [](const ConvProblem& p, const ConvBuffers& b) {
                write_right(p, b);
                static_cast<float*>(b.dx)[p.x_elems() + 3] = 1;
              })),
              "write past the end of dx");
}

TEST(ConvVerify, WriteIntoDyIsReported) {
  expect_fail(run(fake("writes_dy", [](const ConvProblem& p, const ConvBuffers& b) {
                write_right(p, b);
                const_cast<float*>(static_cast<const float*>(b.dy))[0] += 1;
              })),
              "input dy was modified");
}

TEST(ConvVerify, WrongValueIsOutsideTheBound) {
  expect_fail(run(fake("off_by_one", [](const ConvProblem& p, const ConvBuffers& b) {
                write_right(p, b);
                static_cast<float*>(b.dx)[7] += 1;
              })),
              "outside bound");
}

TEST(ConvVerify, DeterministicVariantThatChangesBetweenRunsFails) {
  expect_fail(run(fake("drifts", [](const ConvProblem& p, const ConvBuffers& b) {
                static std::atomic<int> runs{0};
                write_right(p, b);
                // Every other run the first nonzero element one ulp off: inside the bound
                // ((terms + 2) u sum|term| >= 3 u |dx|), but not the same bits.
                if (runs++ % 2 == 1)
                  for (int64_t i = 0; i < p.x_elems(); ++i) {
                    float& v = static_cast<float*>(b.dx)[i];
                    if (v == 0) continue;
                    v = bits_as<float>(bits_as<uint32_t>(v) ^ 1u);
                    break;
                  }
              })),
              "different bits on a second run");
}

}  // namespace
}  // namespace pg
