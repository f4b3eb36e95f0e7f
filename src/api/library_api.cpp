// include/poolgrad/poolgrad.hpp over poolgrad's internals: each entry point converts the public
// types, calls what the poolgrad command calls, and turns pg's exceptions into poolgrad::Error.
#include "poolgrad/poolgrad.hpp"

#include <algorithm>
#include <memory>
#include <regex>
#include <thread>

#include "fuzz/campaign.hpp"
#include "fuzz/registered_targets.hpp"
#include "reference/pool_reference.hpp"
#include "src/harness/c_problem.hpp"
#include "src/harness/plugin.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"

namespace poolgrad {
namespace {

template <class F>
auto guarded(F&& body) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

const pg::Variant& variant_named(const std::string& name) {
  const pg::Variant* v = pg::find_variant(name);
  if (!v) throw Error("variant '" + name + "' is not registered (see poolgrad::variants())");
  return *v;
}

pg::Problem valid_problem(const poolgrad_problem& c) {
  pg::Problem p = pg::from_c(c);
  pg::finalize(p);
  const std::string invalid = pg::validate(p);
  if (!invalid.empty()) throw Error("problem: " + invalid);
  return p;
}

pg::DataSpec data_spec(Data data, uint64_t seed) {
  switch (data) {
    case Data::ints: return {seed, pg::DataKind::ints};
    case Data::special: return {seed, pg::DataKind::special};
    case Data::real: return {seed, pg::DataKind::real};
    case Data::foreign: return {seed, pg::DataKind::foreign};
  }
  throw Error("data: not a poolgrad::Data value");
}

}  // namespace

std::string version() { return POOLGRAD_VERSION; }

poolgrad_problem parse_problem(const std::string& line) {
  pg::Problem p;
  std::string error;
  if (!pg::parse_problem(line, &p, &error)) throw Error("problem line: " + error);
  const std::string invalid = pg::validate(p);
  if (!invalid.empty()) throw Error("problem line: " + invalid);
  return pg::to_c(p);
}

std::string to_string(const poolgrad_problem& p) { return pg::to_string(pg::from_c(p)); }

std::vector<double> oracle_backward(const poolgrad_problem& c, const std::vector<double>& x,
                                    const std::vector<double>& dy) {
  return guarded([&] {
    const pg::Problem p = valid_problem(c);
    if (dy.size() != static_cast<size_t>(p.out_elems()))
      throw Error("dy: " + std::to_string(dy.size()) + " elements, the problem's output has " +
                  std::to_string(p.out_elems()));
    if (p.op == pg::Op::avg) return pg::ref::backward_avg(p, dy).dx;
    if (x.size() != static_cast<size_t>(p.in_elems()))
      throw Error("x: " + std::to_string(x.size()) + " elements, the problem's input has " + std::to_string(p.in_elems()));
    return pg::ref::backward_max_recompute(p, x, dy).dx;
  });
}

std::vector<VariantInfo> variants() {
  std::vector<VariantInfo> out;
  for (const pg::Variant& v : pg::variants())
    out.push_back({v.name, int32_t(v.op), int32_t(v.inputs), v.deterministic, !v.gpu_only, bool(v.launch_gpu),
                   v.domain.describe(), v.plugin});
  return out;
}

void load_plugin(const std::string& path) {
  guarded([&] { pg::load_plugin(path); });
}

std::string supports(const std::string& variant, const poolgrad_problem& p, const std::string& backend) {
  return guarded([&] {
    const pg::Support s = variant_named(variant).supports(valid_problem(p), pg::backend_by_name(backend)->kind());
    return s.ok ? std::string() : s.why;
  });
}

Verdict run_and_verify(const std::string& variant, const poolgrad_problem& p, const std::string& backend, Data data,
                       uint64_t seed) {
  return guarded([&] {
    const auto b = pg::backend_by_name(backend);
    const pg::Outcome o = pg::run_and_verify(*b, variant_named(variant), valid_problem(p), data_spec(data, seed));
    const Verdict::Status status = o.status == pg::Status::pass   ? Verdict::pass
                                   : o.status == pg::Status::fail ? Verdict::fail
                                                                  : Verdict::unsupported;
    return Verdict{status, o.message, o.replay};
  });
}

Timing time_variant(const std::string& variant, const poolgrad_problem& c, const std::string& backend, int runs) {
  return guarded([&] {
    if (runs < 1) throw Error("runs: " + std::to_string(runs) + " must be at least 1");
    const auto b = pg::backend_by_name(backend);
    const pg::Variant& v = variant_named(variant);
    const pg::Problem p = valid_problem(c);
    const pg::Support s = v.supports(p, b->kind());
    if (!s.ok) throw Error(variant + " does not support this problem on " + b->name() + ": " + s.why);
    const pg::DataSpec spec{1, pg::DataKind::real};
    pg::PreparedRun run(*b, v, p, spec, std::make_shared<const pg::Expected>(pg::compute_expected(p, spec)));
    const pg::Outcome o = run.verify();
    if (o.status != pg::Status::pass) throw Error(o.message);
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      b->timer_start();
      run.launch();
      ms.push_back(b->timer_stop_ms());
    }
    std::nth_element(ms.begin(), ms.begin() + runs / 2, ms.end());
    const double median = ms[runs / 2];
    return Timing{median, static_cast<double>(run.minimal_bytes()) / (median * 1e6), runs};
  });
}

FuzzResult fuzz(const FuzzOptions& o) {
  return guarded([&] {
    std::regex pattern;
    try {
      pattern = std::regex(o.variants);
    } catch (const std::regex_error& e) {
      throw Error("variants: '" + o.variants + "' is not a regular expression (" + e.what() + ")");
    }
    if (o.backend != "cpu" && o.backend != "gpu" && o.backend != "all")
      throw Error("backend: must be cpu, gpu or all, got '" + o.backend + "'");
    if (o.cases < 1) throw Error("cases: " + std::to_string(o.cases) + " must be at least 1");
    pg::fuzz::CampaignOptions c;
    if (o.backend != "cpu")
      for (int d = 0; d < pg::gpu_count(nullptr); ++d) c.gpu_devices.push_back(d);
    c.targets = pg::fuzz::registered_targets(pattern, o.backend != "gpu", !c.gpu_devices.empty());
    if (c.targets.empty()) throw Error("variants: '" + o.variants + "' selects no variant that runs on " + o.backend);
    c.seconds = 0;
    c.cases = o.cases;
    c.seed = o.seed;
    c.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    c.corpus_dir = o.corpus;
    const pg::fuzz::CampaignReport r = pg::fuzz::run_campaign(c);
    FuzzResult out;
    out.cases = r.cases();
    for (const pg::fuzz::LaneReport& lane : r.lanes)
      for (const pg::fuzz::FailureRecord& f : lane.failures) out.case_files.push_back(f.case_file);
    out.table = pg::fuzz::report_table(r);
    return out;
  });
}

}  // namespace poolgrad
