// Campaigns on the CPU backend, over variant lists the test builds (the planted-bug variants, one
// pooling and one conv, are registered nowhere but here): a planted bug is found, shrunk, written
// as a case file and reproduced from it; the same seed gives the same cases whatever the job count; shard reports
// merge into the whole campaign; Ctrl-C stops a campaign that still reports; and the poolgrad
// command's fuzz, fuzz-merge and replay FILE with their exit statuses.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <signal.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "fuzz/campaign.hpp"
#include "fuzz/case_file.hpp"
#include "fuzz/interrupt.hpp"
#include "fuzz/conv_coverage.hpp"
#include "fuzz/conv_target.hpp"
#include "fuzz/pool_target.hpp"
#include "fuzz/registered_targets.hpp"
#include "src/harness/conv_verify.hpp"
#include "src/harness/verify.hpp"

namespace pg::fuzz {
namespace {

std::filesystem::path scratch(const std::string& name) {
  const char* env = std::getenv("POOLGRAD_TEST_SCRATCH");
  const std::filesystem::path root =
      env && *env ? std::filesystem::path(env) : std::filesystem::temp_directory_path() / "poolgrad-campaign-tests";
  const std::filesystem::path dir = root / name;
  std::filesystem::remove_all(dir);
  return dir;
}

// avg.gather with one planted bug: on f32 channels-first problems whose W is at least 5, the last
// dx element comes out 1 too large. The domain is narrowed to f32 channels-first so most cases
// can show it; shrinking must walk W down to exactly 5.
const Variant& planted_bug_variant() {
  static const Variant v = [] {
    Variant bug = *find_variant("avg.gather");
    bug.name = "test.avg.gather.planted-bug";
    bug.domain.dtypes = {DType::f32};
    bug.domain.layouts = {Layout::channels_first};
    const LaunchFn real = bug.launch_cpu;
    bug.launch_cpu = [real](Backend& b, const Problem& p, const BwdBuffers& buf) {
      real(b, p, buf);
      if (p.in[2] >= 5 && p.in_elems() > 0) static_cast<float*>(buf.dx)[p.in_elems() - 1] += 1.0f;
    };
    return bug;
  }();
  return v;
}

// conv.gather with the same planted bug: the last dx element of f32 channels-first problems whose
// W is at least 5 comes out 1 too large.
const ConvVariant& planted_conv_bug_variant() {
  static const ConvVariant v = [] {
    ConvVariant bug = *find_conv_variant("conv.gather");
    bug.name = "test.conv.gather.planted-bug";
    bug.domain.dtypes = {DType::f32};
    bug.domain.layouts = {Layout::channels_first};
    const ConvLaunchFn real = bug.launch_cpu;
    bug.launch_cpu = [real](Backend& b, const ConvProblem& p, const ConvBuffers& buf) {
      real(b, p, buf);
      if (p.in[2] >= 5 && p.x_elems() > 0) static_cast<float*>(buf.dx)[p.x_elems() - 1] += 1.0f;
    };
    return bug;
  }();
  return v;
}

// The CPU targets of the registered variants `names` matches (a regular expression), as
// `poolgrad fuzz --variants NAMES --backend cpu` picks them.
Targets cpu_targets(const std::string& names) { return registered_targets(std::regex(names), true, false); }

CampaignOptions cpu_campaign(Targets targets, int64_t cases, const std::filesystem::path& corpus) {
  CampaignOptions o;
  o.targets = std::move(targets);
  o.seed = 20261123;
  o.seconds = 0;
  o.cases = cases;
  o.jobs = 2;
  o.corpus_dir = corpus.string();
  return o;
}

const LaneReport& lane(const CampaignReport& r, const std::string& variant) {
  for (const LaneReport& l : r.lanes)
    if (l.variant == variant) return l;
  throw std::runtime_error("no lane " + variant);
}

// The case file of failure `f` replayed the way `poolgrad replay FILE` does: `bug` fails it the same
// way, `good` passes it. Returns its problem.
Problem expect_replays(const FailureRecord& f, const Variant& bug, const Variant& good) {
  CaseFile c;
  std::string error;
  EXPECT_TRUE(read_case_file(f.case_file, &c, &error)) << error;
  EXPECT_EQ(c.target, "pool");
  EXPECT_EQ(c.variant, bug.name);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.problem, f.problem);
  Problem p;
  EXPECT_TRUE(parse_problem(c.problem, &p, &error)) << error;
  const auto cpu = make_cpu_backend();
  VerifyOptions quiet;
  quiet.write_failure_file = false;
  const Outcome again = run_and_verify(*cpu, bug, p, c.data, quiet);
  EXPECT_EQ(again.status, Status::fail);
  EXPECT_EQ(again.signature, f.signature);
  EXPECT_EQ(run_and_verify(*cpu, good, p, c.data, quiet).status, Status::pass);
  return p;
}

TEST(Campaign, FindsShrinksAndSavesAPlantedBug) {
  const std::filesystem::path corpus = scratch("planted");
  const Variant& bug = planted_bug_variant();
  const CampaignReport r =
      run_campaign(cpu_campaign({pool_target(bug, BackendKind::cpu), pool_target(*find_variant("avg.gather"), BackendKind::cpu)},
                                150, corpus));

  EXPECT_TRUE(lane(r, "avg.gather").failures.empty()) << report_table(r);
  const LaneReport& l = lane(r, bug.name);
  ASSERT_EQ(l.failures.size(), 1u) << report_table(r);
  const FailureRecord& f = l.failures[0];
  EXPECT_EQ(f.signature, "dx elements wrong: outside the bound");
  EXPECT_GE(f.count, 1);

  // Shrunk: the smallest W that shows the bug, one batch, one channel; it replays, and the
  // correct variant passes it.
  const Problem p = expect_replays(f, bug, *find_variant("avg.gather"));
  EXPECT_EQ(p.in[2], 5) << f.problem;
  EXPECT_EQ(p.n, 1) << f.problem;
  EXPECT_EQ(p.c, 1) << f.problem;
}

TEST(Campaign, FindsShrinksAndSavesAPlantedConvBug) {
  const std::filesystem::path corpus = scratch("planted-conv");
  const ConvVariant& bug = planted_conv_bug_variant();
  const CampaignReport r = run_campaign(cpu_campaign({conv_target(bug, BackendKind::cpu), cpu_targets("^conv\\.gather$")[0]}, 60, corpus));

  EXPECT_TRUE(lane(r, "conv.gather").failures.empty()) << report_table(r);
  const LaneReport& l = lane(r, bug.name);
  EXPECT_EQ(l.admitted, conv_admitted_tags(bug));
  ASSERT_EQ(l.failures.size(), 1u) << report_table(r);
  const FailureRecord& f = l.failures[0];
  EXPECT_EQ(f.signature, "dx elements wrong: outside the bound");

  CaseFile c;
  std::string error;
  ASSERT_TRUE(read_case_file(f.case_file, &c, &error)) << error;
  EXPECT_EQ(c.target, "conv");
  EXPECT_EQ(c.variant, bug.name);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.problem, f.problem);
  ConvProblem p;
  ASSERT_TRUE(parse_conv_problem(c.problem, &p, &error)) << error;
  // Shrunk: 1D, the smallest W that shows the bug, a 1-tap window, one batch, one channel in and
  // out per group. (The group count may stay: a step that drops the groups redraws the rest of
  // the case, which then no longer fails the same way.)
  EXPECT_EQ(p.dims, 1) << c.problem;
  EXPECT_EQ(p.in[2], 5) << c.problem;
  EXPECT_EQ(p.kernel[2], 1) << c.problem;
  EXPECT_EQ(p.n, 1) << c.problem;
  EXPECT_EQ(p.c_per_group(), 1) << c.problem;
  EXPECT_EQ(p.k_per_group(), 1) << c.problem;

