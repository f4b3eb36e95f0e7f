// Campaigns on the CPU backend, over variant lists the test builds (the planted-bug variant is
// registered nowhere but here): a planted bug is found, shrunk, written as a case file and
// reproduced from it; the same seed gives the same cases whatever the job count; shard reports
// merge into the whole campaign; Ctrl-C stops a campaign that still reports; and the poolgrad
// command's fuzz, fuzz-merge and replay FILE with their exit statuses.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fuzz/campaign.hpp"
#include "fuzz/case_file.hpp"
#include "fuzz/interrupt.hpp"
#include "fuzz/pool_target.hpp"
#include "src/verify.hpp"

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

CampaignOptions cpu_campaign(const std::vector<const Variant*>& vs, int64_t cases, const std::filesystem::path& corpus) {
  CampaignOptions o;
  for (const Variant* v : vs) o.targets.push_back(pool_target(*v, BackendKind::cpu));
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

TEST(Campaign, FindsShrinksAndSavesAPlantedBug) {
  const std::filesystem::path corpus = scratch("planted");
  const Variant& bug = planted_bug_variant();
  const CampaignReport r = run_campaign(cpu_campaign({&bug, find_variant("avg.gather")}, 150, corpus));

  EXPECT_TRUE(lane(r, "avg.gather").failures.empty()) << report_table(r);
  const LaneReport& l = lane(r, bug.name);
  ASSERT_EQ(l.failures.size(), 1u) << report_table(r);
  const FailureRecord& f = l.failures[0];
  EXPECT_EQ(f.signature, "dx elements wrong: outside the bound");
  EXPECT_GE(f.count, 1);

  PoolCaseFile c;
  std::string error;
  ASSERT_TRUE(read_pool_case_file(f.case_file, &c, &error)) << error;
  EXPECT_EQ(c.variant, bug.name);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.problem, f.problem);
  Problem p;
  ASSERT_TRUE(parse_problem(c.problem, &p, &error)) << error;
  // Shrunk: the smallest W that shows the bug, one batch, one channel.
  EXPECT_EQ(p.in[2], 5) << c.problem;
  EXPECT_EQ(p.n, 1) << c.problem;
  EXPECT_EQ(p.c, 1) << c.problem;

  // Replayed from the file, the way `poolgrad replay FILE` does: the same failure.
  const auto cpu = make_cpu_backend();
  VerifyOptions quiet;
  quiet.write_failure_file = false;
  const Outcome again = run_and_verify(*cpu, bug, p, c.data, quiet);
  EXPECT_EQ(again.status, Status::fail);
  EXPECT_EQ(again.signature, f.signature);
  // and the correct variant passes it
  EXPECT_EQ(run_and_verify(*cpu, *find_variant("avg.gather"), p, c.data, quiet).status, Status::pass);
}

TEST(Campaign, SameSeedSameCasesWhateverTheJobs) {
  const std::vector<const Variant*> vs = {find_variant("max.gather.stored"), find_variant("avg.scatter.atomic")};
  CampaignOptions one = cpu_campaign(vs, 40, scratch("jobs1"));
  one.jobs = 1;
  CampaignOptions two = cpu_campaign(vs, 40, scratch("jobs2"));
  two.jobs = 3;
  const CampaignReport a = run_campaign(one), b = run_campaign(two);
  for (const Variant* v : vs) {
    EXPECT_EQ(lane(a, v->name).cases, lane(b, v->name).cases) << v->name;
    EXPECT_EQ(lane(a, v->name).discarded, lane(b, v->name).discarded) << v->name;
    EXPECT_EQ(lane(a, v->name).tags, lane(b, v->name).tags) << v->name;
  }
  CampaignOptions other = cpu_campaign(vs, 40, scratch("seed"));
  other.seed += 1;
  EXPECT_NE(lane(run_campaign(other), "max.gather.stored").tags, lane(a, "max.gather.stored").tags);
}

