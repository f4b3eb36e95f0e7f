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
#include <set>
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

struct Group;

// One target on one backend: its counts.
struct Lane {
  const Target* target = nullptr;
  std::string backend;  // "cpu", "gpu0", ...
  int device = -1;      // -1: the CPU backend
  Group* group = nullptr;
  std::atomic<int64_t> cases{0}, discarded{0}, oracles{0}, from_group{0};
  std::atomic<int64_t> busy_ns{0};
  std::atomic<bool> done{false};
  std::mutex m;  // guards tags, failures and phases
  std::map<std::string, int64_t> tags;
  std::vector<FailureRecord> failures;
  PhaseTimes phases;

  std::string name() const { return target->variant() + "/" + backend; }
};

// Lanes on one backend whose targets share cases (Target::shares_cases_with): what jobs pick.
// The group's case k is drawn once, by its members in turn (each member's generator draws every
// n-th case), its oracle answer computed once, and run on every open lane of the group that
// supports it, by the job that took it.
struct Group {
  std::vector<Lane*> lanes;
  int device = -1;   // the lanes' backend: -1 the CPU
  uint64_t key = 0;  // seeds its cases: the hash of the case kind's key and the backend's name
  std::atomic<int64_t> claimed{0}, finished{0};
  std::atomic<int64_t> busy_ns{0};
  // busy_ns plus an estimate for the cases in flight: what group picking compares (per lane), so
  // jobs starting at once spread over the groups instead of piling onto the first.
  std::atomic<int64_t> charged_ns{0};
  std::atomic<bool> done{false};
  // Cases the drawer thread drew ahead, (k, case), and draws of this group in progress there.
  std::mutex ready_m;
  std::deque<std::pair<int64_t, std::unique_ptr<DrawnCase>>> ready;
  std::atomic<int> drawing{0};

  bool open() const {
    return !done.load() && std::any_of(lanes.begin(), lanes.end(), [](const Lane* l) { return !l->done.load(); });
  }
};

using DrawnCases = std::vector<std::pair<int64_t, std::unique_ptr<DrawnCase>>>;

