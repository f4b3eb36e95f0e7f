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

// One target on one backend: what jobs pick, and its counts.
struct Lane {
  const Target* target = nullptr;
  std::string backend;  // "cpu", "gpu0", ...
  int device = -1;      // -1: the CPU backend
  Group* group = nullptr;
  uint64_t key = 0;     // seeds its cases: the hash of "variant/backend"
  std::atomic<int64_t> claimed{0}, cases{0}, discarded{0}, oracles{0}, from_group{0};
  std::atomic<int64_t> busy_ns{0};
  // busy_ns split: runs of its own cases, and of cases another lane of its group drew
  std::atomic<int64_t> own_ns{0}, others_ns{0};
  // busy_ns plus an estimate for the cases in flight: what lane picking compares, so jobs
  // starting at once spread over the lanes instead of piling onto the first.
  std::atomic<int64_t> charged_ns{0};
  std::atomic<bool> done{false};
  // Cases the drawer thread drew ahead, (k, case), and draws of this lane in progress there.
  std::mutex ready_m;
  std::deque<std::pair<int64_t, std::unique_ptr<DrawnCase>>> ready;
  std::atomic<int> drawing{0};
  std::mutex m;  // guards tags, failures and phases
  std::map<std::string, int64_t> tags;
  std::vector<FailureRecord> failures;
  PhaseTimes phases;

  std::string name() const { return target->variant() + "/" + backend; }
};

// Lanes whose targets share cases (Target::shares_cases_with), on one GPU and the CPU: a case
// one of them draws also runs on the others that could have drawn it, with one oracle answer.
struct Group {
  std::vector<Lane*> lanes;
  int device = -1;  // the GPU its GPU lanes run on; -1: CPU lanes only
};

using DrawnCases = std::vector<std::pair<int64_t, std::unique_ptr<DrawnCase>>>;

