// libFuzzer entry for the .npy reader (src/harness/npy.cpp): any bytes either parse or raise
// InvalidInput. A crash, a sanitizer report, another exception, or a file that does not read
// back the same after format_npy is a finding.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/model/invalid_input.hpp"
#include "src/harness/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<unsigned char> bytes(data, data + size);
  try {
    const pg::NpyArray a = pg::parse_npy(bytes, "fuzz.npy");
    const pg::NpyArray b = pg::parse_npy(pg::format_npy(a), "formatted.npy");
    if (b.header.type != a.header.type || b.header.shape != a.header.shape || b.data != a.data) __builtin_trap();
  } catch (const pg::InvalidInput&) {
  }
  return 0;
}
