// The C++ API (include/poolgrad/poolgrad.hpp) as a program linked to libpoolgrad sees it: no
// internal header, the example plugin (EXAMPLE_PLUGIN) loaded in-process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "poolgrad/poolgrad.hpp"

namespace {

const std::string kLine =
    "op=max2d n=2 c=3 in=9x9 k=3x3 s=2x2 d=1x1 pb=1x1 pe=1x1 ceil=0 tie=first nan=propagate idx=plane/i64 "
    "layout=ncdhw dtype=f32 padlimit=half avg3dcheck=1";

void load_example() {
  const char* path = std::getenv("EXAMPLE_PLUGIN");
  ASSERT_NE(path, nullptr) << "set EXAMPLE_PLUGIN (tests/meson.build does)";
  poolgrad::load_plugin(path);
}

TEST(LibraryApi, VersionIsTheHeaders) { EXPECT_EQ(poolgrad::version(), POOLGRAD_VERSION_STRING); }

TEST(LibraryApi, AProblemLineComesBackUnchanged) {
  const poolgrad_problem p = poolgrad::parse_problem(kLine);
  EXPECT_EQ(p.op, POOLGRAD_OP_MAX);
  EXPECT_EQ(p.out[1], 5);
  EXPECT_EQ(p.out[2], 5);
  EXPECT_EQ(poolgrad::to_string(p), kLine);
}

TEST(LibraryApi, ABadProblemLineNamesTheParameter) {
  try {
    poolgrad::parse_problem("op=max1d in=4 k=0");
    FAIL() << "k=0 was accepted";
  } catch (const poolgrad::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel"), std::string::npos) << e.what();
  }
}

TEST(LibraryApi, TheOracleRoutesEachGradientToItsMaximum) {
  const poolgrad_problem p = poolgrad::parse_problem("op=max1d n=1 c=1 in=4 k=2 s=2 d=1 pb=0 pe=0 ceil=0");
  EXPECT_EQ(poolgrad::oracle_backward(p, {1, 3, 5, 2}, {10, 20}), (std::vector<double>{0, 10, 20, 0}));
}

TEST(LibraryApi, PluginVariantsAreRegisteredVerifiedTimedAndFuzzed) {
  load_example();
  load_example();  // the same file twice: loaded once
  int found = 0;
  for (const poolgrad::VariantInfo& v : poolgrad::variants())
    if (v.name.rfind("example.", 0) == 0) {
      ++found;
      EXPECT_TRUE(v.runs_on_cpu);
      EXPECT_FALSE(v.plugin.empty());
    }
  EXPECT_EQ(found, 2);

  const poolgrad_problem p = poolgrad::parse_problem(kLine);
  EXPECT_EQ(poolgrad::supports("example.max.scatter", p), "");
  EXPECT_EQ(poolgrad::run_and_verify("example.max.scatter", p).status, poolgrad::Verdict::pass);
  const poolgrad::Verdict bug = poolgrad::run_and_verify("example.max.scatter.bug", p);
  EXPECT_EQ(bug.status, poolgrad::Verdict::fail);
  EXPECT_NE(bug.replay.find("--plugin"), std::string::npos) << bug.replay;
  const poolgrad_problem nhwc = poolgrad::parse_problem(
      "op=max2d n=1 c=2 in=4x4 k=2x2 s=2x2 d=1x1 pb=0x0 pe=0x0 ceil=0 layout=ndhwc dtype=f32");
  EXPECT_NE(poolgrad::supports("example.max.scatter", nhwc), "");

  EXPECT_EQ(poolgrad::time_variant("example.max.scatter", p, "cpu", 3).runs, 3);

  poolgrad::FuzzOptions fo;
  fo.variants = "^example\\.";
  fo.cases = 200;
  fo.jobs = 2;
  fo.corpus = (std::filesystem::temp_directory_path() / "poolgrad-library-api-cases").string();
  const poolgrad::FuzzResult r = poolgrad::fuzz(fo);
  EXPECT_GT(r.cases, 0);
  ASSERT_EQ(r.case_files.size(), 1u) << r.table;
  EXPECT_NE(r.case_files[0].find("example.max.scatter.bug"), std::string::npos);
  std::filesystem::remove_all(fo.corpus);
}

TEST(LibraryApi, AnUnknownVariantIsNamed) {
  EXPECT_THROW(poolgrad::run_and_verify("no.such", poolgrad::parse_problem(kLine)), poolgrad::Error);
}

}  // namespace
