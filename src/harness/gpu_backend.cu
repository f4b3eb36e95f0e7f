// The GPU backend, one source for both vendors: nvcc compiles it against CUDA through
// hip_compat.hpp, hipcc (-x hip) against the HIP runtime.
//
// Every backend object has its own stream, so the jobs of a fuzz campaign (one backend each)
// feed the device side by side: nothing here waits for the whole device. The stream is a
// blocking one: work a plugin enqueues on the device's default stream (plugins' launch_gpu) is
// still ordered with it; cuDNN is handed this stream (cudnn_pool.cpp). Uploads go through pinned staging
// and return at once; sentinel bands and poison are written and checked by kernels on the
// device (fill, read_back) instead of crossing the bus.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "src/model/backend.hpp"
#include "src/harness/graph_replay.hpp"
#include "kernels/common/gpu_check.hpp"

namespace pg {
namespace {

// Released allocations kept for reuse, up to this many bytes: hipMalloc and hipFree are slow and
// hipFree waits for the whole device. Allocations are rounded up to size classes (a quarter of a
// power of two apart) so that a fuzz campaign's cases, each of a different size, reuse them. Every
// byte of a buffer is uploaded or filled before a run reads it, so a reused one holds nothing a
// case could depend on.
constexpr size_t kReuseBytes = size_t{1} << 30;
constexpr size_t kMinClass = size_t{64} << 10;

size_t size_class(size_t bytes) {
  if (bytes <= kMinClass) return kMinClass;
  size_t power = kMinClass;
  while (power * 2 < bytes) power *= 2;  // power < bytes <= 2 * power
  const size_t quarter = power / 4;
  return power + (bytes - power + quarter - 1) / quarter * quarter;
}

// Pinned host memory for uploads and downloads: grown to what a transfer needs, up to this; a
// larger transfer (a benchmark's full-size tensor) goes straight from pageable memory.
constexpr size_t kMaxStaging = size_t{64} << 20;
constexpr size_t kStagingAlign = 256;

// Ranges per fill or check launch (kernel arguments by value); more take several launches.
constexpr int kRangesPerLaunch = 16;
// Band checks queued before a wait: a fuzz batch's cases check about 8 bands each.
constexpr size_t kBreakSlots = 4096;
struct RangeArgs {
  unsigned char* at[kRangesPerLaunch];
  unsigned long long bytes[kRangesPerLaunch];
  unsigned long long pattern[kRangesPerLaunch];
  int pattern_bytes[kRangesPerLaunch];
};

__device__ __forceinline__ unsigned char pattern_byte(const RangeArgs& a, int r, unsigned long long i) {
  return static_cast<unsigned char>(a.pattern[r] >> (8 * (i % static_cast<unsigned long long>(a.pattern_bytes[r]))));
}

__global__ void fill_kernel(RangeArgs a) {
  const int r = blockIdx.y;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.bytes[r];
       i += step)
    a.at[r][i] = pattern_byte(a, r, i);
}

// out[2r] = max of ~offset over the breaks (so ~out[2r] is the first; 0: none), out[2r+1] = max of
// offset + 1 (the last + 1; 0: none): both start at zero, one memset.
__global__ void breaks_kernel(RangeArgs a, unsigned long long* out) {
  const int r = blockIdx.y;
  const unsigned long long step = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long first = ~0ull, last = 0;  // this thread's, to keep atomics to one pair
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.bytes[r];
       i += step)
    if (a.at[r][i] != pattern_byte(a, r, i)) {
      first = first < i ? first : i;
      last = i + 1;
    }
  if (last) {
    atomicMax(&out[2 * r], ~first);
    atomicMax(&out[2 * r + 1], last);
  }
}

constexpr int kRangeThreads = 256;

unsigned range_blocks(const std::vector<PatternRange>& ranges, size_t begin, size_t end) {
  size_t most = 0;
  for (size_t i = begin; i < end; ++i) most = std::max(most, ranges[i].bytes);
  return static_cast<unsigned>(std::clamp<size_t>((most + kRangeThreads * 4 - 1) / (kRangeThreads * 4), 1, 1024));
}