  // Replayed from the file, the way `poolgrad replay FILE` does: the same failure; and the
  // correct variant passes it.
  const auto cpu = make_cpu_backend();
  VerifyOptions quiet;
  quiet.write_failure_file = false;
  const Outcome again = conv_run_and_verify(*cpu, bug, p, c.data, nullptr, quiet);
  EXPECT_EQ(again.status, Status::fail);
  EXPECT_EQ(again.signature, f.signature);
  EXPECT_EQ(conv_run_and_verify(*cpu, *find_conv_variant("conv.gather"), p, c.data, nullptr, quiet).status, Status::pass);
}

// Which failure a campaign shrinks depends on which job saw one first. From each of these seeds'
// first failures (one job), RapidCheck's shrinks alone stopped at a local minimum: a 2D or 3D
// problem of height 1, a window as long as the input, two groups, dilation 2, special data whose
// infinities hide the bug below W = 8. Each still ends at the smallest case that shows the bug.
TEST(Campaign, EveryFirstFailureShrinksToTheSmallestCase) {
  for (const uint64_t seed : {2, 17, 21, 22, 30, 42, 56}) {
    CampaignOptions pool = cpu_campaign({pool_target(planted_bug_variant(), BackendKind::cpu)}, 150, scratch("first-pool"));
    pool.seed = seed;
    pool.jobs = 1;
    const CampaignReport r = run_campaign(pool);
    ASSERT_EQ(r.lanes[0].failures.size(), 1u) << seed << "\n" << report_table(r);
    // The divisor rule stays as drawn: the steps leave an op's rules alone.
    Problem p;
    std::string error;
    ASSERT_TRUE(parse_problem(r.lanes[0].failures[0].problem, &p, &error)) << error;
    p.divisor = Divisor::include_pad;
    EXPECT_EQ(to_string(p),
              "op=avg1d n=1 c=1 in=5 k=1 s=1 d=1 pb=0 pe=0 ceil=0 div=include_pad layout=ncdhw dtype=f32 padlimit=none avg3dcheck=0")
        << seed << ": " << r.lanes[0].failures[0].problem;

    CampaignOptions conv = cpu_campaign({conv_target(planted_conv_bug_variant(), BackendKind::cpu)}, 60, scratch("first-conv"));
    conv.seed = seed;
    conv.jobs = 1;
    const CampaignReport c = run_campaign(conv);
    ASSERT_EQ(c.lanes[0].failures.size(), 1u) << seed << "\n" << report_table(c);
    EXPECT_EQ(c.lanes[0].failures[0].problem, "op=conv1d n=1 c=1 k=1 g=1 in=5 ks=1 s=1 d=1 pb=0 pe=0 layout=ncdhw dtype=f32")
        << seed;
  }
}

