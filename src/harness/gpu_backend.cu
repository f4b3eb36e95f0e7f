// The GPU backend, one source for both vendors: nvcc compiles it against CUDA through
// hip_compat.hpp, hipcc (-x hip) against the HIP runtime.
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/model/backend.hpp"
#include "kernels/common/gpu_check.hpp"

namespace pg {
namespace {

// Released allocations kept for reuse, up to this many bytes: a fuzz case allocates and frees a
// few buffers, and hipFree waits for the whole device, so freeing each case's buffers serializes
// every host thread feeding the GPU. Every byte of a buffer is uploaded or poisoned before a run
// reads it, so a reused one holds nothing a case could depend on.
constexpr size_t kReuseBytes = size_t{1} << 30;

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(int device) : device_(device) {
    PG_HIP_CHECK(hipSetDevice(device_));
    PG_HIP_CHECK(hipEventCreate(&start_));
    PG_HIP_CHECK(hipEventCreate(&stop_));
  }
  ~GpuBackend() override {
    for (const auto& [bytes, p] : spare_) static_cast<void>(hipFree(p));  // as release(): never throws
    hipEventDestroy(start_);
    hipEventDestroy(stop_);
  }
  BackendKind kind() const override { return BackendKind::gpu; }
  std::string name() const override { return "gpu" + std::to_string(device_); }
  DeviceInfo info() const override {
    hipDeviceProp_t prop;
    PG_HIP_CHECK(hipGetDeviceProperties(&prop, device_));
    DeviceInfo d;
    d.name = prop.name;
#if defined(__HIP__)
    d.arch = prop.gcnArchName;
#else
    d.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#endif
    d.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    d.wave_size = prop.warpSize;
    d.multiprocessors = prop.multiProcessorCount;
    d.l2_bytes = prop.l2CacheSize;
    return d;
  }
  void* alloc(size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto spare = spare_.find(bytes);
      if (spare != spare_.end()) {
        void* p = spare->second;
        spare_.erase(spare);
        spare_bytes_ -= bytes;
        sizes_[p] = bytes;
        return p;
      }
    }
    void* p = nullptr;
    PG_HIP_CHECK(hipMalloc(&p, bytes));
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = bytes;
    return p;
  }
  // Called from Buffer's destructor, so it must not throw: after an illegal access the context
  // is dead and every hipFree fails, and a throw here would terminate before the harness has
  // reported the failing case.
  void release(void* p) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = sizes_.find(p);
      if (it != sizes_.end()) {
        const size_t bytes = it->second;
        sizes_.erase(it);
        if (spare_bytes_ + bytes <= kReuseBytes) {
          spare_.emplace(bytes, p);
          spare_bytes_ += bytes;
          return;
        }
      }
    }
    const hipError_t e = hipFree(p);
    if (e != hipSuccess) std::fprintf(stderr, "gpu backend: hipFree: %s\n", hipGetErrorString(e));
  }
  void upload(void* dst, const void* src, size_t bytes) override {
    PG_HIP_CHECK(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice));
  }
  void download(void* dst, const void* src, size_t bytes) override {
    PG_HIP_CHECK(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost));
  }
  void copy(void* dst, const void* src, size_t bytes) override {
    PG_HIP_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, 0));
  }
  void synchronize() override { PG_HIP_CHECK(hipDeviceSynchronize()); }
  void timer_start() override { PG_HIP_CHECK(hipEventRecord(start_, 0)); }
  double timer_stop_ms() override {
    PG_HIP_CHECK(hipEventRecord(stop_, 0));
    PG_HIP_CHECK(hipEventSynchronize(stop_));
    float ms = 0;
    PG_HIP_CHECK(hipEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  int device_;
  hipEvent_t start_{}, stop_{};
  std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;        // live allocations
  std::unordered_multimap<size_t, void*> spare_;   // released ones by size
  size_t spare_bytes_ = 0;
};

}  // namespace

int gpu_count(std::string* why_none) {
  int n = 0;
  const hipError_t e = hipGetDeviceCount(&n);
  if (e != hipSuccess) {
    if (why_none) *why_none = std::string("no usable GPU: ") + hipGetErrorString(e);
    hipGetLastError();  // clear the sticky error so later calls see a clean state
    return 0;
  }
  if (n == 0 && why_none) *why_none = "no GPU device found";
  return n;
}

std::unique_ptr<Backend> make_gpu_backend(int device) { return std::make_unique<GpuBackend>(device); }

#if defined(__HIP__)
const char* gpu_runtime_name() { return "HIP"; }
#else
const char* gpu_runtime_name() { return "CUDA"; }
#endif

}  // namespace pg
