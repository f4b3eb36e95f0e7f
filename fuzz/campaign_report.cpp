#include "fuzz/campaign_report.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "src/harness/case_phases.hpp"

namespace pg::fuzz {
namespace {

constexpr const char* kFormat = "poolgrad-fuzz-report/1";

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.contains(name)) throw std::runtime_error(where + ": \"" + name + "\" missing");
  try {
    return j[name].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(where + ": \"" + name + "\" has the wrong type");
  }
}

std::string lane_key(const LaneReport& l) { return l.variant + "/" + l.backend; }

}  // namespace

int64_t LaneReport::admitted_reached() const {
  int64_t n = 0;
  for (const std::string& t : admitted) n += tags.count(t) != 0;
  return n;
}

int64_t CampaignReport::cases() const {
  int64_t n = 0;
  for (const LaneReport& l : lanes) n += l.cases;
  return n;
}

int64_t CampaignReport::distinct_failures() const {
  int64_t n = 0;
  for (const LaneReport& l : lanes) n += static_cast<int64_t>(l.failures.size());
  return n;
}

nlohmann::json to_json(const CampaignReport& r) {
  nlohmann::json lanes = nlohmann::json::array();
  for (const LaneReport& l : r.lanes) {
    nlohmann::json failures = nlohmann::json::array();
    for (const FailureRecord& f : l.failures)
      failures.push_back({{"signature", f.signature}, {"case_file", f.case_file}, {"problem", f.problem},
                          {"count", f.count}, {"first_s", f.first_s}});
    lanes.push_back({{"variant", l.variant},
                     {"backend", l.backend},
                     {"cases", l.cases},
                     {"discarded", l.discarded},
                     {"from_group", l.from_group},
                     {"oracles", l.oracles},
                     {"busy_s", l.busy_s},
                     {"cases_per_s", r.elapsed_s > 0 ? static_cast<double>(l.cases) / r.elapsed_s : 0.0},
                     {"tags", l.tags},
                     {"admitted_tags", l.admitted},
                     {"phase_s", l.phase_s},
                     {"failures", failures}});
  }
  return {{"format", kFormat},
          {"seed", r.seed},
          {"shard_count", r.shard_count},
          {"shards", r.shards},
          {"jobs", r.jobs},
          {"elapsed_s", r.elapsed_s},
          {"interrupted", r.interrupted},
          {"cases", r.cases()},
          {"cases_per_s", r.elapsed_s > 0 ? static_cast<double>(r.cases()) / r.elapsed_s : 0.0},
          {"distinct_failures", r.distinct_failures()},
          {"lanes", lanes}};
}

CampaignReport report_from_json(const nlohmann::json& j) {
  if (!j.is_object() || j.value("format", "") != kFormat)
    throw std::runtime_error(std::string("not a poolgrad fuzz report (\"format\" is not \"") + kFormat + "\")");
  CampaignReport r;
  r.seed = field<uint64_t>(j, "seed", "report");
  r.shard_count = field<int>(j, "shard_count", "report");
  r.shards = field<std::vector<int>>(j, "shards", "report");
  r.jobs = field<int>(j, "jobs", "report");
  r.elapsed_s = field<double>(j, "elapsed_s", "report");
  r.interrupted = field<bool>(j, "interrupted", "report");
  for (const nlohmann::json& lj : field<nlohmann::json>(j, "lanes", "report")) {
    LaneReport l;
    l.variant = field<std::string>(lj, "variant", "lane");
    l.backend = field<std::string>(lj, "backend", "lane " + l.variant);
    const std::string where = "lane " + lane_key(l);
    l.cases = field<int64_t>(lj, "cases", where);
    l.discarded = field<int64_t>(lj, "discarded", where);
    l.busy_s = field<double>(lj, "busy_s", where);
    // Reports from before shared oracle answers have none: each case had its own.
    l.oracles = lj.contains("oracles") ? field<int64_t>(lj, "oracles", where) : l.cases;
    if (lj.contains("from_group")) l.from_group = field<int64_t>(lj, "from_group", where);
    l.tags = field<std::map<std::string, int64_t>>(lj, "tags", where);
    l.admitted = field<std::vector<std::string>>(lj, "admitted_tags", where);
    // Reports from before the profile have none.
    if (lj.contains("phase_s")) l.phase_s = field<std::map<std::string, double>>(lj, "phase_s", where);
    for (const nlohmann::json& fj : field<nlohmann::json>(lj, "failures", where))
      l.failures.push_back({field<std::string>(fj, "signature", where), field<std::string>(fj, "case_file", where),
                            field<std::string>(fj, "problem", where), field<int64_t>(fj, "count", where),
                            field<double>(fj, "first_s", where)});
    r.lanes.push_back(std::move(l));
  }
  return r;
}