// avg.gather on the planted-bug variant's domain: the two share every case.
const Variant& planted_bug_twin() {
  static const Variant v = [] {
    Variant twin = *find_variant("avg.gather");
    twin.name = "test.avg.gather.f32-cf";
    twin.domain = planted_bug_variant().domain;
    return twin;
  }();
  return v;
}

// A batch: several cases started on one backend (and a case started on several targets) before
// any is finished, as a campaign's job does. Each trial must be the one the case gets alone, the
// oracle answer computed by the first start of a case and reused by the others.
TEST(Targets, StartedTogetherTheyGiveTheVerdictsOfCasesRunAlone) {
  const auto cpu = make_cpu_backend();
  const auto bug = pool_target(planted_bug_variant(), BackendKind::cpu);
  const auto twin = pool_target(planted_bug_twin(), BackendKind::cpu);
  const auto conv = cpu_targets("^conv\\.gather$")[0];
  ASSERT_TRUE(bug->shares_cases_with(*twin));
  ASSERT_FALSE(bug->shares_cases_with(*conv));
  int failures = 0;
  for (const Target* t : {bug.get(), conv.get()}) {
    std::vector<std::unique_ptr<DrawnCase>> cases;
    std::vector<StartedTrial> started;
    std::vector<const Target*> by;
    for (uint64_t seed = 1; seed <= 24; ++seed) {
      cases.push_back(t->draw(rc::Random(seed)));
      for (const Target* runner : {t, t == bug.get() ? twin.get() : t}) {
        started.push_back(runner->start(*cases.back(), *cpu));
        by.push_back(runner);
      }
    }
    for (size_t i = 0; i < started.size(); ++i) {
      const Trial together = started[i]();
      const Trial alone = by[i]->run(*t->draw(rc::Random(i / 2 + 1)), *cpu);
      EXPECT_EQ(together.verdict, alone.verdict) << i;
      EXPECT_EQ(together.signature, alone.signature) << i;
      EXPECT_EQ(together.tags, alone.tags) << i;
      // The first start of each case computed its answer (a discard needs none).
      EXPECT_EQ(together.answered_oracle, i % 2 == 0 && together.verdict != Trial::Verdict::discard) << i;
      failures += together.verdict == Trial::Verdict::fail;
      if (together.verdict == Trial::Verdict::fail) {
        EXPECT_EQ(by[i], bug.get());
        EXPECT_EQ(together.case_file["variant"], planted_bug_variant().name);
      }
    }
  }
  EXPECT_GT(failures, 0);  // the planted bug shows in the batch
}

