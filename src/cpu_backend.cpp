#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "src/backend.hpp"

namespace pg {
namespace {

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::cpu; }
  std::string name() const override { return "cpu"; }
  DeviceInfo info() const override {
    DeviceInfo d;
    d.name = "CPU backend (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
    d.arch = "cpu";
    d.wave_size = 1;
    d.multiprocessors = static_cast<int>(std::thread::hardware_concurrency());
    return d;
  }
  void* alloc(size_t bytes) override {
    // 64-byte alignment, as a GPU allocation is at least that aligned: vector paths see the same.
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw Error("cpu backend: out of host memory allocating " + std::to_string(bytes) + " bytes");
    return p;
  }
  void release(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize() override {}
  void timer_start() override { start_ = std::chrono::steady_clock::now(); }
  double timer_stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

std::vector<std::unique_ptr<Backend>> all_backends() {
  std::vector<std::unique_ptr<Backend>> out;
  out.push_back(make_cpu_backend());
  std::string why;
  const int n = gpu_count(&why);
  for (int i = 0; i < n; ++i) out.push_back(make_gpu_backend(i));
  return out;
}

}  // namespace pg
