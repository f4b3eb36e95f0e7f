#include "src/model/backend.hpp"

#include <algorithm>
#include <cstring>

namespace pg {
namespace {

// A block of the pattern repeated, phase 0 at its start; kBlock is a multiple of 8, so of every
// pattern size, and a range compared block by block stays in phase.
constexpr size_t kBlock = 4096;

// `bytes` at `at` filled with the range's pattern, by doubling copies (a byte loop with a modulo
// per byte made a CPU campaign's band checks twice as slow as the copies they replaced).
void fill_doubling(const PatternRange& r, unsigned char* at, size_t bytes) {
  const size_t size = std::min(bytes, static_cast<size_t>(r.pattern_bytes));
  std::memcpy(at, &r.pattern, size);  // little-endian hosts: byte k of the pattern is byte k of memory
  for (size_t done = size; done < bytes; done *= 2) std::memcpy(at + done, at, std::min(done, bytes - done));
}

void pattern_block(const PatternRange& r, unsigned char* block) { fill_doubling(r, block, kBlock); }

}  // namespace

void fill_host(const std::vector<PatternRange>& ranges) {
  for (const PatternRange& r : ranges)
    if (r.bytes) fill_doubling(r, static_cast<unsigned char*>(r.at), r.bytes);
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