// Lanes of one kind share cases: a lane also runs the cases of the others that it supports and
// could have drawn, on their oracle answer, and a failure found in such a case is shrunk with the
// generator that drew it, saved and replayed alone. Each lane still draws exactly its own --cases.
TEST(Campaign, LanesRunEachOthersCasesOnOneOracleAnswer) {
  const Variant& bug = planted_bug_variant();
  const Variant& twin = planted_bug_twin();
  CampaignOptions o = cpu_campaign({pool_target(bug, BackendKind::cpu), pool_target(twin, BackendKind::cpu)}, 60,
                                   scratch("shared-bug"));
  const CampaignReport r = run_campaign(o);
  const LaneReport &b = lane(r, bug.name), &t = lane(r, twin.name);
  for (const LaneReport* l : {&b, &t}) {
    EXPECT_EQ(l->cases + l->discarded - l->from_group, 60) << l->variant << "\n" << report_table(r);
    EXPECT_EQ(l->oracles, l->cases - l->from_group) << l->variant;  // one answer per own case, none for others'
  }
  EXPECT_GT(b.from_group + t.from_group, 0) << report_table(r);
  EXPECT_TRUE(t.failures.empty()) << report_table(r);
  ASSERT_EQ(b.failures.size(), 1u) << report_table(r);
  // Shrunk alone, as in FindsShrinksAndSavesAPlantedBug, whichever lane drew it.
  EXPECT_EQ(expect_replays(b.failures[0], bug, twin).in[2], 5) << b.failures[0].problem;
}

// Registered variants of one kind share cases: max.gather.stored, max.scatter.stored and
// max.gather.fixed.cf all read stored indices; max.scatter.stored reaches further along H and W,
// so it can run every case max.gather.stored draws. max.gather.recompute reads x: a group of its own.
TEST(Campaign, VariantsOfOneKindShareCasesAndOracleAnswers) {
  const CampaignReport r = run_campaign(
      cpu_campaign(cpu_targets("^(max\\.gather\\.stored|max\\.scatter\\.stored|max\\.gather\\.fixed\\.cf|max\\.gather\\.recompute)$"),
                   40, scratch("shared")));
  for (const LaneReport& l : r.lanes) {
    EXPECT_EQ(l.cases + l.discarded - l.from_group, 40) << l.variant << "\n" << report_table(r);
    EXPECT_EQ(l.oracles, l.cases - l.from_group) << l.variant;
  }
  EXPECT_GT(lane(r, "max.scatter.stored").from_group, 0) << report_table(r);
  EXPECT_EQ(lane(r, "max.gather.recompute").from_group, 0);

  // --share 0: each lane runs only its own cases, the same ones.
  CampaignOptions alone = cpu_campaign(cpu_targets("^(max\\.gather\\.stored|max\\.scatter\\.stored)$"), 40,
                                       scratch("unshared"));
  alone.share = 0;
  const CampaignReport a = run_campaign(alone);
  for (const LaneReport& l : a.lanes) {
    EXPECT_EQ(l.from_group, 0) << l.variant;
    EXPECT_EQ(l.cases + l.discarded, 40) << l.variant;
    EXPECT_EQ(l.oracles, l.cases) << l.variant;
  }
}

TEST(Campaign, VendorVariantsOnlyWhenAskedFor) {
  // A vendor library's variant (as cudnn.* are): `poolgrad fuzz` without --variants leaves it
  // out and names it; with --variants it is a target like any other.
  static const bool added = [] {
    Variant vendor = *find_variant("avg.gather");
    vendor.name = "test.vendor.avg";
    vendor.vendor = true;
    add_variants({vendor});
    return true;
  }();
  ASSERT_TRUE(added);
  const std::regex names("^test\\.vendor\\.");
  EXPECT_TRUE(registered_targets(names, true, false, /*vendor=*/false).empty());
  EXPECT_EQ(registered_targets(names, true, false, /*vendor=*/true).size(), 1u);
  EXPECT_EQ(vendor_variants_matching(names), std::vector<std::string>{"test.vendor.avg"});
  EXPECT_TRUE(vendor_variants_matching(std::regex("^avg\\.")).empty());
}