// `which`: which case it is, for a case saved unshrunk beside others of its signature (a batch that
// broke its device); empty: none.
std::string case_file_name(const Lane& l, const std::string& signature, const std::string& which) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(signature)));
  std::string name = l.target->variant() + "-" + l.backend + "-" + hex;
  if (!which.empty()) name += "-" + which;
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
    l->key = fnv1a(l->name());
    for (const auto& g : groups_)
      if (g->device == slot && g->lanes[0]->target->shares_cases_with(t)) l->group = g.get();
    if (!l->group) {
      auto g = std::make_unique<Group>();
      g->device = slot;
      l->group = g.get();
      groups_.push_back(std::move(g));
    }
    l->group->lanes.push_back(l.get());
    lanes_.push_back(std::move(l));
  }

  // Whether a job driving GPU `device` (-1: none) can run lane l.
  static bool runs_on(const Lane& l, int device) { return l.device < 0 || l.device == device; }

  // The least-served open lane this job can run; nullptr when none is left.
  Lane* pick(int device) {
    Lane* best = nullptr;
    for (const auto& l : lanes_) {
      if (l->done.load() || !runs_on(*l, device)) continue;
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
  // ready_depth() deep, the emptiest first; a job whose lane's queue is empty draws for itself.
  // Case k is the same case whoever draws it.
  size_t ready_depth() const { return std::max<size_t>(32, 2 * static_cast<size_t>(batch_)); }
  void draw_ahead() {
    try {
      while (!drawer_stop_.load() && !stopping_.load()) {
        Lane* emptiest = nullptr;
        size_t fewest = ready_depth();
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
        charge(l, thread_phase_times() - before, true);
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

  // Thread time spent on a lane (a run, or the drawer's draw of one of its cases), busy, charged
  // and profiled; `own`: on a case it drew. Every moment of a thread's time is in some phase, so
  // the phases add up to it.
  void charge(Lane& l, const PhaseTimes& spent, bool own) {
    int64_t ns = 0;
    for (const int64_t t : spent.ns) ns += t;
    l.busy_ns += ns;
    l.charged_ns += ns;
    (own ? l.own_ns : l.others_ns) += ns;
    std::lock_guard<std::mutex> lock(l.m);
    l.phases += spent;
  }

  // Up to batch_ next cases of lane l for a job: those the drawer drew, else a fresh claim drawn
  // here; none when the lane has run its --cases (it is then done, once no draw of it is in
  // flight).
  DrawnCases next_cases(Lane& l) {
    DrawnCases out;
    {
      std::lock_guard<std::mutex> lock(l.ready_m);
      while (!l.ready.empty() && out.size() < static_cast<size_t>(batch_)) {
        out.push_back(std::move(l.ready.front()));
        l.ready.pop_front();
      }
    }
    if (!out.empty()) return out;
    const int64_t k = l.claimed.fetch_add(1);
    if (o_.cases > 0 && k >= o_.cases) {
      std::lock_guard<std::mutex> lock(l.ready_m);
      if (l.ready.empty() && l.drawing.load() == 0) l.done.store(true);
      return out;
    }
    const PhaseTimes before = thread_phase_times();
    out.emplace_back(k, l.target->draw(case_random(l, k)));
    charge(l, thread_phase_times() - before, true);
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
        Lane* l = pick(device);
        if (!l) break;
        run_batch(*l, device, *cpu, gpu.get());
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

  // Whether lane x takes another lane's case now: while those have had at most `share` of its time.
  bool takes_others(const Lane& x) const {
    return o_.share > 0 && static_cast<double>(x.others_ns.load()) * (1 - o_.share) <=
                               static_cast<double>(x.own_ns.load()) * o_.share;
  }

  // A batch: the next cases of lane l, each started on l and on the other lanes of its group that
  // this job can run, that could have drawn it (their own sizes) and that take others' cases now
  // (takes_others: a lane that reaches far keeps most of its time for its own cases); l first,
  // which computes the oracle answer the others reuse. Then all are finished in the same order:
  // on a GPU the first finish waits for all of them at once.
  // Each run is its own trial: its verdict, tags and failure are its lane's, and a failing case is
  // shrunk and saved alone. Only l counts a discard (a case it drew and does not support); another
  // lane that does not support the case just does not run it.
  void run_batch(Lane& l, int device, Backend& cpu, Backend* gpu) {
    auto backend = [&](const Lane& x) -> Backend& { return x.device >= 0 ? *gpu : cpu; };
    const int64_t cases_so_far = l.cases.load() + l.discarded.load();
    const int64_t estimate = (cases_so_far > 0 ? l.own_ns.load() / cases_so_far : 1000000) * batch_;
    l.charged_ns += estimate;
    const DrawnCases cases = next_cases(l);
    struct Run {
      Lane* lane;
      int64_t k;
      StartedTrial started;
    };
    std::vector<Run> runs;
    auto start = [&](Lane& x, int64_t k, const DrawnCase& c) {
      const PhaseTimes before = thread_phase_times();
      runs.push_back({&x, k, x.target->start(c, backend(x))});
      charge(x, thread_phase_times() - before, &x == &l);
    };
    for (const auto& [k, c] : cases) {
      start(l, k, *c);  // first: it computes the answer
      for (Lane* x : l.group->lanes)
        if (x != &l && !x->done.load() && runs_on(*x, device) && takes_others(*x) && x->target->could_draw(*c))
          start(*x, k, *c);
    }
    for (Run& r : runs) {
      Lane& x = *r.lane;
      const bool own = &x == &l;
      const PhaseTimes before = thread_phase_times();
      Trial t = r.started();
      r.started = nullptr;  // its buffers go back now
      if (t.answered_oracle) ++x.oracles;
      if (t.verdict == Trial::Verdict::discard) {
        if (own) ++x.discarded;
      } else {
        ++x.cases;
        if (!own) ++x.from_group;
      }
      if (t.verdict == Trial::Verdict::pass) {
        std::lock_guard<std::mutex> lock(x.m);
        for (const std::string& tag : t.tags) ++x.tags[tag];
      }
      if (t.verdict == Trial::Verdict::fail) on_failure(x, l, r.k, backend(x), std::move(t));
      charge(x, thread_phase_times() - before, own);
    }
    l.charged_ns -= estimate;
  }

  // A failing run on lane l of case k of lane `origin` (l itself, or a lane of its group).
  void on_failure(Lane& l, const Lane& origin, int64_t k, Backend& b, Trial t) {
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
                                 : l.target->shrink(*origin.target, case_random(origin, k), b, t.signature,
                                                    o_.max_shrink_runs, stopping_);
    if (small.verdict != Trial::Verdict::fail || small.signature != t.signature) small = std::move(t);
    std::error_code ec;
    std::filesystem::create_directories(o_.corpus_dir, ec);
    const std::string path =
        (std::filesystem::path(o_.corpus_dir) / case_file_name(l, small.signature, small.backend_lost ? "case" + std::to_string(k) + "-of-" + origin.name() : "")).string();
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
  std::vector<std::unique_ptr<Group>> groups_;  // each lane's group
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
  if (!(o.share >= 0 && o.share <= 0.9)) throw Error("run_campaign: share must be 0 to 0.9");
  return Campaign(o).run();
}

}  // namespace pg::fuzz
