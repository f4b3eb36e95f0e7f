// Copies global -> shared memory that do not pass through registers: a thread may have any
// number in flight without holding a register for each.
//
// NVIDIA sm_80 and later: cp.async, complete once the issuing thread's async_wait_all() has
// returned and, for other threads, after a barrier that follows it. Elsewhere (HIP, the CPU
// backend): a plain copy, complete at once; async_wait_all() does nothing.
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"
#include "kernels/common/pack.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PG_CP_ASYNC 1
#endif

namespace pg {

// 16 bytes from src (global memory) to dst (shared memory), both 16-byte aligned.
PG_HD void async_copy16(void* dst, const void* src) {
#if defined(PG_CP_ASYNC)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src)
               : "memory");
#else
  // A 16-byte pack, not memcpy: memcpy is host-only in hipcc's C++20 device code.
  using Bytes16 = Pack<uint32_t, 4>;
  *static_cast<Bytes16*>(dst) = *static_cast<const Bytes16*>(src);
#endif
}

// Waits until every copy this thread issued has landed.
PG_HD void async_wait_all() {
#if defined(PG_CP_ASYNC)
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

}  // namespace pg
