#include "src/harness/host_memory.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "src/model/parse_number.hpp"

namespace pg {

int64_t host_memory_available() {
  if (const char* forced = std::getenv("POOLGRAD_HOST_MEMORY")) {
    std::string why;
    if (const auto v = parse_int64(forced, &why); v && *v >= 0) return *v;
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

void require_host_memory(double bytes, const std::string& what) {
  const int64_t available = host_memory_available();
  if (bytes <= static_cast<double>(available)) return;
  char text[160];
  std::snprintf(text, sizeof text, "needs about %.0f bytes (%.1f GiB) of host memory; %lld bytes (%.1f GiB) are available",
                bytes, bytes / (1 << 30), static_cast<long long>(available), static_cast<double>(available) / (1 << 30));
  throw OutOfHostMemory(what + " " + text);
}

}  // namespace pg
