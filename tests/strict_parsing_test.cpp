// Strict numbers, lists and problem strings (src/model/parse_number.hpp, parse_problem), atomic
// outputs (src/harness/output_file.hpp) and the host-memory check: the units behind issue 14's CLI
// rows, tested directly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "src/harness/host_memory.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/output_file.hpp"
#include "src/model/parse_number.hpp"
#include "src/model/problem.hpp"

namespace pg {
namespace {

namespace fs = std::filesystem;

std::string why_int(const std::string& text) {
  std::string why;
  return parse_int64(text, &why) ? "" : why;
}

TEST(StrictNumbers, AcceptOnlyPlainDecimals) {
  std::string why;
  EXPECT_EQ(parse_int64("42", &why), 42);
  EXPECT_EQ(parse_int64("-7", &why), -7);
  EXPECT_EQ(parse_int64("010", &why), 10);
  EXPECT_EQ(parse_int64("9223372036854775807", &why), INT64_MAX);
  EXPECT_EQ(parse_int64("-9223372036854775808", &why), INT64_MIN);
  for (const char* bad : {" 2", "2 ", "+2", "0x2", "2a", "1e3", "2.0", "-", "--2", "\xff"})
    EXPECT_NE(why_int(bad).find("not a decimal integer"), std::string::npos) << "'" << bad << "'";
  EXPECT_EQ(why_int(""), "is empty");
  for (const char* huge : {"9223372036854775808", "-9223372036854775809", "99999999999999999999"})
    EXPECT_NE(why_int(huge).find("out of range"), std::string::npos) << huge;
}

TEST(StrictNumbers, ListsHaveNoEmptyElements) {
  std::string why;
  EXPECT_EQ(parse_int64_list("2,3,4", ',', &why), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(parse_int64_list("5", ',', &why), (std::vector<int64_t>{5}));
  for (const char* bad : {"2,,2", ",2", "2,", "", ",", "2;3"}) {
    EXPECT_FALSE(parse_int64_list(bad, ',', &why)) << "'" << bad << "'";
    EXPECT_NE(why.find("element"), std::string::npos) << why;
  }
  EXPECT_FALSE(parse_int64_list("2,,2", ',', &why));
  EXPECT_EQ(why, "element 2 ('') is empty");
}

std::string problem_error(const std::string& text) {
  Problem p;
  std::string error;
  return parse_problem(text, &p, &error) ? "" : error;
}

TEST(StrictProblemStrings, RefuseJunkDuplicatesAndBadFlags) {
  const std::string good = "op=max2d n=1 c=3 in=7x7 k=3x3 s=1x1 d=1x1 pb=1x1 pe=1x1 ceil=0";
  EXPECT_EQ(problem_error(good), "");
  Problem p;
  std::string error;
  ASSERT_TRUE(parse_problem(good, &p, &error));
  EXPECT_EQ(parse_problem(to_string(p), &p, &error), true) << error;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"op=max2d n=1junk", "n = '1junk' is not a decimal integer"},
      {"op=max2d c=+3", "c = '+3' is not a decimal integer"},
      {"op=max2d ceil=yes", "ceil = 'yes' must be 0 or 1"},
      {"op=max2d avg3dcheck=2", "avg3dcheck = '2' must be 0 or 1"},
      {"op=max2d k=2x2x", "k = '2x2x': element 3 ('') is empty"},
      {"op=max2d k=2xx2", "element 2 ('') is empty"},
      {"op=max2d k=0x2x2", "has 3 values for a 2D problem"},
      {"op=max2d n=1 n=2", "key 'n' is given twice"},
      {"op=max2d n=99999999999999999999", "out of range"},
      {"op=avg1d override=2.5", "override = '2.5' is not a decimal integer"},
      {"op=max2d idx=plane", "expected FORMAT/TYPE"},
      {"op=max2d idx=plane/i65", "idx = 'i65' is not one of"},
      {"op=max2d dtype=f8", "dtype = 'f8' is not one of"},
      {"op=max2d junk", "token 'junk' is not key=value"},
      {"op=max2d =3", "token '=3' is not key=value"},
      {"n=1", "op must be"},
  };
  for (const auto& [text, says] : bad) EXPECT_NE(problem_error(text).find(says), std::string::npos) << text << ": " << problem_error(text);
}

TEST(Validation, KernelVolumeMustFitInt64) {
  Problem p;
  p.dims = 3;
  p.pad_limit = PadLimit::none;
  for (int a = 0; a < kAxes; ++a) {
    p.in[a] = 4;
    p.kernel[a] = int64_t{1} << 40;
    p.pad_begin[a] = p.pad_end[a] = int64_t{1} << 39;
  }
  finalize(p);
  EXPECT_NE(validate(p).find("kernel_size volume"), std::string::npos) << validate(p);
}

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("poolgrad-output-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  fs::path dir_;
};

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST_F(OutputFiles, SamePathsAreRefused) {
  std::ofstream(path("in.npy")) << "x";
  fs::create_symlink(path("in.npy"), path("link.npy"));
  EXPECT_NE(refusal([&] { check_paths({{"--input", path("in.npy")}}, {{"--output", path("in.npy")}}); }).find("same file as --input"), std::string::npos);
  EXPECT_NE(refusal([&] { check_paths({{"--input", path("in.npy")}}, {{"--output", path("link.npy")}}); }).find("same file as --input"), std::string::npos);
  EXPECT_NE(refusal([&] { check_paths({{"--input", path("in.npy")}}, {{"--output", path("./sub/../in.npy")}}); }).find("same file"), std::string::npos);
  EXPECT_NE(refusal([&] { check_paths({}, {{"--output", path("a.npy")}, {"--indices-output", path("a.npy")}}); }).find("same file as --output"), std::string::npos);
  EXPECT_NE(refusal([&] { check_paths({}, {{"--output", "/dev/full"}}); }).find("not a regular file"), std::string::npos);
  EXPECT_EQ(refusal([&] { check_paths({{"--input", path("in.npy")}}, {{"--output", path("a.npy")}, {"--indices-output", path("b.npy")}}); }), "");
}

TEST_F(OutputFiles, NothingChangesUntilEveryOutputIsStaged) {
  std::ofstream(path("y.npy")) << "old y";
  {
    OutputCommit c;
    c.stage({"--output", path("y.npy")}, {'n', 'e', 'w'});
    EXPECT_NE(refusal([&] { c.stage({"--indices-output", path("missing/i.npy")}, {'i'}); }).find("--indices-output"), std::string::npos);
  }
  EXPECT_EQ(read(path("y.npy")), "old y");
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 1u) << "the staged temporary is removed";
  OutputCommit c;
  c.stage({"--output", path("y.npy")}, {'n', 'e', 'w'});
  c.stage({"--indices-output", path("i.npy")}, {'i'});
  c.commit();
  EXPECT_EQ(read(path("y.npy")), "new");
  EXPECT_EQ(read(path("i.npy")), "i");
}

TEST(HostMemory, RefusesBeyondWhatIsAvailable) {
  EXPECT_GT(host_memory_available(), 0);
  EXPECT_NO_THROW(require_host_memory(1024, "a small job"));
  try {
    require_host_memory(1e30, "the huge job");
    ADD_FAILURE() << "1e30 bytes accepted";
  } catch (const OutOfHostMemory& e) {
    EXPECT_NE(std::string(e.what()).find("the huge job needs about 1000000000000000019884624838656 bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pg
