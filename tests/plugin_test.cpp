// Plugins through the poolgrad command (src/harness/plugin.cpp): the example plugin's variants are listed,
// checked and fuzzed like poolgrad's own, its planted bug is found, shrunk and replayed from the
// case file; broken plugins are refused with one line naming the path, exit 2.
//
// Environment (tests/meson.build): POOLGRAD_EXE, and the plugins EXAMPLE_PLUGIN (examples/plugin),
// ABI_MISMATCH_PLUGIN and NO_ENTRY_PLUGIN (tests/plugins/).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "poolgrad/version.h"

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  EXPECT_NE(v, nullptr) << "set " << name << " (tests/meson.build does)";
  return v ? v : "";
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Result {
  int exit_code = -1;
  std::string out, err;
};

class PluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poolgrad-plugin-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // poolgrad with `args` (a shell fragment), in the test's directory.
  Result poolgrad(const std::string& args) {
    const std::string command = "cd '" + dir_.string() + "' && POOLGRAD_FAILURE_DIR=failures '" + env("POOLGRAD_EXE") +
                                "' " + args + " >out.txt 2>err.txt";
    const int status = std::system(command.c_str());
    Result r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read(dir_ / "out.txt");
    r.err = read(dir_ / "err.txt");
    return r;
  }

  fs::path dir_;
};

const std::string kGood = "example.max.scatter", kBuggy = "example.max.scatter.bug";

TEST_F(PluginTest, VariantsListsThePluginsVariantsByTheirFullNames) {
  const Result r = poolgrad("variants --plugin '" + env("EXAMPLE_PLUGIN") + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(kGood + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(kBuggy + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max.gather.stored"), std::string::npos) << "poolgrad's own stay: " << r.out;
  EXPECT_NE(r.out.find("plugin: " + fs::canonical(env("EXAMPLE_PLUGIN")).string()), std::string::npos) << "the source is named: " << r.out;
}

TEST_F(PluginTest, CheckPassesTheCorrectVariant) {
  const Result r = poolgrad("check --plugin '" + env("EXAMPLE_PLUGIN") + "' --variant " + kGood);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
}

TEST_F(PluginTest, FuzzFindsThePlantedBugShrinksItAndTheCaseFileReplays) {
  const Result r = poolgrad("fuzz --plugin '" + env("EXAMPLE_PLUGIN") +
                         "' --variants 'scatter\\.bug$' --backend cpu --cases 300 --seed 1 --jobs 2 --corpus cases");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir_ / "cases")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u) << r.out;
  const nlohmann::json c = nlohmann::json::parse(read(files[0]));
  EXPECT_EQ(c["variant"], kBuggy);
  EXPECT_EQ(fs::path(c["plugin"].get<std::string>()), fs::canonical(env("EXAMPLE_PLUGIN")));
  // Shrunk: one plane is enough to show the bug.
  const std::string problem = c["problem"];
  EXPECT_NE(problem.find(" n=1 c=1 "), std::string::npos) << problem;

  const Result replay = poolgrad("replay '" + files[0].string() + "'");
  EXPECT_EQ(replay.exit_code, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("FAIL " + kBuggy), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("--plugin '" + fs::canonical(env("EXAMPLE_PLUGIN")).string() + "'"), std::string::npos)
      << "the replay line loads the plugin: " << replay.out;
}

TEST_F(PluginTest, FuzzPassesTheCorrectVariant) {
  const Result r = poolgrad("fuzz --plugin '" + env("EXAMPLE_PLUGIN") + "' --variants '^" + kGood +
                         "$' --backend cpu --cases 200 --seed 1 --jobs 2 --corpus cases");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(PluginTest, BenchTimesThePluginVariant) {
  const Result r = poolgrad("bench --plugin '" + env("EXAMPLE_PLUGIN") + "' --backend cpu --variant " + kGood +
                         " --op max_pool2d --input-size 1,2,16,16 --kernel-size 3 --stride 2 --padding 1 --min-time 0.01 --out bench.json");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(read(dir_ / "bench.json").find(kGood), std::string::npos);
}

TEST_F(PluginTest, AnotherAbiVersionIsRefusedByNumber) {
  const std::string path = env("ABI_MISMATCH_PLUGIN");
  const Result r = poolgrad("check --plugin '" + path + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "poolgrad check: --plugin " + path + ": ABI version " + std::to_string(POOLGRAD_PLUGIN_ABI_VERSION + 98) +
                       ", this poolgrad speaks " + std::to_string(POOLGRAD_PLUGIN_ABI_VERSION) + "\n");
}

TEST_F(PluginTest, ALibraryWithoutTheEntryPointIsRefused) {
  const std::string path = env("NO_ENTRY_PLUGIN");
  const Result r = poolgrad("fuzz --plugin '" + path + "' --cases 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "poolgrad fuzz: --plugin " + path + ": no poolgrad_plugin_entry symbol: not a poolgrad plugin\n");
}

TEST_F(PluginTest, APathThatIsNotThereIsRefused) {
  const Result r = poolgrad("variants --plugin ./missing.so");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("poolgrad variants: --plugin ./missing.so: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(PluginTest, AFileThatIsNotALibraryIsRefused) {
  std::ofstream(dir_ / "text.so") << "not ELF\n";
  const Result r = poolgrad("bench --plugin text.so --list");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("poolgrad bench: --plugin text.so: cannot load: ", 0), 0u) << r.err;
}

}  // namespace