TEST(Campaign, ShardReportsMergeIntoTheWholeCampaign) {
  const std::vector<const Variant*> vs = {find_variant("max.gather.recompute"), find_variant("avg.direct")};
  CampaignOptions whole = cpu_campaign(vs, 30, scratch("whole"));
  const CampaignReport all = run_campaign(whole);
  std::vector<CampaignReport> parts;
  for (int s = 0; s < 3; ++s) {
    CampaignOptions o = cpu_campaign(vs, 10, scratch("shard" + std::to_string(s)));
    o.shard = s;
    o.shard_count = 3;
    // Through JSON, as fuzz-merge reads them.
    parts.push_back(report_from_json(to_json(run_campaign(o))));
  }
  const CampaignReport merged = merge_reports(parts);
  EXPECT_EQ(merged.shards, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(merged.cases(), parts[0].cases() + parts[1].cases() + parts[2].cases());
  for (const Variant* v : vs) {
    // Shards 0, 1, 2 of 3 with 10 cases each ran exactly the 30 cases of the unsharded campaign.
    EXPECT_EQ(lane(merged, v->name).cases, lane(all, v->name).cases) << v->name;
    EXPECT_EQ(lane(merged, v->name).discarded, lane(all, v->name).discarded) << v->name;
    EXPECT_EQ(lane(merged, v->name).tags, lane(all, v->name).tags) << v->name;
  }
  EXPECT_THROW(merge_reports({parts[0], parts[0]}), std::runtime_error);  // a shard twice
  CampaignReport other_seed = parts[1];
  other_seed.seed += 1;
  EXPECT_THROW(merge_reports({parts[0], other_seed}), std::runtime_error);
}

TEST(Campaign, CtrlCStopsItAndTheReportIsStillMade) {
  CampaignOptions o = cpu_campaign({find_variant("avg.gather")}, 0, scratch("interrupt"));
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
  const std::string common = "fuzz --cases 8 --seed 11 --backend cpu --jobs 2 --variants '^avg\\.gather$' --corpus " +
                             (dir / "cases").string();
  const std::string r0 = (dir / "r0.json").string(), r1 = (dir / "r1.json").string(), all = (dir / "all.json").string();
  EXPECT_EQ(poolgrad(common + " --shard 0/2 --report " + r0), 0);
  EXPECT_EQ(poolgrad(common + " --shard 1/2 --report " + r1), 0);
  EXPECT_EQ(poolgrad("fuzz-merge " + r0 + " " + r1 + " --out " + all), 0);
  std::ifstream in(all);
  const CampaignReport merged = report_from_json(nlohmann::json::parse(in));
  EXPECT_EQ(merged.cases(), 16);
  EXPECT_EQ(poolgrad("fuzz-merge " + r0 + " " + r0), 2);  // a shard twice
  for (const char* bad : {"--shard 2/2", "--cases 0", "--minutes 1 --cases 3", "--variants '('", "--variants nothing",
                          "--backend tpu", "--jobs 0"})
    EXPECT_EQ(poolgrad(std::string("fuzz --backend cpu ") + bad), 2) << bad;

  // A case file of a registered variant replays; one that is not a case file is bad usage.
  const std::string passing = (dir / "passing.json").string();
  std::ofstream(passing) << pool_case_json({"avg.gather", "cpu",
                                            "op=avg1d n=1 c=1 in=5 k=1 s=1 d=1 pb=0 pe=0 ceil=0 div=include_pad "
                                            "layout=ncdhw dtype=f32 padlimit=none avg3dcheck=0",
                                            {1, DataKind::special},
                                            ""},
                                           "", "", "")
                                .dump();
  EXPECT_EQ(poolgrad("replay " + passing), 0);
  EXPECT_EQ(poolgrad("replay " + r0), 2);
  EXPECT_EQ(poolgrad("replay " + (dir / "missing.json").string()), 2);
}

}  // namespace
}  // namespace pg::fuzz