TEST(Campaign, SameSeedSameCasesWhateverTheJobs) {
  const std::string names = "^(max\\.gather\\.stored|avg\\.scatter\\.atomic|conv\\.scatter\\.atomic)$";
  CampaignOptions one = cpu_campaign(cpu_targets(names), 40, scratch("jobs1"));
  one.jobs = 1;
  CampaignOptions two = cpu_campaign(cpu_targets(names), 40, scratch("jobs2"));
  two.jobs = 3;
  const CampaignReport a = run_campaign(one), b = run_campaign(two);
  ASSERT_EQ(a.lanes.size(), 3u);
  for (const LaneReport& l : a.lanes) {
    EXPECT_EQ(l.cases, lane(b, l.variant).cases) << l.variant;
    EXPECT_EQ(l.discarded, lane(b, l.variant).discarded) << l.variant;
    EXPECT_EQ(l.tags, lane(b, l.variant).tags) << l.variant;
  }
  CampaignOptions other = cpu_campaign(cpu_targets(names), 40, scratch("seed"));
  other.seed += 1;
  const CampaignReport c = run_campaign(other);
  for (const char* v : {"max.gather.stored", "conv.scatter.atomic"}) EXPECT_NE(lane(c, v).tags, lane(a, v).tags) << v;
}

TEST(Campaign, ShardReportsMergeIntoTheWholeCampaign) {
  const std::string names = "^(max\\.gather\\.recompute|avg\\.direct|conv\\.gather)$";
  CampaignOptions whole = cpu_campaign(cpu_targets(names), 30, scratch("whole"));
  const CampaignReport all = run_campaign(whole);
  std::vector<CampaignReport> parts;
  for (int s = 0; s < 3; ++s) {
    CampaignOptions o = cpu_campaign(cpu_targets(names), 10, scratch("shard" + std::to_string(s)));
    o.shard = s;
    o.shard_count = 3;
    // Through JSON, as fuzz-merge reads them.
    parts.push_back(report_from_json(to_json(run_campaign(o))));
  }
  const CampaignReport merged = merge_reports(parts);
  EXPECT_EQ(merged.shards, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(merged.cases(), parts[0].cases() + parts[1].cases() + parts[2].cases());
  ASSERT_EQ(all.lanes.size(), 3u);
  for (const LaneReport& l : all.lanes) {
    // Shards 0, 1, 2 of 3 with 10 cases each ran exactly the 30 cases of the unsharded campaign.
    EXPECT_EQ(lane(merged, l.variant).cases, l.cases) << l.variant;
    EXPECT_EQ(lane(merged, l.variant).discarded, l.discarded) << l.variant;
    EXPECT_EQ(lane(merged, l.variant).tags, l.tags) << l.variant;
  }
  EXPECT_THROW(merge_reports({parts[0], parts[0]}), std::runtime_error);  // a shard twice
  CampaignReport other_seed = parts[1];
  other_seed.seed += 1;
  EXPECT_THROW(merge_reports({parts[0], other_seed}), std::runtime_error);
}

// Each lane's busy time is split by phase (src/harness/case_phases.hpp): the phases a verified
// case runs through are there, they add up to the lane's busy time, they survive the JSON and a
// merge adds them up; a report from before the phases still loads.
TEST(Campaign, LaneTimeSplitsIntoPhases) {
  CampaignOptions o = cpu_campaign(cpu_targets("^(max\\.gather\\.stored|conv\\.gather)$"), 30, scratch("phases"));
  const CampaignReport r = run_campaign(o);
  for (const LaneReport& l : r.lanes) {
    for (const char* phase : {"draw", "oracle", "prepare", "poison", "kernel", "download", "check", "compare"})
      EXPECT_GT(l.phase_s.count(phase) ? l.phase_s.at(phase) : 0.0, 0.0) << l.variant << " " << phase;
    double sum = 0;
    for (const auto& [phase, seconds] : l.phase_s) sum += seconds;
    EXPECT_NEAR(sum, l.busy_s, 0.02 * l.busy_s + 1e-3) << l.variant;
  }
  nlohmann::json j = to_json(r);
  const CampaignReport back = report_from_json(j);
  EXPECT_EQ(back.lanes[0].phase_s, r.lanes[0].phase_s);
  CampaignReport other = back;
  other.shards = {1};
  other.shard_count = 2;
  CampaignReport first = back;
  first.shard_count = 2;
  const CampaignReport merged = merge_reports({first, other});
  EXPECT_DOUBLE_EQ(merged.lanes[0].phase_s.at("oracle"), 2 * r.lanes[0].phase_s.at("oracle"));
  const std::string table = phase_table(r);
  EXPECT_NE(table.find("cpu"), std::string::npos) << table;
  EXPECT_LT(table.find("draw"), table.find("compare")) << table;  // in the order a case runs
  for (nlohmann::json& lj : j["lanes"]) lj.erase("phase_s");
  EXPECT_TRUE(report_from_json(j).lanes[0].phase_s.empty());
}

TEST(Campaign, CtrlCStopsItAndTheReportIsStillMade) {
  CampaignOptions o = cpu_campaign(cpu_targets("^avg\\.gather$"), 0, scratch("interrupt"));
  o.cases = 0;
  o.seconds = 600;
  const StopOnInterrupt interrupt;
  o.stop = &StopOnInterrupt::requested();
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(getpid(), SIGINT);
  });
  const auto t0 = std::chrono::steady_clock::now();
  const CampaignReport r = run_campaign(o);
  ctrl_c.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.interrupted);
  EXPECT_LT(took, 30);
  EXPECT_GT(r.cases(), 0);
  EXPECT_TRUE(to_json(r)["interrupted"].get<bool>());
}