RangeArgs range_args(const std::vector<PatternRange>& ranges, size_t begin, size_t end) {
  RangeArgs a{};
  for (size_t i = begin; i < end; ++i) {
    const PatternRange& r = ranges[i];
    if (r.pattern_bytes != 1 && r.pattern_bytes != 2 && r.pattern_bytes != 4 && r.pattern_bytes != 8)
      throw Error("gpu backend: a pattern of " + std::to_string(r.pattern_bytes) + " bytes (1, 2, 4 or 8)");
    a.at[i - begin] = static_cast<unsigned char*>(r.at);
    a.bytes[i - begin] = r.bytes;
    a.pattern[i - begin] = r.pattern;
    a.pattern_bytes[i - begin] = r.pattern_bytes;
  }
  return a;
}

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(int device) : device_(device) {
    PG_HIP_CHECK(hipSetDevice(device_));
    PG_HIP_CHECK(hipStreamCreate(&stream_));
    PG_HIP_CHECK(hipEventCreate(&start_));
    PG_HIP_CHECK(hipEventCreate(&stop_));
    PG_HIP_CHECK(hipMalloc(&breaks_, 2 * kBreakSlots * sizeof(unsigned long long)));
    PG_HIP_CHECK(hipHostMalloc(reinterpret_cast<void**>(&breaks_host_), 2 * kBreakSlots * sizeof(unsigned long long),
                               hipHostMallocDefault));
  }
  // Never throws (as release()): after an illegal access the context is dead and every call fails.
  ~GpuBackend() override {
    static_cast<void>(hipStreamSynchronize(stream_));
    for (const auto& [bytes, p] : spare_) static_cast<void>(hipFree(p));
    static_cast<void>(hipFree(breaks_));
    static_cast<void>(hipHostFree(breaks_host_));
    if (staging_) static_cast<void>(hipHostFree(staging_));
    static_cast<void>(hipEventDestroy(start_));
    static_cast<void>(hipEventDestroy(stop_));
    static_cast<void>(hipStreamDestroy(stream_));
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
  void* gpu_stream() override { return stream_; }

  void* alloc(size_t bytes) override {
    const size_t cls = size_class(bytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto spare = spare_.find(cls);
      if (spare != spare_.end()) {
        void* p = spare->second;
        spare_.erase(spare);
        spare_bytes_ -= cls;
        sizes_[p] = cls;
        return p;
      }
    }
    void* p = nullptr;
    PG_HIP_CHECK(hipMalloc(&p, cls));
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = cls;
    return p;
  }
  // Called from Buffer's destructor, so it must not throw. A buffer is released while work that
  // uses it may still be queued on the stream: kept for reuse, it is only handed out again to
  // work queued after that (same stream); freed, hipFree waits for the device.
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
    if (bytes == 0) return;
    unsigned char* staged = stage(bytes);
    if (!staged) {  // larger than the staging: from pageable memory, which the copy waits for
      PG_HIP_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyHostToDevice, stream_));
      wait();
      return;
    }
    std::memcpy(staged, src, bytes);
    PG_HIP_CHECK(hipMemcpyAsync(dst, staged, bytes, hipMemcpyHostToDevice, stream_));
  }
  void download(void* dst, const void* src, size_t bytes) override { read_back({{dst, src, bytes}}, {}); }
  void copy(void* dst, const void* src, size_t bytes) override {
    PG_HIP_CHECK(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, stream_));
  }

  void fill(const std::vector<PatternRange>& ranges) override {
    for (size_t begin = 0; begin < ranges.size(); begin += kRangesPerLaunch) {
      const size_t end = std::min(ranges.size(), begin + kRangesPerLaunch);
      fill_kernel<<<dim3(range_blocks(ranges, begin, end), static_cast<unsigned>(end - begin)), kRangeThreads, 0, stream_>>>(
          range_args(ranges, begin, end));
      PG_LAUNCH_CHECK("fill_kernel");
    }
  }

  // Staged reads wait in pinned memory, and band checks' results in pinned slots, until the
  // stream is done; wait() then copies them out.
  void read_back_later(const std::vector<Read>& reads, const std::vector<PatternRange>& bands,
                       std::vector<PatternBreak>* breaks) override {
    for (const Read& r : reads) {
      if (r.bytes == 0) continue;
      unsigned char* at = stage(r.bytes);
      if (at) {
        PG_HIP_CHECK(hipMemcpyAsync(at, r.device_src, r.bytes, hipMemcpyDeviceToHost, stream_));
        staged_reads_.push_back({at, r});
      } else {  // larger than the staging: straight into pageable memory, which the copy waits for
        PG_HIP_CHECK(hipMemcpyAsync(r.host_dst, r.device_src, r.bytes, hipMemcpyDeviceToHost, stream_));
        wait();
      }
    }
    breaks->assign(bands.size(), PatternBreak{});
    for (size_t begin = 0; begin < bands.size(); begin += kRangesPerLaunch) {
      const size_t end = std::min(bands.size(), begin + kRangesPerLaunch);
      const size_t n = end - begin;
      if (break_slots_used_ + n > kBreakSlots) wait();
      unsigned long long* slots = breaks_ + 2 * break_slots_used_;
      PG_HIP_CHECK(hipMemsetAsync(slots, 0, 2 * n * sizeof(unsigned long long), stream_));
      breaks_kernel<<<dim3(range_blocks(bands, begin, end), static_cast<unsigned>(n)), kRangeThreads, 0, stream_>>>(
          range_args(bands, begin, end), slots);
      PG_LAUNCH_CHECK("breaks_kernel");
      PG_HIP_CHECK(hipMemcpyAsync(breaks_host_ + 2 * break_slots_used_, slots, 2 * n * sizeof(unsigned long long),
                                  hipMemcpyDeviceToHost, stream_));
      staged_breaks_.push_back({breaks, begin, break_slots_used_, n});
      break_slots_used_ += n;
    }
  }
  void collect() override { wait(); }

  void synchronize() override { wait(); }
  void timer_start() override { PG_HIP_CHECK(hipEventRecord(start_, stream_)); }
  double timer_stop_ms() override {
    PG_HIP_CHECK(hipEventRecord(stop_, stream_));
    PG_HIP_CHECK(hipEventSynchronize(stop_));
    float ms = 0;
    PG_HIP_CHECK(hipEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  // Waits for the stream and completes the read backs queued before: staged reads copied out,
  // band checks decoded. The staging and the result slots are free again after it, also when the
  // wait fails (a runtime error: the queued read backs then hold nothing).
  void wait() {
    const hipError_t e = hipStreamSynchronize(stream_);
    if (e == hipSuccess) {
      for (const auto& [from, r] : staged_reads_) std::memcpy(r.host_dst, from, r.bytes);
      for (const StagedBreaks& b : staged_breaks_)
        for (size_t i = 0; i < b.count; ++i) {
          const unsigned long long* slot = breaks_host_ + 2 * (b.slot + i);
          if (slot[1]) (*b.out)[b.first + i] = {static_cast<int64_t>(~slot[0]), static_cast<int64_t>(slot[1] - 1)};
        }
    }
    staged_reads_.clear();
    staged_breaks_.clear();
    staging_used_ = 0;
    break_slots_used_ = 0;
    hip_check(e, "hipStreamSynchronize(stream_)", __FILE__, __LINE__);
  }

  // `bytes` of pinned staging that no queued copy uses (waiting for the stream when it is full,
  // growing it when too small); nullptr when bytes is more than kMaxStaging.
  unsigned char* stage(size_t bytes) {
    if (bytes > kMaxStaging) return nullptr;
    if (bytes > staging_capacity_ - staging_used_) {
      wait();
      if (bytes > staging_capacity_) {
        if (staging_) PG_HIP_CHECK(hipHostFree(staging_));
        staging_ = nullptr;
        staging_capacity_ = std::min(kMaxStaging, std::max(bytes, 2 * staging_capacity_ + (size_t{1} << 20)));
        PG_HIP_CHECK(hipHostMalloc(reinterpret_cast<void**>(&staging_), staging_capacity_, hipHostMallocDefault));
      }
    }
    unsigned char* at = staging_ + staging_used_;
    staging_used_ = std::min(staging_capacity_, staging_used_ + (bytes + kStagingAlign - 1) / kStagingAlign * kStagingAlign);
    return at;
  }

  int device_;
  hipStream_t stream_{};
  hipEvent_t start_{}, stop_{};
  // read_back_later's band checks: per band its first and last break, kBreakSlots bands' worth
  unsigned long long* breaks_ = nullptr;       // device
  unsigned long long* breaks_host_ = nullptr;  // pinned
  size_t break_slots_used_ = 0;
  struct StagedBreaks {
    std::vector<PatternBreak>* out;
    size_t first, slot, count;  // (*out)[first..first+count) from slots slot..slot+count
  };
  std::vector<std::pair<const unsigned char*, Read>> staged_reads_;  // queued reads: staging -> host_dst
  std::vector<StagedBreaks> staged_breaks_;
  unsigned char* staging_ = nullptr;           // pinned
  size_t staging_capacity_ = 0, staging_used_ = 0;
  std::mutex mutex_;
  std::unordered_map<void*, size_t> sizes_;        // live allocations, by size class
  std::unordered_multimap<size_t, void*> spare_;   // released ones by size class
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

std::unique_ptr<GraphReplay> GraphReplay::capture(Backend& b, const std::function<void()>& record, std::string* why) {
  if (b.kind() != BackendKind::gpu) {
    *why = "the " + b.name() + " backend has no graphs";
    return nullptr;
  }
  const auto stream = static_cast<hipStream_t>(b.gpu_stream());
  // Relaxed: a launch may still set a kernel attribute or query the device while captured.
  PG_HIP_CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeRelaxed));
  std::string failed;
  try {
    record();
  } catch (const std::exception& e) {
    failed = e.what();
  }
  hipGraph_t graph = nullptr;
  const hipError_t ended = hipStreamEndCapture(stream, &graph);  // ends the capture whatever happened
  if (failed.empty() && ended != hipSuccess) failed = std::string("hipStreamEndCapture: ") + hipGetErrorString(ended);
  hipGraphExec_t exec = nullptr;
  if (failed.empty()) {
    const hipError_t made = hipGraphInstantiateWithFlags(&exec, graph, 0);
    if (made != hipSuccess) failed = std::string("hipGraphInstantiateWithFlags: ") + hipGetErrorString(made);
  }
  if (!failed.empty()) {
    if (graph) static_cast<void>(hipGraphDestroy(graph));
    static_cast<void>(hipGetLastError());  // a refused capture leaves no sticky error; clear the last one
    *why = failed.substr(0, failed.find('\n'));
    return nullptr;
  }
  std::unique_ptr<GraphReplay> r(new GraphReplay);
  r->stream_ = stream;
  r->graph_ = graph;
  r->exec_ = exec;
  return r;
}

GraphReplay::~GraphReplay() {
  static_cast<void>(hipGraphExecDestroy(static_cast<hipGraphExec_t>(exec_)));
  static_cast<void>(hipGraphDestroy(static_cast<hipGraph_t>(graph_)));
}

void GraphReplay::launch() {
  PG_HIP_CHECK(hipGraphLaunch(static_cast<hipGraphExec_t>(exec_), static_cast<hipStream_t>(stream_)));
}

#if defined(__HIP__)
const char* gpu_runtime_name() { return "HIP"; }
#else
const char* gpu_runtime_name() { return "CUDA"; }
#endif

}  // namespace pg
