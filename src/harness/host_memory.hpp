// Host memory a run needs, checked before it allocates: a problem too large for this machine is
// refused with the bytes it needs and the bytes available (the CLI exits 3, "cannot run here"),
// never a std::bad_alloc or the kernel's OOM killer halfway through.
#pragma once

#include <cstdint>
#include <string>

#include "src/model/backend.hpp"

namespace pg {

struct OutOfHostMemory : Error {
  using Error::Error;
};

// MemAvailable from /proc/meminfo (what can be allocated without swapping), else the physical
// memory; the POOLGRAD_HOST_MEMORY environment variable (bytes) overrides both, for tests.
int64_t host_memory_available();

// Throws OutOfHostMemory when `bytes` (an estimate; double so that absurd sizes cannot
// overflow) exceeds what is available. `what` names the job: "the oracle for op=max2d ...".
void require_host_memory(double bytes, const std::string& what);

}  // namespace pg