// The poolgrad command ($POOLGRAD_EXE) run through the shell: its exit status.
int poolgrad(const std::string& args) {
  const char* exe = std::getenv("POOLGRAD_EXE");
  if (!exe) throw std::runtime_error("set POOLGRAD_EXE to the poolgrad executable");
  const int status = std::system((std::string(exe) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PoolgradCommand, FuzzMergeAndReplayFile) {
  const std::filesystem::path dir = scratch("command");
  std::filesystem::create_directories(dir);
  const std::string common =
      "fuzz --cases 8 --seed 11 --backend cpu --jobs 2 --variants '^(avg|conv)\\.gather$' --corpus " +
                             (dir / "cases").string();
  const std::string r0 = (dir / "r0.json").string(), r1 = (dir / "r1.json").string(), all = (dir / "all.json").string();
  EXPECT_EQ(poolgrad(common + " --shard 0/2 --report " + r0), 0);
  EXPECT_EQ(poolgrad(common + " --shard 1/2 --report " + r1), 0);
  EXPECT_EQ(poolgrad("fuzz-merge " + r0 + " " + r1 + " --out " + all), 0);
  std::ifstream in(all);
  const CampaignReport merged = report_from_json(nlohmann::json::parse(in));
  EXPECT_EQ(merged.cases(), 32);  // 8 cases x 2 shards x 2 variants
  EXPECT_EQ(lane(merged, "conv.gather").cases, 16);
  EXPECT_EQ(poolgrad("fuzz-merge " + r0 + " " + r0), 2);  // a shard twice
  for (const char* bad : {"--shard 2/2", "--cases 0", "--minutes 1 --cases 3", "--variants '('", "--variants nothing",
                          "--backend tpu", "--jobs 0", "--batch 0", "--share 0.95", "--share -1"})
    EXPECT_EQ(poolgrad(std::string("fuzz --backend cpu ") + bad), 2) << bad;

  // A case file of a registered variant replays; one that is not a case file is bad usage.
  const std::string passing = (dir / "passing.json").string();
  std::ofstream(passing) << case_json({"pool", "avg.gather", "cpu",
                                       "op=avg1d n=1 c=1 in=5 k=1 s=1 d=1 pb=0 pe=0 ceil=0 div=include_pad "
                                       "layout=ncdhw dtype=f32 padlimit=none avg3dcheck=0",
                                       {1, DataKind::special},
                                       ""},
                                      "", "", "")
                                .dump();
  EXPECT_EQ(poolgrad("replay " + passing), 0);
  const std::string conv_line = "op=conv2d n=2 c=8 k=16 g=2 in=9x9 ks=3x3 s=1x1 d=1x1 pb=1x1 pe=1x1 layout=ncdhw dtype=f32";
  const std::string conv_passing = (dir / "conv-passing.json").string();
  std::ofstream(conv_passing) << case_json({"conv", "conv.gather", "cpu", conv_line, {3, DataKind::ints}, ""}, "", "", "").dump();
  EXPECT_EQ(poolgrad("replay " + conv_passing), 0);
  // conv has no special data: the file is refused as bad usage
  const std::string conv_special = (dir / "conv-special.json").string();
  std::ofstream(conv_special) << case_json({"conv", "conv.gather", "cpu", conv_line, {3, DataKind::special}, ""}, "", "", "").dump();
  EXPECT_EQ(poolgrad("replay " + conv_special), 2);
  EXPECT_EQ(poolgrad("replay " + r0), 2);
  EXPECT_EQ(poolgrad("replay " + (dir / "missing.json").string()), 2);
}

}  // namespace
}  // namespace pg::fuzz
