// Timing by replay (bench/timing.hpp): a captured graph runs its work again on each replay and
// only then (capture runs nothing), a capture the runtime refuses leaves the stream usable, and a
// LaunchTimer that replays issues no launch from the host per batch while one that cannot (the CPU
// backend, --timing batch) issues its batch's every launch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "src/harness/copy.hpp"
#include "src/harness/graph_replay.hpp"
#include "tests/backend_main.hpp"

namespace pg {
namespace {

constexpr size_t kBytes = (1u << 20) + 48;

std::vector<unsigned char> pattern(unsigned seed) {
  std::vector<unsigned char> v(kBytes);
  for (size_t i = 0; i < kBytes; ++i) v[i] = static_cast<unsigned char>(i * 131 + (i >> 8) + seed);
  return v;
}

std::vector<unsigned char> download(Backend& b, const Buffer& d) {
  std::vector<unsigned char> got(kBytes);
  b.download(got.data(), d.get(), kBytes);
  return got;
}

TEST(GraphReplay, ReplaysTheCapturedWorkEachTimeAndOnlyThen) {
  Backend& b = test::backend();
  Buffer s(b, kBytes), d(b, kBytes);
  const std::vector<unsigned char> zeros(kBytes, 0), first = pattern(7), second = pattern(91);
  b.upload(s.get(), first.data(), kBytes);
  b.upload(d.get(), zeros.data(), kBytes);
  std::string why;
  const auto replay = GraphReplay::capture(b, [&] { copy_kernel(b, d.get(), s.get(), kBytes); }, &why);
  if (b.kind() == BackendKind::cpu) {
    EXPECT_EQ(replay, nullptr);
    EXPECT_NE(why.find("cpu"), std::string::npos) << why;
    return;
  }
  ASSERT_NE(replay, nullptr) << why;
  b.synchronize();
  EXPECT_EQ(download(b, d), zeros) << "the capture ran the copy";
  replay->launch();
  EXPECT_EQ(download(b, d), first);
  b.upload(s.get(), second.data(), kBytes);
  replay->launch();
  EXPECT_EQ(download(b, d), second) << "a replay did not run the copy again";
}

TEST(GraphReplay, ARefusedCaptureLeavesTheStreamUsable) {
  Backend& b = test::backend();
  if (b.kind() == BackendKind::cpu) GTEST_SKIP() << "the CPU backend captures nothing (the test above checks its refusal)";
  Buffer s(b, kBytes), d(b, kBytes);
  const std::vector<unsigned char> data = pattern(3);
  b.upload(s.get(), data.data(), kBytes);
  b.synchronize();
  std::string why;
  // Waiting for the stream while it is captured is refused by the runtime.
  const auto replay = GraphReplay::capture(b, [&] {
    copy_kernel(b, d.get(), s.get(), kBytes);
    b.synchronize();
  }, &why);
  EXPECT_EQ(replay, nullptr);
  EXPECT_FALSE(why.empty());
  copy_kernel(b, d.get(), s.get(), kBytes);
  EXPECT_EQ(download(b, d), data);
}

TEST(LaunchTimer, ReplaysWithoutIssuingOrIssuesEveryLaunch) {
  Backend& b = test::backend();
  Buffer s(b, kBytes), d(b, kBytes);
  int issued = 0;
  const auto launch = [&] {
    ++issued;
    copy_kernel(b, d.get(), s.get(), kBytes);
  };
  for (const bench::Timing want : {bench::Timing::replay, bench::Timing::batch}) {
    bench::LaunchTimer t(b, launch, want);
    EXPECT_EQ(t.replayed(), want == bench::Timing::replay && b.kind() == BackendKind::gpu) << t.why_not_replayed();
    EXPECT_GE(t.reps(), 1);
    EXPECT_LE(t.reps(), t.replayed() ? bench::kMaxReplayLaunches : bench::kMaxBatchLaunches);
    issued = 0;
    const double ms = t.batch_ms();
    EXPECT_GT(ms, 0);
    EXPECT_EQ(issued, t.replayed() ? 0 : t.reps()) << bench::to_string(want);
  }
}

}  // namespace
}  // namespace pg
