#include "fuzz/campaign.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "kernels/common/exec.hpp"
#include "src/harness/case_phases.hpp"

namespace pg::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// One target on one backend: what jobs pick, and its counts.
struct Lane {
  const Target* target = nullptr;
  std::string backend;  // "cpu", "gpu0", ...
  int device = -1;      // -1: the CPU backend
  uint64_t key = 0;     // seeds its cases: the hash of "variant/backend"
  std::atomic<int64_t> claimed{0}, cases{0}, discarded{0};
  std::atomic<int64_t> busy_ns{0};
  // busy_ns plus an estimate for the cases in flight: what lane picking compares, so jobs
  // starting at once spread over the lanes instead of piling onto the first.
  std::atomic<int64_t> charged_ns{0};
  std::atomic<bool> done{false};
  // Cases the drawer thread drew ahead, (k, case), and draws of this lane in progress there.
  std::mutex ready_m;
  std::deque<std::pair<int64_t, std::unique_ptr<DrawnCase>>> ready;
  std::atomic<int> drawing{0};
  std::mutex m;  // guards tags and failures
  std::map<std::string, int64_t> tags;
  std::vector<FailureRecord> failures;
  PhaseTimes phases;  // guarded by m

  std::string name() const { return target->variant() + "/" + backend; }
};

