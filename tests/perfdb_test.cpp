// The user perf-db (src/harness/perfdb.hpp): what it finds, that concurrent writers (processes and
// threads) lose no entry and readers never see half a file, and that a damaged file is reported,
// read as empty and kept aside by the next write, never fatal and never silently destroyed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "src/model/backend.hpp"
#include "src/harness/perfdb.hpp"

namespace pg {
namespace {

namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("poolgrad_perfdb_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

PerfDbEntry entry(const std::string& problem, const std::string& variant, double ms) {
  PerfDbEntry e;
  e.device = "GPU X";
  e.arch = "sm_90";
  e.version = poolgrad_version();
  e.problem = problem;
  e.class_key = "class of " + problem;
  e.variant = variant;
  e.ms = ms;
  e.timed = {{variant, ms}, {"slower", 2 * ms}};
  e.date = "2026-11-24 00:00 UTC";
  return e;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PerfDb, FindsTheExactProblemOfThisDeviceAndVersionOnly) {
  const std::string path = fresh_dir("find") + "/sub/dir/perfdb.json";  // directories are made
  PerfDbEntry other_version = entry("p1", "old.choice", 1.0);
  other_version.version = "0.0.1";
  EXPECT_EQ(record_perfdb(path, {entry("p1", "a", 1.0), entry("p2", "b", 1.0), other_version}), "");
  const PerfDb db = load_perfdb(path);
  EXPECT_EQ(db.warning, "");
  ASSERT_EQ(db.entries.size(), 3u);
  const PerfDbEntry* e = find_tuned(db, "GPU X", "sm_90", "p1");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->variant, "a");
  ASSERT_EQ(e->timed.size(), 2u);
  EXPECT_EQ(find_tuned(db, "GPU Y", "sm_90", "p1"), nullptr);
  EXPECT_EQ(find_tuned(db, "GPU X", "sm_80", "p1"), nullptr);
  EXPECT_EQ(find_tuned(db, "GPU X", "sm_90", "p3"), nullptr);
  EXPECT_EQ(find_tuned_class(db, "GPU X", "sm_90", "class of p2").size(), 1u);
  // The same key again replaces the entry.
  record_perfdb(path, {entry("p1", "c", 0.5)});
  const PerfDb again = load_perfdb(path);
  EXPECT_EQ(again.entries.size(), 3u);
  EXPECT_EQ(find_tuned(again, "GPU X", "sm_90", "p1")->variant, "c");
}

TEST(PerfDb, AMissingFileIsEmptyWithoutAWarning) {
  const PerfDb db = load_perfdb(fresh_dir("missing") + "/none.json");
  EXPECT_TRUE(db.entries.empty());
  EXPECT_EQ(db.warning, "");
}

TEST(PerfDb, ConcurrentProcessesLoseNoEntry) {
  const std::string path = fresh_dir("processes") + "/perfdb.json";
  constexpr int kProcesses = 8, kEach = 20;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kEach; ++i)
        record_perfdb(path, {entry("p" + std::to_string(p) + "." + std::to_string(i), "v", 1.0 + i)});
      _exit(0);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const PerfDb db = load_perfdb(path);
  EXPECT_EQ(db.warning, "");
  std::set<std::string> problems;
  for (const PerfDbEntry& e : db.entries) problems.insert(e.problem);
  EXPECT_EQ(problems.size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_EQ(db.entries.size(), problems.size());
  for (const auto& f : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(f.path().filename().string().find(".tmp-"), std::string::npos) << "a temporary file was left: " << f.path();
}

TEST(PerfDb, ConcurrentThreadsLoseNoEntryAndReadersNeverSeeHalfAFile) {
  const std::string path = fresh_dir("threads") + "/perfdb.json";
  constexpr int kThreads = 6, kEach = 20;
  std::atomic<bool> writing{true};
  std::atomic<int> damaged_reads{0}, reads{0};
  std::thread reader([&] {
    while (writing) {
      if (!load_perfdb(path).warning.empty()) ++damaged_reads;
      ++reads;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t)
    writers.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) record_perfdb(path, {entry("t" + std::to_string(t) + "." + std::to_string(i), "v", 1.0)});
    });
  for (std::thread& w : writers) w.join();
  writing = false;
  reader.join();
  EXPECT_EQ(load_perfdb(path).entries.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(damaged_reads.load(), 0);
}

void expect_damaged_and_kept(const std::string& name, const std::string& text) {
  SCOPED_TRACE(name);
  const std::string dir = fresh_dir(name), path = dir + "/perfdb.json";
  { std::ofstream(path) << text; }
  const PerfDb db = load_perfdb(path);
  EXPECT_TRUE(db.entries.empty());
  EXPECT_NE(db.warning.find("is damaged"), std::string::npos) << db.warning;
  EXPECT_NE(db.warning.find(path), std::string::npos) << db.warning;
  // The next write keeps the damaged file aside, byte for byte, and starts a new one.
  const std::string warning = record_perfdb(path, {entry("p", "v", 1.0)});
  EXPECT_NE(warning.find("kept as"), std::string::npos) << warning;
  int aside = 0;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind("perfdb.json.damaged-", 0) == 0) {
      ++aside;
      EXPECT_EQ(read(f.path().string()), text);
    }
  EXPECT_EQ(aside, 1);
  const PerfDb fresh = load_perfdb(path);
  EXPECT_EQ(fresh.warning, "");
  EXPECT_EQ(fresh.entries.size(), 1u);
}

TEST(PerfDb, ADamagedFileIsReportedIgnoredAndKeptAside) {
  expect_damaged_and_kept("garbage", "this is not json {");
  expect_damaged_and_kept("truncated", R"({"format": "poolgrad-perfdb/1", "entries": [{"device": "GPU X", "ar)");
  expect_damaged_and_kept("other", R"({"format": "poolgrad-selection/2", "classes": {}})");
  expect_damaged_and_kept("bad-entry", R"({"format": "poolgrad-perfdb/1", "entries": [{"device": "GPU X"}]})");
  expect_damaged_and_kept("negative-time", R"({"format": "poolgrad-perfdb/1", "entries": [{"device": "d", "arch": "a",
      "poolgrad": "0.1.0", "problem": "p", "class": "c", "variant": "v", "ms": -1, "timed": []}]})");
  expect_damaged_and_kept("empty", "");
}

TEST(PerfDb, AnUnwritablePlaceIsAnErrorNamingThePathAndChangesNothing) {
  const std::string dir = fresh_dir("unwritable");
  const std::string blocker = dir + "/file";
  { std::ofstream(blocker) << "a file where a directory should be"; }
  try {
    record_perfdb(blocker + "/perfdb.json", {entry("p", "v", 1.0)});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(blocker), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(blocker), "a file where a directory should be");
  EXPECT_THROW(record_perfdb("", {entry("p", "v", 1.0)}), Error);
}

TEST(PerfDb, PathFromOptionThenEnvironment) {
  setenv("POOLGRAD_PERFDB", "/env/perfdb.json", 1);
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(perfdb_path("/opt/p.json"), "/opt/p.json");
  EXPECT_EQ(perfdb_path(""), "/env/perfdb.json");
  unsetenv("POOLGRAD_PERFDB");
  EXPECT_EQ(perfdb_path(""), "/xdg/poolgrad/perfdb.json");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(perfdb_path(""), "/home/u/.cache/poolgrad/perfdb.json");
  unsetenv("HOME");
  EXPECT_EQ(perfdb_path(""), "");
}

}  // namespace
}  // namespace pg
