// Every GPU runtime call and launch goes through PG_HIP_CHECK / PG_LAUNCH_CHECK: a failure
// becomes pg::Error carrying file:line, the call and the runtime's message.
#pragma once

#include <string>

#include "src/model/backend.hpp"
#include "kernels/common/hip_compat.hpp"

namespace pg {

inline void hip_check(hipError_t e, const char* what, const char* file, int line) {
  if (e != hipSuccess)
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                hipGetErrorString(e));
}

}  // namespace pg

#define PG_HIP_CHECK(expr) ::pg::hip_check((expr), #expr, __FILE__, __LINE__)
#define PG_LAUNCH_CHECK(name) ::pg::hip_check(hipGetLastError(), "launch of " name, __FILE__, __LINE__)