std::string case_file_name(const Lane& l, const std::string& signature) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(signature)));
  std::string name = l.target->variant() + "-" + l.backend + "-" + hex;
  for (char& ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_')) ch = '_';
  return name + ".json";
}

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& o) : o_(o) {
    for (const auto& t : o.targets) {
      if (t->backend_kind() == BackendKind::cpu) add_lane(*t, "cpu", -1);
      else
        for (int d : o.gpu_devices) add_lane(*t, "gpu" + std::to_string(d), d);
    }
  }

  CampaignReport run() {
    const Clock::time_point start = start_ = Clock::now();
    const int jobs = std::max(1, o_.jobs);
    const int executor_threads = std::max(2, static_cast<int>(std::thread::hardware_concurrency()) / jobs);
    std::vector<std::thread> workers;
    for (int j = 0; j < jobs; ++j)
      workers.emplace_back([this, j, executor_threads] { work(j, executor_threads); });
    std::thread drawer([this] { draw_ahead(); });
    Clock::time_point next_status = start + to_duration(o_.status_every_s);
    {
      std::unique_lock<std::mutex> lock(m_);
      while (finished_jobs_ < jobs) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        const Clock::time_point now = Clock::now();
        if ((o_.stop && o_.stop->load()) || (o_.seconds > 0 && now - start >= to_duration(o_.seconds)))
          stopping_.store(true);
        if (now >= next_status) {
          lock.unlock();
          say(status_line(seconds_since(start)));
          lock.lock();
          next_status = now + to_duration(o_.status_every_s);
        }
      }
    }
    for (auto& w : workers) w.join();
    drawer_stop_.store(true);
    drawer.join();
    if (error_) std::rethrow_exception(error_);
    return report(seconds_since(start), jobs);
  }

 private:
  static Clock::duration to_duration(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  void add_lane(const Target& t, const std::string& backend, int device) {
    auto l = std::make_unique<Lane>();
    l->target = &t;
    l->backend = backend;
    l->device = device;
    l->key = fnv1a(l->name());
    lanes_.push_back(std::move(l));
  }

  // The least-served open lane this job can run (its device, or the CPU); nullptr when none is left.
  Lane* pick(int device) {
    Lane* best = nullptr;
    for (const auto& l : lanes_) {
      if (l->done.load() || (l->device >= 0 && l->device != device)) continue;
      if (!best || l->charged_ns.load() < best->charged_ns.load()) best = l.get();
    }
    return best;
  }

  // The random source of case k of lane l.
  rc::Random case_random(const Lane& l, int64_t k) const {
    const uint64_t index = static_cast<uint64_t>(k) * o_.shard_count + o_.shard;
    return rc::Random(splitmix64(o_.seed ^ splitmix64(l.key ^ splitmix64(index))));
  }

  // The drawer thread: RapidCheck's generators run under one process-wide lock, which 16 jobs
  // drawing their own cases made the campaign's bottleneck (36% of a GPU job's time waiting for
  // it, H100, 2026-11-25). Here one thread draws for every lane, keeping each lane's queue
  // kReadyDepth deep, the emptiest first; a job whose lane's queue is empty draws for itself.
  // Case k is the same case whoever draws it.
  static constexpr size_t kReadyDepth = 32;
  void draw_ahead() {
    try {
      while (!drawer_stop_.load() && !stopping_.load()) {
        Lane* emptiest = nullptr;
        size_t fewest = kReadyDepth;
        for (const auto& l : lanes_) {
          if (l->done.load() || (o_.cases > 0 && l->claimed.load() >= o_.cases)) continue;
          std::lock_guard<std::mutex> lock(l->ready_m);
          if (l->ready.size() < fewest) {
            fewest = l->ready.size();
            emptiest = l.get();
          }
        }
        if (!emptiest) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          continue;
        }
        Lane& l = *emptiest;
        ++l.drawing;
        const int64_t k = l.claimed.fetch_add(1);
        if (o_.cases > 0 && k >= o_.cases) {
          --l.drawing;
          continue;
        }
        const PhaseTimes before = thread_phase_times();
        std::unique_ptr<DrawnCase> c = l.target->draw(case_random(l, k));
        charge(l, thread_phase_times() - before);
        {
          std::lock_guard<std::mutex> lock(l.ready_m);
          l.ready.emplace_back(k, std::move(c));
        }
        --l.drawing;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
      stopping_.store(true);
    }
  }

  // Thread time spent on a lane (a job's case, or the drawer's draw of one), busy, charged and
  // profiled. Every moment of a thread's time is in some phase, so the phases add up to it.
  void charge(Lane& l, const PhaseTimes& spent) {
    int64_t ns = 0;
    for (const int64_t t : spent.ns) ns += t;
    l.busy_ns += ns;
    l.charged_ns += ns;
    std::lock_guard<std::mutex> lock(l.m);
    l.phases += spent;
  }

  // The next case of lane l for a job: one the drawer drew, else a fresh claim drawn here; none
  // when the lane has run its --cases (it is then done, once no draw of it is in flight).
  std::optional<std::pair<int64_t, std::unique_ptr<DrawnCase>>> next_case(Lane& l) {
    {
      std::lock_guard<std::mutex> lock(l.ready_m);
      if (!l.ready.empty()) {
        auto c = std::move(l.ready.front());
        l.ready.pop_front();
        return c;
      }
    }
    const int64_t k = l.claimed.fetch_add(1);
    if (o_.cases > 0 && k >= o_.cases) {
      std::lock_guard<std::mutex> lock(l.ready_m);
      if (l.ready.empty() && l.drawing.load() == 0) l.done.store(true);
      return std::nullopt;
    }
    return std::make_pair(k, l.target->draw(case_random(l, k)));
  }

  void work(int job, int executor_threads) {
    try {
      CpuExec::limit_threads_of_this_thread(executor_threads);
      const bool gpu_lanes = std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->device >= 0; });
      const int device = gpu_lanes ? o_.gpu_devices[job % o_.gpu_devices.size()] : -1;
      const std::unique_ptr<Backend> cpu = make_cpu_backend();
      const std::unique_ptr<Backend> gpu = device >= 0 ? make_gpu_backend(device) : nullptr;
      while (!stopping_.load()) {
        Lane* l = pick(device);
        if (!l) break;
        run_case(*l, l->device >= 0 ? *gpu : *cpu);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
      stopping_.store(true);
    }
    std::lock_guard<std::mutex> lock(m_);
    ++finished_jobs_;
    cv_.notify_all();
  }

  void run_case(Lane& l, Backend& b) {
    const int64_t cases = l.cases.load();
    const int64_t estimate = cases > 0 ? l.busy_ns.load() / cases : 1000000;
    l.charged_ns += estimate;
    const PhaseTimes phases_before = thread_phase_times();
    auto next = next_case(l);
    if (next) {
      const auto& [k, drawn] = *next;
      Trial t = l.target->run(*drawn, b);
      if (t.verdict == Trial::Verdict::discard) ++l.discarded;
      else ++l.cases;
      if (t.verdict == Trial::Verdict::pass) {
        std::lock_guard<std::mutex> lock(l.m);
        for (const std::string& tag : t.tags) ++l.tags[tag];
      }
      if (t.verdict == Trial::Verdict::fail) on_failure(l, case_random(l, k), b, std::move(t));
    }
    charge(l, thread_phase_times() - phases_before);
    l.charged_ns -= estimate;
  }

  void on_failure(Lane& l, const rc::Random& random, Backend& b, Trial t) {
    {
      std::lock_guard<std::mutex> lock(l.m);
      for (FailureRecord& f : l.failures)
        if (f.signature == t.signature) {
          ++f.count;
          return;
        }
      l.failures.push_back({t.signature, "", "", 1, seconds_since(start_)});
    }
    failures_.fetch_add(1);
    if (t.backend_lost) {
      // A sticky GPU error: every later launch on the device fails, and so would shrinking.
      for (const auto& other : lanes_)
        if (other->device == l.device) other->done.store(true);
      say(l.backend + " failed at the runtime level: its lanes stop, the rest of the campaign goes on");
    }
    Trial small = t.backend_lost ? t : l.target->shrink(random, b, t.signature, o_.max_shrink_runs, stopping_);
    if (small.verdict != Trial::Verdict::fail || small.signature != t.signature) small = std::move(t);
    std::error_code ec;
    std::filesystem::create_directories(o_.corpus_dir, ec);
    const std::string path = (std::filesystem::path(o_.corpus_dir) / case_file_name(l, small.signature)).string();
    std::ofstream(path) << small.case_file.dump(2) << "\n";
    {
      std::lock_guard<std::mutex> lock(l.m);
      for (FailureRecord& f : l.failures)
        if (f.signature == small.signature) {
          f.case_file = path;
          f.problem = small.case_file.value("problem", "");
        }
    }
    say(small.message + "\n  case file: " + path);
  }

  // The status callback, one call at a time: jobs report failures while the main thread reports status.
  void say(const std::string& text) {
    if (!o_.status) return;
    std::lock_guard<std::mutex> lock(status_mutex_);
    o_.status(text);
  }

  std::string status_line(double elapsed) {
    int64_t cases = 0;
    const Lane* busiest = nullptr;
    const Lane* slowest = nullptr;
    double slowest_ms = 0;
    for (const auto& l : lanes_) {
      const int64_t n = l->cases.load();
      cases += n;
      if (!busiest || l->busy_ns.load() > busiest->busy_ns.load()) busiest = l.get();
      const double ms = n > 0 ? l->busy_ns.load() / 1e6 / n : 0;
      if (ms > slowest_ms) {
        slowest_ms = ms;
        slowest = l.get();
      }
    }
    char line[512];
    std::snprintf(line, sizeof line, "[%6.0fs] %lld cases, %.0f/s, %lld failures", elapsed,
                  static_cast<long long>(cases), elapsed > 0 ? cases / elapsed : 0.0,
                  static_cast<long long>(failures_.load()));
    std::string s = line;
    if (busiest) s += ", busiest " + busiest->name();
    if (slowest) {
      std::snprintf(line, sizeof line, ", slowest %s %.2f ms/case", slowest->name().c_str(), slowest_ms);
      s += line;
    }
    return s;
  }

  CampaignReport report(double elapsed, int jobs) {
    CampaignReport r;
    r.seed = o_.seed;
    r.shard_count = o_.shard_count;
    r.shards = {o_.shard};
    r.jobs = jobs;
    r.elapsed_s = elapsed;
    r.interrupted = o_.stop && o_.stop->load();
    for (const auto& l : lanes_) {
      LaneReport lr;
      lr.variant = l->target->variant();
      lr.backend = l->backend;
      lr.cases = l->cases.load();
      lr.discarded = l->discarded.load();
      lr.busy_s = l->busy_ns.load() / 1e9;
      lr.tags = l->tags;
      for (int p = 0; p < kPhaseCount; ++p)
        if (l->phases.ns[p]) lr.phase_s[phase_name(static_cast<Phase>(p))] = l->phases.ns[p] / 1e9;
      lr.admitted = l->target->admitted_tags();
      lr.failures = l->failures;
      r.lanes.push_back(std::move(lr));
    }
    return r;
  }

  const CampaignOptions& o_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  Clock::time_point start_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> drawer_stop_{false};
  std::atomic<int64_t> failures_{0};
  std::mutex m_, status_mutex_;
  std::condition_variable cv_;
  int finished_jobs_ = 0;
  std::exception_ptr error_;
};

}  // namespace

CampaignReport run_campaign(const CampaignOptions& o) {
  if (o.seconds <= 0 && o.cases <= 0) throw Error("run_campaign: set a time limit or a case limit");
  if (o.shard < 0 || o.shard >= o.shard_count) throw Error("run_campaign: shard outside 0..shard_count-1");
  return Campaign(o).run();
}

}  // namespace pg::fuzz