// `k`: the case's index, for a case saved unshrunk beside others of its signature (a batch that
// broke its device); -1: none.
std::string case_file_name(const Lane& l, const std::string& signature, int64_t k) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(signature)));
  std::string name = l.target->variant() + "-" + l.backend + "-" + hex;
  if (k >= 0) name += "-case" + std::to_string(k);
  for (char& ch : name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_')) ch = '_';
  return name + ".json";
}

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& o) : o_(o), batch_(std::max(1, o.batch)) {
    // CPU lanes join the groups of the first GPU's lanes when GPU lanes run (a case drawn once,
    // answered once, runs on both backends); jobs driving the first GPU run them.
    const bool gpu_lanes = !o.gpu_devices.empty() && std::any_of(o.targets.begin(), o.targets.end(), [](const auto& t) {
      return t->backend_kind() == BackendKind::gpu;
    });
    const int cpu_slot = gpu_lanes ? o.gpu_devices[0] : -1;
    for (const auto& t : o.targets) {
      if (t->backend_kind() == BackendKind::cpu) add_lane(*t, "cpu", -1, cpu_slot);
      else
        for (int d : o.gpu_devices) add_lane(*t, "gpu" + std::to_string(d), d, d);
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

  // A lane on `device` (-1: the CPU), in the group of slot `slot`'s lanes it shares cases with (a
  // new group if none does).
  void add_lane(const Target& t, const std::string& backend, int device, int slot) {
    auto l = std::make_unique<Lane>();
    l->target = &t;
    l->backend = backend;
    l->device = device;
    for (const auto& g : groups_)
      if (g->device == slot && g->lanes[0]->target->shares_cases_with(t)) l->group = g.get();
    if (!l->group) {
      auto g = std::make_unique<Group>();
      g->device = slot;
      g->key = fnv1a(t.case_key() + "/" + (slot >= 0 ? "gpu" + std::to_string(slot) : std::string("cpu")));
      l->group = g.get();
      groups_.push_back(std::move(g));
    }
    l->group->lanes.push_back(l.get());
    lanes_.push_back(std::move(l));
  }

  // The open group this job can run (its device, or the CPU) whose lanes have had the least time
  // each; nullptr when none is left.
  Group* pick(int device) {
    Group* best = nullptr;
    double best_ns = 0;
    for (const auto& g : groups_) {
      if (!g->open() || (g->device >= 0 && g->device != device)) continue;
      const double ns = static_cast<double>(g->charged_ns.load()) / g->lanes.size();
      if (!best || ns < best_ns) {
        best = g.get();
        best_ns = ns;
      }
    }
    return best;
  }

  // Case k of group g: its index in the campaign's sequence (over every shard), the random source
  // it is drawn from, and the lane whose generator draws it.
  uint64_t case_index(int64_t k) const { return static_cast<uint64_t>(k) * o_.shard_count + o_.shard; }
  rc::Random case_random(const Group& g, int64_t k) const {
    return rc::Random(splitmix64(o_.seed ^ splitmix64(g.key ^ splitmix64(case_index(k)))));
  }
  Lane& origin(const Group& g, int64_t k) const { return *g.lanes[case_index(k) % g.lanes.size()]; }
  // --cases C: C cases drawn by each lane's generator.
  int64_t case_limit(const Group& g) const { return o_.cases * static_cast<int64_t>(g.lanes.size()); }

  // The drawer thread: RapidCheck's generators run under one process-wide lock, which 16 jobs
  // drawing their own cases made the campaign's bottleneck (36% of a GPU job's time waiting for
  // it, H100, 2026-11-25). Here one thread draws for every group, keeping each group's queue
  // ready_depth() deep, the emptiest first; a job whose group's queue is empty draws for itself.
  // Case k is the same case whoever draws it.
  size_t ready_depth() const { return std::max<size_t>(32, 2 * static_cast<size_t>(batch_)); }
  void draw_ahead() {
    try {
      while (!drawer_stop_.load() && !stopping_.load()) {
        Group* emptiest = nullptr;
        size_t fewest = ready_depth();
        for (const auto& g : groups_) {
          if (!g->open() || (o_.cases > 0 && g->claimed.load() >= case_limit(*g))) continue;
          std::lock_guard<std::mutex> lock(g->ready_m);
          if (g->ready.size() < fewest) {
            fewest = g->ready.size();
            emptiest = g.get();
          }
        }
        if (!emptiest) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          continue;
        }
        Group& g = *emptiest;
        ++g.drawing;
        const int64_t k = g.claimed.fetch_add(1);
        if (o_.cases > 0 && k >= case_limit(g)) {
          --g.drawing;
          continue;
        }
        const PhaseTimes before = thread_phase_times();
        std::unique_ptr<DrawnCase> c = origin(g, k).target->draw(case_random(g, k));
        charge_group(g, thread_phase_times() - before);
        {
          std::lock_guard<std::mutex> lock(g.ready_m);
          g.ready.emplace_back(k, std::move(c));
        }
        --g.drawing;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
      stopping_.store(true);
    }
  }

  // Thread time spent on a lane's runs, busy, charged and profiled. Every moment of a thread's
  // time is in some phase, so the phases add up to it.
  void charge(Lane& l, const PhaseTimes& spent) {
    int64_t ns = 0;
    for (const int64_t t : spent.ns) ns += t;
    l.busy_ns += ns;
    l.group->busy_ns += ns;
    l.group->charged_ns += ns;
    std::lock_guard<std::mutex> lock(l.m);
    l.phases += spent;
  }
  // Thread time spent on a group's case for all its lanes (drawing it), shared out among them.
  void charge_group(Group& g, const PhaseTimes& spent) {
    const int64_t n = static_cast<int64_t>(g.lanes.size());
    for (int64_t i = 0; i < n; ++i) {
      PhaseTimes share;
      for (int p = 0; p < kPhaseCount; ++p) share.ns[p] = spent.ns[p] / n + (i < spent.ns[p] % n ? 1 : 0);
      charge(*g.lanes[i], share);
    }
  }

  // Up to batch_ next cases of group g for a job: those the drawer drew, else a fresh claim drawn
  // here; none when the group has run its --cases (it is then done, once no draw of it is in
  // flight).
  DrawnCases next_cases(Group& g) {
    DrawnCases out;
    {
      std::lock_guard<std::mutex> lock(g.ready_m);
      while (!g.ready.empty() && out.size() < static_cast<size_t>(batch_)) {
        out.push_back(std::move(g.ready.front()));
        g.ready.pop_front();
      }
    }
    if (!out.empty()) return out;
    const int64_t k = g.claimed.fetch_add(1);
    if (o_.cases > 0 && k >= case_limit(g)) {
      std::lock_guard<std::mutex> lock(g.ready_m);
      if (g.ready.empty() && g.drawing.load() == 0) g.done.store(true);
      return out;
    }
    const PhaseTimes before = thread_phase_times();
    out.emplace_back(k, origin(g, k).target->draw(case_random(g, k)));
    charge_group(g, thread_phase_times() - before);
    return out;
  }

  void work(int job, int executor_threads) {
    try {
      CpuExec::limit_threads_of_this_thread(executor_threads);
      const bool gpu_lanes = std::any_of(lanes_.begin(), lanes_.end(), [](const auto& l) { return l->device >= 0; });
      const int device = gpu_lanes ? o_.gpu_devices[job % o_.gpu_devices.size()] : -1;
      const std::unique_ptr<Backend> cpu = make_cpu_backend();
      const std::unique_ptr<Backend> gpu = device >= 0 ? make_gpu_backend(device) : nullptr;
      while (!stopping_.load()) {
        Group* g = pick(device);
        if (!g) break;
        run_batch(*g, *cpu, gpu.get());
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

  // A batch: the next cases of group g, each started on every open lane of the group, the lane
  // that drew it first (it computes the oracle answer the others reuse), then finished in the
  // same order. On a GPU the first finish waits for all of them at once. Each run is its own
  // trial: its verdict, tags and failure are the lane's, and a failing case is shrunk and saved
  // alone. A lane skips a case another lane drew unless its own generator could have drawn it
  // and it supports it; one that does not support a case it drew itself counts a discard.
  void run_batch(Group& g, Backend& cpu, Backend* gpu) {
    auto backend = [&](const Lane& l) -> Backend& { return l.device >= 0 ? *gpu : cpu; };
    const int64_t finished = g.finished.load();
    const int64_t estimate = (finished > 0 ? g.busy_ns.load() / finished : 1000000 * static_cast<int64_t>(g.lanes.size())) * batch_;
    g.charged_ns += estimate;
    const DrawnCases cases = next_cases(g);
    struct Run {
      Lane* lane;
      int64_t k;
      StartedTrial started;
    };
    std::vector<Run> runs;
    const size_t n = g.lanes.size();
    for (const auto& [k, c] : cases)
      for (size_t j = 0; j < n; ++j) {
        Lane& l = *g.lanes[(case_index(k) + j) % n];
        if (l.done.load() || (j > 0 && !l.target->could_draw(*c))) continue;
        const PhaseTimes before = thread_phase_times();
        runs.push_back({&l, k, l.target->start(*c, backend(l))});
        charge(l, thread_phase_times() - before);
      }
    for (Run& r : runs) {
      Lane& l = *r.lane;
      const PhaseTimes before = thread_phase_times();
      Trial t = r.started();
      r.started = nullptr;  // its buffers go back now
      const bool own = &origin(g, r.k) == &l;
      if (t.answered_oracle) ++l.oracles;
      if (t.verdict == Trial::Verdict::discard) {
        if (own) ++l.discarded;
      } else {
        ++l.cases;
        if (!own) ++l.from_group;
      }
      if (t.verdict == Trial::Verdict::pass) {
        std::lock_guard<std::mutex> lock(l.m);
        for (const std::string& tag : t.tags) ++l.tags[tag];
      }
      if (t.verdict == Trial::Verdict::fail) on_failure(l, r.k, backend(l), std::move(t));
      charge(l, thread_phase_times() - before);
    }
    g.finished += static_cast<int64_t>(cases.size());
    g.charged_ns -= estimate;
  }

  void on_failure(Lane& l, int64_t k, Backend& b, Trial t) {
    bool first = true;
    {
      std::lock_guard<std::mutex> lock(l.m);
      for (FailureRecord& f : l.failures)
        if (f.signature == t.signature) {
          ++f.count;
          first = false;
        }
      if (first) l.failures.push_back({t.signature, "", "", 1, seconds_since(start_)});
    }
    // A failure that broke the device is saved for every case that saw it: the cases of a batch
    // share one wait, so the one that broke it is any of them (its replay alone shows which).
    if (!first && !t.backend_lost) return;
    if (first) failures_.fetch_add(1);
    if (t.backend_lost) {
      // A sticky GPU error: every later launch on the device fails, and so would shrinking.
      bool first_loss = false;
      {
        std::lock_guard<std::mutex> lock(m_);
        first_loss = lost_devices_.insert(l.device).second;
      }
      for (const auto& other : lanes_)
        if (other->device == l.device) other->done.store(true);
      if (first_loss)
        say(l.backend + " failed at the runtime level: its lanes stop, the rest of the campaign goes on; every case"
                        " of the batch that broke it is saved, and replaying each alone shows which one did");
    }
    Trial small = t.backend_lost ? t
                                 : l.target->shrink(*origin(*l.group, k).target, case_random(*l.group, k), b, t.signature,
                                                    o_.max_shrink_runs, stopping_);
    if (small.verdict != Trial::Verdict::fail || small.signature != t.signature) small = std::move(t);
    std::error_code ec;
    std::filesystem::create_directories(o_.corpus_dir, ec);
    const std::string path =
        (std::filesystem::path(o_.corpus_dir) / case_file_name(l, small.signature, small.backend_lost ? k : -1)).string();
    std::ofstream(path) << small.case_file.dump(2) << "\n";
    if (first) {
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
      lr.oracles = l->oracles.load();
      lr.from_group = l->from_group.load();
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
  const int batch_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::set<int> lost_devices_;  // guarded by m_
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
  if (o.batch < 1) throw Error("run_campaign: batch must be at least 1");
  return Campaign(o).run();
}

}  // namespace pg::fuzz
