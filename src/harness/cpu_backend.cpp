#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "src/model/invalid_input.hpp"
#include "src/model/run_errors.hpp"
#include "src/model/backend.hpp"

namespace pg {
namespace {

// Inaccessible address space on each side of every allocation. The harness's sentinel bands
// catch a write near a buffer; one beyond them lands here and faults (the harness reports the
// fault with the case's replay line) instead of corrupting the heap. Reserved, never backed by
// memory, so its size costs only address space.
constexpr size_t kGuardBytes = size_t{64} << 20;
// As a GPU allocation is at least this aligned: vector paths see the same on the CPU.
constexpr size_t kAlign = 64;
// Released mappings kept for reuse, up to this many bytes of pages: a fuzz campaign allocates and
// frees a few buffers per case, and fresh pages cost a mapping, a fault per page and an unmap
// each time (page faults alone were 10% of a CPU campaign's time). A reused mapping keeps its
// guards; every byte of a buffer is uploaded or poisoned before a run reads it.
constexpr size_t kReuseBytes = size_t{256} << 20;
// and at most this many: each is three kernel mappings (guard, pages, guard), a process may hold
// 65,530 (Linux's default vm.max_map_count), and a campaign has a CPU backend per job.
constexpr size_t kReuseMappings = 256;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

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
  ~CpuBackend() override {
    for (const auto& [usable, m] : spare_) munmap(m.base, m.bytes);
  }
  // Each buffer its own mapping: guard | pages | guard, the buffer flush against the end of its
  // pages (up to the alignment), so a write past its end meets the guard at once.
  void* alloc(size_t bytes) override {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t usable = round_up(std::max<size_t>(bytes, 1), page);
    const size_t total = kGuardBytes + usable + kGuardBytes;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto spare = spare_.find(usable);
      if (spare != spare_.end()) {
        const Mapping m = spare->second;
        spare_.erase(spare);
        spare_bytes_ -= usable;
        void* p = static_cast<unsigned char*>(m.base) + kGuardBytes + (usable - round_up(bytes, kAlign));
        mappings_[p] = m;
        return p;
      }
    }
    void* base = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
      throw Error("cpu backend: cannot reserve " + std::to_string(total) + " bytes: " + std::strerror(errno));
    unsigned char* pages = static_cast<unsigned char*>(base) + kGuardBytes;
    if (mprotect(pages, usable, PROT_READ | PROT_WRITE) != 0) {
      const int err = errno;
      munmap(base, total);
      throw Error("cpu backend: out of host memory allocating " + std::to_string(bytes) + " bytes: " + std::strerror(err));
    }
    void* p = pages + (usable - round_up(bytes, kAlign));
    std::lock_guard<std::mutex> lock(mutex_);
    mappings_[p] = {base, total};
    return p;
  }
  void release(void* p) override {
    Mapping m;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = mappings_.find(p);
      if (it == mappings_.end()) return;
      m = it->second;
      mappings_.erase(it);
      const size_t usable = m.bytes - 2 * kGuardBytes;
      if (spare_bytes_ + usable <= kReuseBytes && spare_.size() < kReuseMappings) {
        spare_.emplace(usable, m);
        spare_bytes_ += usable;
        return;
      }
    }
    munmap(m.base, m.bytes);
  }
  // An empty transfer's pointers may be null, which memcpy must not get.
  void upload(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void download(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill(const std::vector<PatternRange>& ranges) override { fill_host(ranges); }
  // Every run here is over when its launch returns: the reads happen now, collect() has nothing to wait for.
  void read_back_later(const std::vector<Read>& reads, const std::vector<PatternRange>& bands,
                       std::vector<PatternBreak>* breaks) override {
    for (const Read& r : reads)
      if (r.bytes) std::memcpy(r.host_dst, r.device_src, r.bytes);  // an empty one's host_dst may be null
    *breaks = pattern_breaks_host(bands);
  }
  void collect() override {}
  void synchronize() override {}
  void timer_start() override { start_ = std::chrono::steady_clock::now(); }
  double timer_stop_ms() override {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  struct Mapping {
    void* base = nullptr;
    size_t bytes = 0;
  };
  std::mutex mutex_;
  std::unordered_map<void*, Mapping> mappings_;
  std::unordered_multimap<size_t, Mapping> spare_;  // released mappings by usable size
  size_t spare_bytes_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

std::unique_ptr<Backend> backend_by_name(const std::string& name) {
  if (name != "cpu" && (name.rfind("gpu", 0) != 0 || name.size() == 3 ||
                        name.find_first_not_of("0123456789", 3) != std::string::npos))
    throw InvalidInput("--backend '" + name + "' must be cpu or gpuN");
  for (auto& b : all_backends())
    if (b->name() == name) return std::move(b);
  std::string why;
  gpu_count(&why);
  throw CannotRun("--backend '" + name + "' is not available (" + why + ")");
}

std::vector<std::unique_ptr<Backend>> all_backends() {
  std::vector<std::unique_ptr<Backend>> out;
  out.push_back(make_cpu_backend());
  std::string why;
  const int n = gpu_count(&why);
  for (int i = 0; i < n; ++i) out.push_back(make_gpu_backend(i));
  return out;
}

}  // namespace pg
