// What the harness asks of a backend's memory beyond upload and download: fill() writes patterns
// of every size from any offset, read_back() finds the first and the last byte that breaks a
// pattern and downloads several buffers with one wait, for more ranges than one launch takes;
// read backs queued one after another (a fuzz batch) each see the memory as it was at their
// place in the queue, and all complete at one collect(), past what one staging or result area holds;
// uploads queued back to back without a wait between them all arrive (a GPU stages them in
// pinned memory it reuses), and buffers of many sizes come back from the allocator's reuse intact.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/backend_main.hpp"

namespace pg {
namespace {

unsigned char pattern_byte(uint64_t pattern, int bytes, size_t i) {
  return static_cast<unsigned char>(pattern >> (8 * (i % static_cast<size_t>(bytes))));
}

TEST(BackendMemory, FillWritesEachPatternAndNothingElse) {
  Backend& b = test::backend();
  const size_t total = 3 * 4096 + 77;
  Buffer buf(b, total);
  const std::vector<unsigned char> marker(total, 0x5A);
  b.upload(buf.get(), marker.data(), total);
  auto* base = static_cast<unsigned char*>(buf.get());
  // Ranges of each pattern size at odd offsets and lengths, with gaps that must keep the marker.
  const std::vector<PatternRange> ranges = {{base + 1, 9, 0xAB, 1},
                                            {base + 13, 2 * 1000 + 1, 0x7da5, 2},
                                            {base + 2100, 4 * 999 + 3, 0x7fa5a5a5u, 4},
                                            {base + 6200, 8 * 700 + 5, 0x7ff5a5a5a5a5a5a5ull, 8},
                                            {base + 12000, 0, 0x11, 1}};
  b.fill(ranges);
  std::vector<unsigned char> got(total);
  b.download(got.data(), buf.get(), total);
  std::vector<unsigned char> want = marker;
  for (const PatternRange& r : ranges)
    for (size_t i = 0; i < r.bytes; ++i)
      want[static_cast<size_t>(static_cast<unsigned char*>(r.at) - base) + i] = pattern_byte(r.pattern, r.pattern_bytes, i);
  for (size_t i = 0; i < total; ++i) ASSERT_EQ(got[i], want[i]) << "byte " << i;
}

TEST(BackendMemory, ReadBackFindsTheFirstAndLastBreakOfEachBand) {
  Backend& b = test::backend();
  // More bands than a GPU launch takes (16), each 3000 bytes with its own breaks.
  constexpr int kBands = 21;
  constexpr size_t kBand = 3000;
  Buffer buf(b, kBands * kBand);
  auto* base = static_cast<unsigned char*>(buf.get());
  std::vector<PatternRange> bands;
  std::vector<unsigned char> image(kBands * kBand);
  std::vector<PatternBreak> want(kBands);
  for (int k = 0; k < kBands; ++k) {
    const int size = 1 << (k % 4);
    const PatternRange r{base + k * kBand, kBand, 0x0102030405060708ull + static_cast<uint64_t>(k), size};
    bands.push_back(r);
    for (size_t i = 0; i < kBand; ++i) image[k * kBand + i] = pattern_byte(r.pattern, size, i);
    if (k % 3 == 0) continue;  // intact
    // One break, or two far apart: the first and the last must both be found.
    const size_t first = (static_cast<size_t>(k) * 397) % kBand, last = k % 3 == 2 ? kBand - 1 - k : first;
    image[k * kBand + first] ^= 0x40;
    if (last != first) image[k * kBand + last] ^= 0x01;
    want[k] = {static_cast<int64_t>(std::min(first, last)), static_cast<int64_t>(std::max(first, last))};
  }
  b.upload(buf.get(), image.data(), image.size());
  // Two reads in the same call: the bands' first and last 100 bytes.
  std::vector<unsigned char> head(100), tail(100);
  const std::vector<PatternBreak> got =
      b.read_back({{head.data(), base, 100}, {tail.data(), base + image.size() - 100, 100}}, bands);
  ASSERT_EQ(got.size(), bands.size());
  for (int k = 0; k < kBands; ++k) {
    EXPECT_EQ(got[k].first, want[k].first) << "band " << k;
    EXPECT_EQ(got[k].last, want[k].last) << "band " << k;
  }
  EXPECT_EQ(0, std::memcmp(head.data(), image.data(), 100));
  EXPECT_EQ(0, std::memcmp(tail.data(), image.data() + image.size() - 100, 100));
}

TEST(BackendMemory, QueuedReadBacksSeeTheirMomentAndCompleteAtOneCollect) {
  Backend& b = test::backend();
  // Step i fills a buffer with pattern i, then queues a read of it and a check of 16 pieces of it
  // against pattern i (intact) and one against pattern i - 1 (broken from its first byte to its
  // last). 300 steps queue 5,100 band checks (more than a GPU backend's 4,096 result slots) and
  // up to 160 MB of reads (more than its 64 MiB staging): both make it wait on the way, which
  // must not lose what was queued before.
  constexpr int kSteps = 300, kPieces = 16;
  std::vector<Buffer> buffers;
  std::vector<std::vector<unsigned char>> got(kSteps);
  std::vector<std::vector<PatternBreak>> breaks(kSteps);
  // Patterns i and i - 1 differ in every byte.
  auto pattern = [](int i) {
    uint64_t p = 0;
    for (int j = 0; j < 8; ++j) p |= static_cast<uint64_t>((i + 17 * j + 3) & 0xff) << (8 * j);
    return p;
  };
  for (int i = 0; i < kSteps; ++i) {
    const size_t bytes = (i % 7 == 3 ? size_t{3} << 20 : size_t{1} << 10) + 8 * static_cast<size_t>(i);
    if (i % 50 == 0) buffers.emplace_back(b, (size_t{3} << 20) + 8 * kSteps);  // a few buffers, refilled
    auto* base = static_cast<unsigned char*>(buffers.back().get());
    b.fill({{base, bytes, pattern(i), 8}});
    std::vector<PatternRange> bands;
    const size_t piece = bytes / kPieces / 8 * 8;  // whole patterns, so each piece starts with one
    for (int k = 0; k < kPieces; ++k) bands.push_back({base + k * piece, piece, pattern(i), 8});
    bands.push_back({base, bytes, pattern(i - 1), 8});
    got[i].resize(bytes);
    b.read_back_later({{got[i].data(), base, bytes}}, bands, &breaks[i]);
  }
  b.collect();
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_EQ(breaks[i].size(), size_t{kPieces + 1}) << "step " << i;
    for (int k = 0; k < kPieces; ++k) ASSERT_EQ(breaks[i][k].first, -1) << "step " << i << ", piece " << k;
    EXPECT_EQ(breaks[i][kPieces].first, 0) << "step " << i;
    EXPECT_EQ(breaks[i][kPieces].last, static_cast<int64_t>(got[i].size()) - 1) << "step " << i;
    for (size_t j = 0; j < got[i].size(); ++j)
      ASSERT_EQ(got[i][j], pattern_byte(pattern(i), 8, j)) << "step " << i << ", byte " << j;
  }
}

TEST(BackendMemory, QueuedUploadsAndReusedBuffersKeepTheirBytes) {
  Backend& b = test::backend();
  // Many uploads of many sizes queued without a wait, the host sources overwritten right after
  // each: every buffer must still hold what was uploaded into it. Then released and allocated
  // again at nearby sizes, which a GPU serves from its reuse pool.
  for (int round = 0; round < 3; ++round) {
    std::vector<Buffer> buffers;
    std::vector<std::vector<unsigned char>> sent;
    std::vector<unsigned char> source;
    for (int k = 0; k < 40; ++k) {
      const size_t bytes = 1 + static_cast<size_t>(k * k * 2311 + round * 977) % (3 << 20);
      source.assign(bytes, 0);
      for (size_t i = 0; i < bytes; i += 97) source[i] = static_cast<unsigned char>(k + i + round);
      buffers.emplace_back(b, bytes);
      b.upload(buffers.back().get(), source.data(), bytes);
      sent.push_back(source);
      std::fill(source.begin(), source.end(), 0xCC);  // the upload must not read this
    }
    for (size_t k = 0; k < buffers.size(); ++k) {
      std::vector<unsigned char> got(sent[k].size());
      b.download(got.data(), buffers[k].get(), got.size());
      ASSERT_TRUE(got == sent[k]) << "round " << round << ", buffer " << k << " of " << sent[k].size() << " bytes";
    }
  }
}

}  // namespace
}  // namespace pg
