// How a variant's per-work-item body runs over an index space.
//
// A variant writes its work as a functor with `PG_HD void operator()(Idx i) const` and calls
// `ex.for_each(n, functor)`. CpuExec runs it on host threads (the CPU backend), GpuExec launches
// a grid-stride kernel. Both are templates instantiated by the backend's own translation unit,
// so the body is compiled once per compiler from the same source.
//
// `ex.template for_each<Idx, kMinBlocksPerSm>(n, f)` launches with launch bounds: 256 threads
// per block and registers capped so that that many blocks fit on a multiprocessor (see
// PG_LAUNCH_BOUNDS; 0: the thread bound only, which alone changes nvcc's register choice).
// The default, kNoLaunchBounds, gives none. The CPU backend ignores it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/common/hip_compat.hpp"
#include "kernels/common/numeric.hpp"
#if PG_GPU_COMPILER
#include "kernels/common/gpu_check.hpp"
#endif

namespace pg {

inline constexpr int kNoLaunchBounds = -1;

// dst += v, safe against concurrent adds to the same element on every backend.
template <class T>
PG_HD void atomic_add(T* dst, T v) {
#if PG_DEVICE_PASS
  atomicAdd(dst, v);
#else
  std::atomic_ref<T>(*dst).fetch_add(v, std::memory_order_relaxed);
#endif
}

// *dst += v on every backend, safe against concurrent adds; returns the value before the add.
template <class T>
PG_HD T atomic_fetch_add(T* dst, T v) {
#if PG_DEVICE_PASS
  return atomicAdd(dst, v);
#else
  return std::atomic_ref<T>(*dst).fetch_add(v, std::memory_order_relaxed);
#endif
}

struct CpuExec {
  static constexpr bool is_gpu = false;

  static CpuExec on_stream(void*) { return {}; }  // as GpuExec's: the CPU backend has no stream

  template <class Idx = int64_t, int kMinBlocksPerSm = kNoLaunchBounds, class F>
  void for_each(int64_t n, const F& f) const {
    if (n <= 0) return;
    const int64_t cores = thread_limit_ > 0 ? thread_limit_ : std::max(1u, std::thread::hardware_concurrency());
    const int64_t threads = std::min<int64_t>(cores, (n + kMinPerThread - 1) / kMinPerThread);
    // Every other call walks the index space backwards. A deterministic variant runs twice per
    // verification and must give the same bits, so an item that writes into another's elements
    // (a short last item storing past its end, say) is caught whichever way the stray write
    // points, instead of being overwritten by the rightful item when that one happens to run later.
    // Counted per calling thread: cases verified at once on several threads each still alternate.
    const bool backwards = order_++ % 2 == 1;
    const auto at = [&](int64_t i) { return static_cast<Idx>(backwards ? n - 1 - i : i); };
    if (threads <= 1) {
      for (int64_t i = 0; i < n; ++i) f(at(i));
      return;
    }
    // Interleaved chunks: neighbouring work items run on different threads, so atomic
    // variants really race on the CPU backend too.
    std::vector<std::thread> pool;
    const int64_t chunk = 64;
    for (int64_t t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int64_t base = t * chunk; base < n; base += threads * chunk)
          for (int64_t i = base; i < std::min(n, base + chunk); ++i) f(at(i));
      });
    }
    for (auto& th : pool) th.join();
  }

  // An empty problem has no buffer: memset(nullptr, 0, 0) is undefined (UBSan).
  void zero(void* p, size_t bytes) const {
    if (bytes) std::memset(p, 0, bytes);
  }

  // Host threads a for_each called from this thread may use (0: one per core). A fuzz campaign
  // verifies several cases at once, each on its own thread, and gives each a share of the cores
  // (fuzz/campaign.hpp says how much) instead of all of them.
  static void limit_threads_of_this_thread(int threads) { thread_limit_ = threads; }

 private:
  // Work items per host thread: small enough that fuzz-sized problems of the atomic variants run
  // on several threads and really race (at 4096, one planted non-atomic add went unseen).
  static constexpr int64_t kMinPerThread = 1024;
  static inline thread_local int thread_limit_ = 0;
  static inline thread_local uint64_t order_ = 0;
};

#if PG_GPU_COMPILER

inline constexpr int kForEachBlock = 256;

template <class Idx, class F>
__device__ __forceinline__ void grid_stride(const F& f, Idx n) {
  // The counter is 64-bit whatever Idx is: with int32 Idx and n within one grid's step of 2^31,
  // `i += step` would overflow past n (undefined; in practice a negative i and a second pass).
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    f(static_cast<Idx>(i));
}

template <class Idx, class F>
__global__ void for_each_kernel(F f, Idx n) {
  grid_stride(f, n);
}

// A separate kernel: launch bounds change the register allocation of every body they touch
// (nvcc 13, sm_90: 117 of 352 for_each kernels, and 33 spill instead of 7), so only bodies
// timed with them get them.
template <class Idx, int kMinBlocksPerSm, class F>
__global__ void PG_LAUNCH_BOUNDS(kForEachBlock, kMinBlocksPerSm) for_each_bounded_kernel(F f, Idx n) {
  grid_stride(f, n);
}

struct GpuExec {
  static constexpr bool is_gpu = true;
  hipStream_t stream = 0;

  // The executor of a launch on a backend whose stream is `stream` (Backend::gpu_stream()).
  static GpuExec on_stream(void* stream) { return GpuExec{static_cast<hipStream_t>(stream)}; }

  // Idx = int32_t is faster address arithmetic; the caller picks it only when n and every
  // offset the body computes fit (see fits_int32 in kernels/common/pool_geometry.hpp).
  template <class Idx = int64_t, int kMinBlocksPerSm = kNoLaunchBounds, class F>
  void for_each(int64_t n, const F& f) const {
    if (n <= 0) return;
    constexpr int64_t block = kForEachBlock;
    const int64_t blocks = std::min<int64_t>((n + block - 1) / block, int64_t{1} << 20);
    if constexpr (kMinBlocksPerSm == kNoLaunchBounds) {
      for_each_kernel<Idx, F><<<static_cast<unsigned>(blocks), block, 0, stream>>>(f, static_cast<Idx>(n));
      PG_LAUNCH_CHECK("for_each_kernel");
    } else {
      for_each_bounded_kernel<Idx, kMinBlocksPerSm, F><<<static_cast<unsigned>(blocks), block, 0, stream>>>(f, static_cast<Idx>(n));
      PG_LAUNCH_CHECK("for_each_bounded_kernel");
    }
  }

  void zero(void* p, size_t bytes) const { PG_HIP_CHECK(hipMemsetAsync(p, 0, bytes, stream)); }
};

#endif

}  // namespace pg
