// --variant auto's layers (src/harness/auto_variant.hpp) on the CPU backend: the perf-db's exact problem
// first, of this device and version only; a damaged perf-db is not fatal; a class (an unmeasured
// problem) and the model never default to an atomic variant where a deterministic one runs the
// problem, while an exact measured problem may pick one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/harness/auto_variant.hpp"
#include "src/harness/perfdb.hpp"
#include "src/harness/selection.hpp"
#include "tests/problems.hpp"

namespace pg {
namespace {

const DeviceInfo kDevice{"Test CPU", "cpu"};

using test::pool2d;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("poolgrad_auto_" + name + "_" + std::to_string(getpid()))).string();
}

PerfDbEntry tuned(const Problem& p, const std::string& variant) {
  PerfDbEntry e;
  e.device = kDevice.name;
  e.arch = kDevice.arch;
  e.version = poolgrad_version();
  e.problem = to_string(p);
  e.class_key = problem_class(p);
  e.variant = variant;
  e.ms = 1.0;
  e.timed = {{variant, 1.0}};
  e.date = "today";
  return e;
}

class AutoVariant : public ::testing::Test {
 protected:
  void TearDown() override {
    set_perfdb_file("");
    std::filesystem::remove(path_);
  }
  std::string path_ = temp_path("perfdb.json");
};

TEST_F(AutoVariant, ThePerfDbsExactProblemDecidesFirst) {
  const Problem p = pool2d(Op::max, 2, 8, 32, 3, 2, 1);
  set_perfdb_file(path_);
  const AutoChoice before = choose_auto_variant(p, BackendKind::cpu, kDevice);
  ASSERT_NE(before.variant, nullptr);
  EXPECT_FALSE(before.tuned);
  // A variant the tables would not pick, recorded as tuned: it decides.
  const std::string other = before.variant->name == "max.gather.stored" ? "max.gather.stored.run" : "max.gather.stored";
  record_perfdb(path_, {tuned(p, other)});
  forget_auto_tables();
  const AutoChoice after = choose_auto_variant(p, BackendKind::cpu, kDevice);
  ASSERT_NE(after.variant, nullptr);
  EXPECT_EQ(after.variant->name, other);
  EXPECT_TRUE(after.tuned);
  EXPECT_EQ(after.layer, "perf-db, exact problem");
  EXPECT_NE(after.why.find(path_), std::string::npos) << after.why;
  // Another device, or another poolgrad version, is not this one.
  EXPECT_FALSE(choose_auto_variant(p, BackendKind::cpu, DeviceInfo{"Other CPU", "cpu"}).tuned);
  PerfDbEntry old = tuned(pool2d(Op::max, 2, 8, 33, 3, 2, 1), other);
  old.version = "0.0.1";
  record_perfdb(path_, {old});
  forget_auto_tables();
  EXPECT_FALSE(choose_auto_variant(pool2d(Op::max, 2, 8, 33, 3, 2, 1), BackendKind::cpu, kDevice).tuned);
}

TEST_F(AutoVariant, ADamagedPerfDbIsNotFatal) {
  { std::ofstream(path_) << "{ damaged"; }
  set_perfdb_file(path_);
  const AutoChoice c = choose_auto_variant(pool2d(Op::avg, 2, 8, 32, 2, 2, 0), BackendKind::cpu, kDevice);
  ASSERT_NE(c.variant, nullptr);
  EXPECT_FALSE(c.tuned);
}

// A table with one measured problem of avg k3s1p1 where the atomic variant was fastest.
SelectionTable atomic_fastest_table(const Problem& measured) {
  return build_selection_table({{"avg.scatter.atomic", "row", measured, 1.0, false},
                                {"avg.gather", "row", measured, 1.2, true}},
                               "Test CPU (cpu)", {"test"}, false);
}

// auto picked `variant`, and the layer that decided names `layer`.
void expect_choice(const AutoChoice& c, const std::string& variant, const std::string& layer) {
  ASSERT_NE(c.variant, nullptr);
  EXPECT_EQ(c.variant->name, variant);
  EXPECT_NE(c.layer.find(layer), std::string::npos) << c.layer;
}

TEST_F(AutoVariant, AnExactMeasuredProblemMayPickAnAtomicVariant) {
  const Problem measured = pool2d(Op::avg, 2, 8, 32, 3, 1, 1);
  AutoTables t;
  t.files.push_back(atomic_fastest_table(measured));
  expect_choice(choose_auto_variant(t, measured, BackendKind::cpu, kDevice), "avg.scatter.atomic", "exact problem");
}

TEST_F(AutoVariant, AClassOfAnUnmeasuredProblemDefaultsToADeterministicVariant) {
  const Problem measured = pool2d(Op::avg, 2, 8, 32, 3, 1, 1), unmeasured = pool2d(Op::avg, 3, 8, 32, 3, 1, 1);
  ASSERT_EQ(problem_class(measured), problem_class(unmeasured));
  AutoTables t;
  t.files.push_back(atomic_fastest_table(measured));
  expect_choice(choose_auto_variant(t, unmeasured, BackendKind::cpu, kDevice), "avg.gather", "class");
}

TEST_F(AutoVariant, TheModelNeverDefaultsToAnAtomicVariant) {
  AutoTables t;  // nothing measured at all: the model decides every problem
  const std::vector<Problem> problems = {pool2d(Op::max, 2, 8, 32, 3, 2, 1), pool2d(Op::max, 1, 3, 17, 5, 1, 2),
                                         pool2d(Op::avg, 2, 8, 32, 3, 1, 1), pool2d(Op::avg, 1, 4, 9, 2, 3, 0)};
  for (const Problem& p : problems) {
    const AutoChoice c = choose_auto_variant(t, p, BackendKind::cpu, kDevice);
    ASSERT_NE(c.variant, nullptr) << to_string(p);
    EXPECT_EQ(c.layer, "model");
    EXPECT_TRUE(c.variant->deterministic) << to_string(p) << ": " << c.variant->name;
  }
}

}  // namespace
}  // namespace pg
