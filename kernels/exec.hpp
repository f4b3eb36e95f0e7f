// How a variant's per-work-item body runs over an index space.
//
// A variant writes its work as a functor with `PG_HD void operator()(Idx i) const` and calls
// `ex.for_each(n, functor)`. CpuExec runs it on host threads (the CPU backend), GpuExec launches
// a grid-stride kernel. Both are templates instantiated by the backend's own translation unit,
// so the body is compiled once per compiler from the same source.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "../src/hip_compat.hpp"
#include "../src/numeric.hpp"
#if PG_GPU_COMPILER
#include "../src/gpu_check.hpp"
#endif

namespace pg {

// dst += v, safe against concurrent adds to the same element on every backend.
template <class T>
PG_HD void atomic_add(T* dst, T v) {
#if PG_DEVICE_PASS
  atomicAdd(dst, v);
#else
  std::atomic_ref<T>(*dst).fetch_add(v, std::memory_order_relaxed);
#endif
}

struct CpuExec {
  static constexpr bool is_gpu = false;

  template <class Idx = int64_t, class F>
  void for_each(int64_t n, const F& f) const {
    if (n <= 0) return;
    const int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                                              (n + kMinPerThread - 1) / kMinPerThread);
    if (threads <= 1) {
      for (int64_t i = 0; i < n; ++i) f(static_cast<Idx>(i));
      return;
    }
    // Interleaved chunks: neighbouring work items run on different threads, so atomic
    // variants really race on the CPU backend too.
    std::vector<std::thread> pool;
    const int64_t chunk = 64;
    for (int64_t t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int64_t base = t * chunk; base < n; base += threads * chunk)
          for (int64_t i = base; i < std::min(n, base + chunk); ++i) f(static_cast<Idx>(i));
      });
    }
    for (auto& th : pool) th.join();
  }

  void zero(void* p, size_t bytes) const { std::memset(p, 0, bytes); }

 private:
  static constexpr int64_t kMinPerThread = 4096;
};

#if PG_GPU_COMPILER

template <class Idx, class F>
__global__ void for_each_kernel(F f, Idx n) {
  const Idx step = static_cast<Idx>(gridDim.x) * static_cast<Idx>(blockDim.x);
  for (Idx i = static_cast<Idx>(blockIdx.x) * static_cast<Idx>(blockDim.x) + threadIdx.x; i < n; i += step)
    f(i);
}

struct GpuExec {
  static constexpr bool is_gpu = true;
  hipStream_t stream = 0;
  int block = 256;

  // Idx = int32_t is faster address arithmetic; the caller picks it only when n and every
  // offset the body computes fit (see fits_int32 in kernels/indexing.hpp).
  template <class Idx = int64_t, class F>
  void for_each(int64_t n, const F& f) const {
    if (n <= 0) return;
    const int64_t blocks = std::min<int64_t>((n + block - 1) / block, int64_t{1} << 20);
    for_each_kernel<Idx, F><<<static_cast<unsigned>(blocks), block, 0, stream>>>(f, static_cast<Idx>(n));
    PG_LAUNCH_CHECK("for_each_kernel");
  }

  void zero(void* p, size_t bytes) const { PG_HIP_CHECK(hipMemsetAsync(p, 0, bytes, stream)); }
};

#endif

}  // namespace pg
