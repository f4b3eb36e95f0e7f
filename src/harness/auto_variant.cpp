#include "src/harness/auto_variant.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "src/harness/builtin_selection.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/perfdb.hpp"
#include "src/harness/selection.hpp"

namespace pg {
namespace {

std::string read_text(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(option + " = " + path + " cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string g_selection_file;
std::string g_perfdb_option;

// Everything auto reads, read once per process (again after an option names another file or a
// tune wrote the perf-db).
using Tables = AutoTables;
std::unique_ptr<Tables> g_tables;

const Tables& tables() {
  if (g_tables) return *g_tables;
  auto t = std::make_unique<Tables>();
  if (!g_selection_file.empty())
    t->files.push_back(selection_from_json(read_text(g_selection_file, "--selection"), g_selection_file));
  if (const char* env = std::getenv("POOLGRAD_SELECTION")) {
    std::stringstream paths(env);
    std::string path;
    while (std::getline(paths, path, ':'))
      if (!path.empty()) t->files.push_back(selection_from_json(read_text(path, "POOLGRAD_SELECTION"), path));
  }
  for (int i = 0; i < kBuiltinSelectionCount; ++i) {
    t->builtin.push_back(selection_from_json(kBuiltinSelections[i].json, "built-in"));
    t->builtin.back().source = std::string("built-in ") + kBuiltinSelections[i].device + " (" +
                               kBuiltinSelections[i].sources + ")";
  }
  t->perfdb = load_perfdb(current_perfdb_path());
  if (!t->perfdb.warning.empty()) std::fprintf(stderr, "poolgrad: %s\n", t->perfdb.warning.c_str());
  g_tables = std::move(t);
  return *g_tables;
}

std::string arch_of(const std::string& key) {
  const auto open = key.rfind(" (");
  return open == std::string::npos ? "" : key.substr(open + 2, key.size() - open - 3);
}

// The built-in table for this device: its own, else one of the same arch, else the first.
const SelectionTable* builtin_for(const Tables& t, const DeviceInfo& d, std::string* how) {
  if (t.builtin.empty()) return nullptr;
  const std::string key = device_key(d);
  for (const SelectionTable& s : t.builtin)
    if (s.device == key) return *how = "measured on this device", &s;
  for (const SelectionTable& s : t.builtin)
    if (arch_of(s.device) == d.arch) return *how = "nearest device: the same arch " + d.arch, &s;
  *how = "nearest device: no table of arch " + d.arch + ", the first one";
  return &t.builtin.front();
}

struct Candidate {
  std::string variant;
  double ms = 0;  // 0 when the layer ranks without times
};

class Chooser {
 public:
  Chooser(const Problem& p, BackendKind backend, const std::function<bool(const Variant&)>& usable, AutoChoice* c)
      : p_(p), backend_(backend), usable_(usable), c_(c) {}

  // The first usable variant of a ranking; the refusals go into the reason. With `measured_here`
  // false (a class: the problem itself was not measured) the default's rule holds: an atomic
  // variant only where no deterministic one can run the problem.
  const Variant* first_usable(const std::vector<Candidate>& ranking, bool measured_here) {
    const bool deterministic_only = !measured_here && any_deterministic_usable();
    for (const Candidate& r : ranking) {
      std::string why;
      const Variant* v = usable(r.variant, &why);
      if (v && deterministic_only && !v->deterministic)
        why = "not deterministic, and the problem itself was not measured: a deterministic variant is the default", v = nullptr;
      if (v) return v;
      c_->why += "  " + r.variant + ": " + why + "\n";
    }
    return nullptr;
  }

  bool any_deterministic_usable() const {
    std::string why;
    for (const Variant& v : variants())
      if (v.deterministic && usable(v.name, &why)) return true;
    return false;
  }

  const Variant* usable(const std::string& name, std::string* why) const {
    const Variant* v = find_variant(name);
    if (!v) return *why = "not registered in this build", nullptr;
    if (v->vendor) return *why = "a vendor library's variant: a comparator, never auto's pick", nullptr;
    if (v->op != p_.op) return *why = "another op's variant", nullptr;
    const Support s = v->supports(p_, backend_);
    if (!s.ok) return *why = "does not support this problem: " + s.why, nullptr;
    if (usable_ && !usable_(*v)) return *why = "needs inputs this run does not have", nullptr;
    return v;
  }

  bool decide(const std::vector<Candidate>& ranking, const std::string& layer, const std::string& what,
              bool measured_here) {
    std::string text;
    for (const Candidate& r : ranking) {
      char buf[160];
      if (r.ms > 0) std::snprintf(buf, sizeof buf, "%s%s %.4f ms", text.empty() ? "" : ", ", r.variant.c_str(), r.ms);
      else std::snprintf(buf, sizeof buf, "%s%s", text.empty() ? "" : ", ", r.variant.c_str());
      text += buf;
    }
    c_->why += what + " ranks: " + text + "\n";
    if (const Variant* v = first_usable(ranking, measured_here)) {
      c_->variant = v;
      c_->layer = layer;
      c_->why += "chosen: " + v->name + " (" + layer + ")\n";
      return true;
    }
    return false;
  }

 private:
  const Problem& p_;
  BackendKind backend_;
  const std::function<bool(const Variant&)>& usable_;
  AutoChoice* c_;
};

std::vector<Candidate> ranking_of(const std::vector<TunedTime>& timed) {
  std::vector<Candidate> r;
  for (const TunedTime& t : timed) r.push_back({t.variant, t.ms});
  return r;
}
std::vector<Candidate> ranking_of(const Example& e) {
  std::vector<Candidate> r;
  for (const VariantTime& t : e.times) r.push_back({t.variant, t.ms});
  return r;
}
std::vector<Candidate> ranking_of(const SelectionEntry& e) {
  std::vector<Candidate> r;
  for (const RankedVariant& v : e.ranking) r.push_back({v.variant, 0});
  return r;
}

const Example* find_problem(const SelectionTable& t, const std::string& line) {
  for (const Example& e : t.problems)
    if (to_string(e.problem) == line) return &e;
  return nullptr;
}
const SelectionEntry* find_class(const SelectionTable& t, const std::string& key) {
  for (const SelectionEntry& e : t.classes)
    if (e.key == key) return &e;
  return nullptr;
}

double log_bytes(const Problem& p) { return std::log2(static_cast<double>(std::max<int64_t>(1, p.in_elems())) * dtype_size(p.dtype)); }

}  // namespace

void set_selection_file(const std::string& path) {
  g_selection_file = path;
  g_tables.reset();
  tables();  // a bad file is reported now, where the option was given
}

void set_perfdb_file(const std::string& path) {
  g_perfdb_option = path;
  g_tables.reset();
}

std::string current_perfdb_path() { return perfdb_path(g_perfdb_option); }

void forget_auto_tables() { g_tables.reset(); }

std::string device_key(const DeviceInfo& d) { return d.name + " (" + d.arch + ")"; }

AutoChoice choose_auto_variant(const Problem& p, BackendKind backend, const DeviceInfo& device,
                               const std::function<bool(const Variant&)>& usable) {
  return choose_auto_variant(tables(), p, backend, device, usable);
}

AutoChoice choose_auto_variant(const AutoTables& t, const Problem& p, BackendKind backend, const DeviceInfo& device,
                               const std::function<bool(const Variant&)>& usable) {
  AutoChoice c;
  Chooser chooser(p, backend, usable, &c);
  const std::string line = to_string(p), key = problem_class(p);
  std::string builtin_how;
  const SelectionTable* builtin = builtin_for(t, device, &builtin_how);
  c.why = "device: " + device_key(device) + "\nclass: " + key + "\n";
  const std::string db = "perf-db " + (t.perfdb.path.empty() ? std::string("(no path)") : t.perfdb.path);

  // 1. The exact problem.
  if (const PerfDbEntry* e = find_tuned(t.perfdb, device.name, device.arch, line))
    if (chooser.decide(ranking_of(e->timed), "perf-db, exact problem", db + " (tuned " + e->date + ", exact problem)", true))
      return c.tuned = true, c;
  for (const SelectionTable& s : t.files)
    if (const Example* e = find_problem(s, line))
      if (chooser.decide(ranking_of(*e), "selection " + s.source + ", exact problem", "selection " + s.source + " (exact problem)", true))
        return c;
  if (builtin)
    if (const Example* e = find_problem(*builtin, line))
      if (chooser.decide(ranking_of(*e), "built-in table, exact problem",
                         builtin->source + ", " + builtin_how + " (exact problem: " + e->name + ")", true))
        return c;

  // 2. The class: in the perf-db, the tuned problem of the class nearest in size.
  const PerfDbEntry* nearest = nullptr;
  for (const PerfDbEntry* e : find_tuned_class(t.perfdb, device.name, device.arch, key)) {
    Problem q;
    std::string error;
    if (!parse_problem(e->problem, &q, &error)) continue;
    if (!nearest) nearest = e;
    Problem n;
    parse_problem(nearest->problem, &n, &error);
    if (std::abs(log_bytes(q) - log_bytes(p)) < std::abs(log_bytes(n) - log_bytes(p))) nearest = e;
  }
  if (nearest && chooser.decide(ranking_of(nearest->timed), "perf-db, class",
                                db + " (class, tuned on " + nearest->problem + ")", false))
    return c;
  for (const SelectionTable& s : t.files)
    if (const SelectionEntry* e = find_class(s, key))
      if (chooser.decide(ranking_of(*e), "selection " + s.source + ", class", "selection " + s.source + " (class)", false))
        return c;
  if (builtin)
    if (const SelectionEntry* e = find_class(*builtin, key))
      if (chooser.decide(ranking_of(*e), "built-in table, class", builtin->source + ", " + builtin_how + " (class)", false))
        return c;

  // 3. The model, over every measured problem of these layers: the selection files', the built-in
  // tables' of this arch (another device's times counted in its own copy time), and the perf-db's
  // where this device's copy ceiling is known from its own table.
  std::vector<Example> examples;
  double own_copy = 0;
  if (builtin && builtin->device == device_key(device) && !builtin->problems.empty())
    own_copy = builtin->problems.front().copy_gbps;
  for (const PerfDbEntry& e : t.perfdb.entries) {
    if (own_copy <= 0) break;
    if (e.device != device.name || e.arch != device.arch || e.version != poolgrad_version()) continue;
    Example x;
    x.copy_gbps = own_copy;
    std::string error;
    if (!parse_problem(e.problem, &x.problem, &error)) continue;
    x.name = "perf-db: " + e.problem;
    for (const TunedTime& tt : e.timed) {
      const Variant* v = find_variant(tt.variant);
      x.times.push_back({tt.variant, tt.ms, v ? v->deterministic : true});
    }
    if (!x.times.empty()) examples.push_back(std::move(x));
  }
  for (const SelectionTable& s : t.files) examples.insert(examples.end(), s.problems.begin(), s.problems.end());
  for (const SelectionTable& s : t.builtin)
    if (&s == builtin || (builtin && arch_of(s.device) == arch_of(builtin->device)))
      examples.insert(examples.end(), s.problems.begin(), s.problems.end());
  std::vector<std::string> candidates, deterministic;
  for (const Variant& v : variants()) {
    std::string why;
    if (!chooser.usable(v.name, &why)) continue;
    candidates.push_back(v.name);
    if (v.deterministic) deterministic.push_back(v.name);
  }
  if (candidates.empty()) {
    c.why += "no registered variant supports this problem on this backend\n";
    return c;
  }
  if (!deterministic.empty() && deterministic.size() < candidates.size()) {
    c.why += "model: only deterministic variants (" + std::to_string(candidates.size() - deterministic.size()) +
             " atomic ones left out: an unmeasured problem never defaults to one)\n";
    candidates = deterministic;
  }
  ModelWeights w = builtin ? builtin->weights : default_model_weights();
  for (auto it = t.files.rbegin(); it != t.files.rend(); ++it)
    if (!it->problems.empty()) w = it->weights;
  const std::vector<Prediction> ranked = model_rank(p, candidates, examples, w);
  std::string text;
  for (const Prediction& r : ranked) {
    char buf[400];
    std::snprintf(buf, sizeof buf, "  %s: predicted %.3fx the fastest (nearest measured: %s, distance %.2f)\n",
                  r.variant.c_str(), r.slowdown, r.nearest.empty() ? "none" : r.nearest.c_str(),
                  r.nearest.empty() ? 0.0 : r.nearest_distance);
    text += buf;
  }
  c.why += "no measurement of this problem or its class; the model over " + std::to_string(examples.size()) +
           " measured problems ranks:\n" + text;
  c.variant = find_variant(ranked.front().variant);
  c.layer = "model";
  c.why += "chosen: " + c.variant->name + " (model)\n";
  return c;
}

}  // namespace pg
