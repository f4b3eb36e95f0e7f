// Where a variant runs: the CPU backend (every variant's per-work-item body over the index
// space, multi-threaded) or one GPU. Memory moves through this interface only, so the harness
// is the same code for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pg {

// Every runtime failure becomes one of these, carrying file:line and the runtime's message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class BackendKind { cpu, gpu };

// A stretch of backend memory that should hold `pattern` (its low `pattern_bytes` bytes, 1, 2, 4
// or 8, in memory order) repeated from `at` on: a sentinel band, or poison.
struct PatternRange {
  void* at = nullptr;
  size_t bytes = 0;
  uint64_t pattern = 0;
  int pattern_bytes = 1;
};
// Where a range differs from its pattern: the first and the last differing byte's offset from
// the range's start; -1 and -1 when it does not.
struct PatternBreak {
  int64_t first = -1, last = -1;
};
// A download into host memory.
struct Read {
  void* host_dst = nullptr;
  const void* device_src = nullptr;
  size_t bytes = 0;
};

struct DeviceInfo {
  std::string name;
  std::string arch;  // "cpu", "sm_90", "gfx90a"
  int64_t memory_bytes = 0;
  int wave_size = 1;
  int multiprocessors = 0;
  int64_t l2_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string name() const = 0;  // "cpu", "gpu0"
  virtual DeviceInfo info() const = 0;
  virtual void* alloc(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  // Enqueued after the work before it; host_src may be reused as soon as it returns.
  virtual void upload(void* device_dst, const void* host_src, size_t bytes) = 0;
  // Waits for the work before it.
  virtual void download(void* host_dst, const void* device_src, size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;  // device to device, async
  // Each range filled with its pattern, enqueued (poison and sentinel bands written on the
  // device instead of uploaded: a fuzz case's bands are a megabyte, its payload a few KB).
  virtual void fill(const std::vector<PatternRange>& ranges) = 0;
  // Enqueues, after the work before it, the download of each of `reads` and the search for where
  // each of `bands` breaks its pattern, without waiting: each read's host_dst and *breaks (one
  // result per band, in order) hold the results once collect() returns, and until then the
  // host_dst memory and *breaks must stay where they are. Several may be queued, so a fuzz batch
  // waits once for many cases (on the CPU backend it all happens at once).
  virtual void read_back_later(const std::vector<Read>& reads, const std::vector<PatternRange>& bands,
                               std::vector<PatternBreak>* breaks) = 0;
  // Waits for this backend's work once and completes every read_back_later() queued before it.
  // A runtime error found by the wait is thrown; the read backs it interrupted hold nothing.
  virtual void collect() = 0;
  // read_back_later() and collect(): the reads done, the breaks returned.
  std::vector<PatternBreak> read_back(const std::vector<Read>& reads, const std::vector<PatternRange>& bands) {
    std::vector<PatternBreak> breaks;
    read_back_later(reads, bands, &breaks);
    collect();
    return breaks;
  }
  virtual void synchronize() = 0;  // waits for this backend's work (on a GPU: its own stream)
  // Timer around enqueued work: GPU events on a GPU, the wall clock on the CPU.
  virtual void timer_start() = 0;
  virtual double timer_stop_ms() = 0;  // waits for the work
  // The stream a variant's launch on this backend enqueues on (a GPU backend's own, one per
  // backend object: a fuzz campaign's jobs each have theirs); nullptr: the device's default one.
  virtual void* gpu_stream() { return nullptr; }
};

// fill() and read_back_later() over memory the host can address (the CPU backend).
void fill_host(const std::vector<PatternRange>& ranges);
std::vector<PatternBreak> pattern_breaks_host(const std::vector<PatternRange>& bands);

// Device memory owned by one backend; freed when it goes out of scope.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& b, size_t bytes) : backend_(&b), bytes_(bytes), ptr_(bytes ? b.alloc(bytes) : nullptr) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(bytes_, o.bytes_);
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  ~Buffer() {
    if (ptr_) backend_->release(ptr_);
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  Backend* backend_ = nullptr;
  size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

std::unique_ptr<Backend> make_cpu_backend();

// GPUs the build can drive (none when built with -Dgpu=none). `why_none` says why the list is
// empty: no GPU backend built, no device found, or the runtime's error.
int gpu_count(std::string* why_none);
std::unique_ptr<Backend> make_gpu_backend(int device);
const char* gpu_runtime_name();  // "CUDA", "HIP" or "none"

// The CPU backend followed by every GPU found.
std::vector<std::unique_ptr<Backend>> all_backends();

// The backend named `name` ("cpu", "gpu0", ...). InvalidInput (src/model/invalid_input.hpp) for a name
// of another form, CannotRun (src/model/run_errors.hpp) when this machine has no such backend.
std::unique_ptr<Backend> backend_by_name(const std::string& name);

}  // namespace pg
