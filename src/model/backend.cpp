#include "src/model/backend.hpp"

#include <algorithm>
#include <cstring>

namespace pg {
namespace {

// A block of the pattern repeated, phase 0 at its start; kBlock is a multiple of 8, so of every
// pattern size, and a range compared block by block stays in phase.
constexpr size_t kBlock = 4096;

void pattern_block(const PatternRange& r, unsigned char* block) {
  unsigned char one[8];
  std::memcpy(one, &r.pattern, 8);  // little-endian hosts: byte k of the pattern is byte k of memory
  for (size_t i = 0; i < kBlock; ++i) block[i] = one[i % static_cast<size_t>(r.pattern_bytes)];
}

}  // namespace

void fill_host(const std::vector<PatternRange>& ranges) {
  unsigned char block[kBlock];
  for (const PatternRange& r : ranges) {
    pattern_block(r, block);
    auto* at = static_cast<unsigned char*>(r.at);
    for (size_t done = 0; done < r.bytes; done += kBlock) std::memcpy(at + done, block, std::min(kBlock, r.bytes - done));
  }
}

std::vector<PatternBreak> pattern_breaks_host(const std::vector<PatternRange>& bands) {
  std::vector<PatternBreak> out(bands.size());
  unsigned char block[kBlock];
  for (size_t b = 0; b < bands.size(); ++b) {
    const PatternRange& r = bands[b];
    pattern_block(r, block);
    const auto* at = static_cast<const unsigned char*>(r.at);
    auto differs = [&](size_t i) { return at[i] != block[i % kBlock]; };
    // Block by block from the front for the first break, from the back for the last.
    for (size_t done = 0; done < r.bytes && out[b].first < 0; done += kBlock) {
      const size_t n = std::min(kBlock, r.bytes - done);
      if (std::memcmp(at + done, block, n) == 0) continue;
      for (size_t i = done; i < done + n; ++i)
        if (differs(i)) {
          out[b].first = static_cast<int64_t>(i);
          break;
        }
    }
    if (out[b].first < 0) continue;
    for (size_t end = r.bytes; end > 0 && out[b].last < 0;) {
      const size_t begin = (end - 1) / kBlock * kBlock;
      if (std::memcmp(at + begin, block, end - begin) != 0)
        for (size_t i = end; i-- > begin;)
          if (differs(i)) {
            out[b].last = static_cast<int64_t>(i);
            break;
          }
      end = begin;
    }
  }
  return out;
}

}  // namespace pg
