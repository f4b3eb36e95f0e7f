// The 16-byte copy kernel: every byte arrives, nothing outside the destination is touched,
// for sizes around the vector and unroll boundaries.
#include <gtest/gtest.h>

#include <vector>

#include "tests/backend_main.hpp"
#include "src/harness/copy.hpp"

namespace pg {
namespace {

TEST(Copy, EveryByteArrivesAndNothingElseIsTouched) {
  Backend& b = test::backend();
  for (size_t bytes : {0ul, 1ul, 15ul, 16ul, 17ul, 63ul, 64ul, 65ul, 4096ul + 7, (1ul << 20) + 48, (3ul << 20) + 5}) {
    const size_t band = 64;
    std::vector<unsigned char> src(bytes), dst(bytes + 2 * band, 0xEE);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>(i * 131 + (i >> 8) + 7);
    Buffer s(b, bytes + 16), d(b, dst.size());
    if (bytes) b.upload(s.get(), src.data(), bytes);
    b.upload(d.get(), dst.data(), dst.size());
    copy_kernel(b, static_cast<unsigned char*>(d.get()) + band, s.get(), bytes);
    b.synchronize();
    std::vector<unsigned char> got(dst.size());
    b.download(got.data(), d.get(), got.size());
    for (size_t i = 0; i < band; ++i) {
      ASSERT_EQ(got[i], 0xEE) << "write before the destination, size " << bytes;
      ASSERT_EQ(got[band + bytes + i], 0xEE) << "write past the destination, size " << bytes;
    }
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[band + i], src[i]) << "byte " << i << " of " << bytes;
  }
}

}  // namespace
}  // namespace pg