CampaignReport merge_reports(const std::vector<CampaignReport>& parts) {
  if (parts.empty()) throw std::runtime_error("no reports to merge");
  CampaignReport m;
  m.seed = parts[0].seed;
  m.shard_count = parts[0].shard_count;
  std::set<int> seen;
  for (size_t i = 0; i < parts.size(); ++i) {
    const CampaignReport& p = parts[i];
    const std::string which = "report " + std::to_string(i + 1);
    if (p.seed != m.seed)
      throw std::runtime_error(which + " has seed " + std::to_string(p.seed) + ", the first " + std::to_string(m.seed) +
                               ": not shards of one campaign");
    if (p.shard_count != m.shard_count)
      throw std::runtime_error(which + " is one of " + std::to_string(p.shard_count) + " shards, the first one of " +
                               std::to_string(m.shard_count));
    for (int s : p.shards)
      if (!seen.insert(s).second) throw std::runtime_error(which + ": shard " + std::to_string(s) + " is merged twice");
    m.jobs += p.jobs;
    m.elapsed_s = std::max(m.elapsed_s, p.elapsed_s);
    m.interrupted = m.interrupted || p.interrupted;
    for (const LaneReport& l : p.lanes) {
      auto it = std::find_if(m.lanes.begin(), m.lanes.end(), [&](const LaneReport& x) { return lane_key(x) == lane_key(l); });
      if (it == m.lanes.end()) {
        m.lanes.push_back(l);
        continue;
      }
      it->cases += l.cases;
      it->discarded += l.discarded;
      it->oracles += l.oracles;
      it->from_group += l.from_group;
      it->busy_s += l.busy_s;
      for (const auto& [tag, n] : l.tags) it->tags[tag] += n;
      for (const auto& [phase, seconds] : l.phase_s) it->phase_s[phase] += seconds;
      for (const FailureRecord& f : l.failures) {
        auto same = std::find_if(it->failures.begin(), it->failures.end(),
                                 [&](const FailureRecord& x) { return x.signature == f.signature; });
        if (same == it->failures.end()) it->failures.push_back(f);
        else {
          same->count += f.count;
          same->first_s = std::min(same->first_s, f.first_s);
        }
      }
    }
  }
  m.shards.assign(seen.begin(), seen.end());
  return m;
}

std::string phase_table(const CampaignReport& r) {
  struct Sum {
    int64_t cases = 0, runs = 0, oracles = 0;
    double busy_s = 0;
    std::map<std::string, double> phase_s;
  };
  std::map<std::string, Sum> by_backend;
  std::set<std::string> seen;
  for (const LaneReport& l : r.lanes) {
    Sum& s = by_backend[l.backend];
    s.cases += l.cases + l.discarded;
    s.runs += l.cases;
    s.oracles += l.oracles;
    s.busy_s += l.busy_s;
    for (const auto& [phase, seconds] : l.phase_s) {
      s.phase_s[phase] += seconds;
      seen.insert(phase);
    }
  }
  // In the order a case runs through them; a name this build does not know (a newer report's) last.
  std::vector<std::string> phases;
  for (int p = 0; p < kPhaseCount; ++p)
    if (seen.erase(phase_name(static_cast<Phase>(p)))) phases.push_back(phase_name(static_cast<Phase>(p)));
  phases.insert(phases.end(), seen.begin(), seen.end());
  std::string out = "where the time went (microseconds per drawn case, share of the backend's busy time):\n";
  char line[256];
  for (const auto& [backend, s] : by_backend) {
    std::snprintf(line, sizeof line, "  %-7s %10lld cases, %8.1f us each:", backend.c_str(),
                  static_cast<long long>(s.cases), s.cases ? s.busy_s * 1e6 / s.cases : 0.0);
    out += line;
    for (const std::string& phase : phases) {
      const auto it = s.phase_s.find(phase);
      const double seconds = it == s.phase_s.end() ? 0 : it->second;
      std::snprintf(line, sizeof line, " %s %.1f (%.0f%%)", phase.c_str(), s.cases ? seconds * 1e6 / s.cases : 0.0,
                    s.busy_s > 0 ? 100 * seconds / s.busy_s : 0.0);
      out += line;
    }
    std::snprintf(line, sizeof line, "; oracle answers %lld for %lld verified cases\n", static_cast<long long>(s.oracles),
                  static_cast<long long>(s.runs));
    out += line;
  }
  return out;
}

std::string report_table(const CampaignReport& r) {
  std::string out;
  char line[512];
  // "by others": of the cases, those another variant's generator of the lane's group drew.
  std::snprintf(line, sizeof line, "%-28s %-7s %10s %9s %10s %9s %9s %8s\n", "variant", "backend", "cases", "cases/s",
                "by others", "discarded", "tags", "failures");
  out += line;
  for (const LaneReport& l : r.lanes) {
    const std::string tags = std::to_string(l.admitted_reached()) + "/" + std::to_string(l.admitted.size());
    std::snprintf(line, sizeof line, "%-28s %-7s %10lld %9.1f %10lld %9lld %9s %8zu\n", l.variant.c_str(),
                  l.backend.c_str(), static_cast<long long>(l.cases), r.elapsed_s > 0 ? l.cases / r.elapsed_s : 0.0,
                  static_cast<long long>(l.from_group), static_cast<long long>(l.discarded), tags.c_str(),
                  l.failures.size());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-36s %10lld %9.1f %39lld   (%.1f s, seed %llu, shard%s",
                "total", static_cast<long long>(r.cases()), r.elapsed_s > 0 ? r.cases() / r.elapsed_s : 0.0,
                static_cast<long long>(r.distinct_failures()), r.elapsed_s, static_cast<unsigned long long>(r.seed),
                r.shards.size() == 1 ? "" : "s");
  out += line;
  for (size_t i = 0; i < r.shards.size(); ++i) {
    out += i ? "," : " ";
    out += std::to_string(r.shards[i]);
  }
  out += " of " + std::to_string(r.shard_count) + (r.interrupted ? ", interrupted)\n" : ")\n");
  for (const LaneReport& l : r.lanes)
    for (const FailureRecord& f : l.failures) {
      std::snprintf(line, sizeof line, " (%lld cases, the first after %.1f s)\n", static_cast<long long>(f.count), f.first_s);
      out += "FAIL " + l.variant + " on " + l.backend + ": " + f.signature + line + "  problem: " + f.problem +
             "\n  case: " + f.case_file + "\n";
    }
  return out;
}

}  // namespace pg::fuzz
