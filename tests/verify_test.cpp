// The harness judged by kernels known to be wrong: small fake variants, written here, that
// write outside dx, skip an element or round bf16 by truncation must each be reported as a
// failure with a replay line (and a file), and one that writes the right answer must pass. Also
// the rounding oracle behind the f16/bf16 compare rule (reference/rounding.hpp), against
// hand-picked values and against numeric.hpp's converters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "kernels/common/numeric.hpp"
#include "reference/pool_reference.hpp"
#include "reference/rounding.hpp"
#include "src/harness/verify.hpp"

namespace pg {
namespace {

// A failed case whose report says `says`.
void expect_failure(const Outcome& o, const std::string& says) {
  ASSERT_EQ(o.status, Status::fail) << o.message;
  EXPECT_NE(o.message.find(says), std::string::npos) << o.message;
}

namespace fs = std::filesystem;

Variant fake(const std::string& name, LaunchFn body) {
  Variant v;
  v.name = "fake." + name;
  v.op = Op::avg;
  v.inputs = Inputs::dy_only;
  v.deterministic = true;
  v.supports_problem = [](const Problem&) { return Support::yes(); };
  v.workspace_bytes = [](const Problem&) { return size_t{0}; };
  v.launch_cpu = std::move(body);
  return v;
}

// 2 x 3 x 9 x 11 average pooling, 3x3 windows, stride 2, padding 1: most dx elements sum
// several terms.
Problem avg_problem(DType t) {
  Problem p;
  p.op = Op::avg;
  p.dims = 2;
  p.n = 2;
  p.c = 3;
  set_window(p, {.in = {9, 11}, .kernel = {3, 3}, .stride = {2, 2}, .pad_begin = {1, 1}, .pad_end = {1, 1}});
  p.dtype = t;
  finalize(p);
  return p;
}

// The right dx for the uploaded dy, from the oracle, as doubles.
std::vector<double> right_dx(const Problem& p, const BwdBuffers& b) {
  std::vector<double> dy(p.out_elems());
  for (int64_t i = 0; i < p.out_elems(); ++i) dy[i] = load_as_double(p.dtype, b.dy, i);
  return ref::backward_avg(p, dy).dx;
}

// Stores the right answer the way a kernel does: through f32, rounded to nearest even.
void write_right(const Problem& p, const BwdBuffers& b) {
  const std::vector<double> dx = right_dx(p, b);
  for (size_t i = 0; i < dx.size(); ++i) store_from_double(p.dtype, b.dx, static_cast<int64_t>(i), dx[i]);
}

size_t dx_bytes(const Problem& p) { return static_cast<size_t>(p.in_elems()) * dtype_size(p.dtype); }

// Each test its own failure directory, empty at the start.
class Harness : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("poolgrad-verify-") + info->name());
    fs::remove_all(dir_);
    setenv("POOLGRAD_FAILURE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override { unsetenv("POOLGRAD_FAILURE_DIR"); }

  Outcome verify(const Variant& v, const Problem& p, DataKind kind = DataKind::ints) {
    const DataSpec spec{3, kind};
    PreparedRun run(*backend_, v, p, spec, std::make_shared<const Expected>(compute_expected(p, spec)));
    return run.verify();
  }

  std::vector<fs::path> failure_files() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& entry : fs::directory_iterator(dir_)) out.push_back(entry.path());
    return out;
  }

  static std::string read(const fs::path& path) {
    std::ostringstream s;
    s << std::ifstream(path).rdbuf();
    return s.str();
  }

  std::unique_ptr<Backend> backend_ = make_cpu_backend();
  fs::path dir_;
};

TEST_F(Harness, RightAnswerPasses) {
  const Variant v = fake("right", [](Backend&, const Problem& p, const BwdBuffers& b) { write_right(p, b); });
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (DataKind kind : {DataKind::ints, DataKind::real}) {
      const Outcome o = verify(v, avg_problem(t), kind);
      EXPECT_EQ(o.status, Status::pass) << o.message;
    }
  EXPECT_TRUE(failure_files().empty());
}

TEST_F(Harness, WritePast256BytesBeyondDxIsAFailure) {
  const Variant v = fake("past300", [](Backend&, const Problem& p, const BwdBuffers& b) {
    write_right(p, b);
    std::memset(static_cast<unsigned char*>(b.dx) + dx_bytes(p), 0, 300);
  });
  const Outcome o = verify(v, avg_problem(DType::f32));
  ASSERT_EQ(o.status, Status::fail);
  EXPECT_NE(o.message.find("write past the end of dx (sentinel band changed at byte 2376 of a 2376-byte buffer)"), std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("replay: " + o.replay), std::string::npos) << o.message;
}

// 20 KB: inside the bands on every backend (at least 32 KiB on the CPU, 128 KiB on a GPU).
TEST_F(Harness, Write20KBBeyondDxIsAFailure) {
  const Variant v = fake("past20k", [](Backend&, const Problem& p, const BwdBuffers& b) {
    write_right(p, b);
    static_cast<unsigned char*>(b.dx)[dx_bytes(p) + 20 * 1024] = 1;
  });
  const Outcome o = verify(v, avg_problem(DType::bf16));
  expect_failure(o, "write past the end of dx (sentinel band changed at byte 21668 of a 1188-byte buffer)");
}

TEST_F(Harness, Write20KBBeforeDxIsAFailure) {
  const Variant v = fake("before20k", [](Backend&, const Problem& p, const BwdBuffers& b) {
    write_right(p, b);
    *(static_cast<unsigned char*>(b.dx) - 20 * 1024) = 1;
  });
  const Outcome o = verify(v, avg_problem(DType::f64));
  expect_failure(o, "write before the start of dx (sentinel band changed at byte -20480)");
}

TEST_F(Harness, UnwrittenElementIsReported) {
  const Variant v = fake("skips_one", [](Backend&, const Problem& p, const BwdBuffers& b) {
    const std::vector<double> dx = right_dx(p, b);
    for (size_t i = 0; i < dx.size(); ++i)
      if (i != 5) store_from_double(p.dtype, b.dx, static_cast<int64_t>(i), dx[i]);
  });
  const Outcome o = verify(v, avg_problem(DType::f16));
  expect_failure(o, "1 of 594 dx elements wrong");
  EXPECT_NE(o.message.find("(offset 5)"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("never written (still poisoned)"), std::string::npos) << o.message;
}

// f32 sum narrowed by dropping the low 16 bits: always within one bf16 step of the right value,
// which the old bound of (terms + 2) * u_bf16 * sum|terms| let pass.
TEST_F(Harness, TruncatingBf16IsCaughtOnRealData) {
  const Variant v = fake("bf16_truncates", [](Backend&, const Problem& p, const BwdBuffers& b) {
    const std::vector<double> dx = right_dx(p, b);
    for (size_t i = 0; i < dx.size(); ++i) {
      const uint16_t bits = static_cast<uint16_t>(bits_as<uint32_t>(static_cast<float>(dx[i])) >> 16);
      std::memcpy(static_cast<unsigned char*>(b.dx) + 2 * i, &bits, 2);
    }
  });
  const Outcome o = verify(v, avg_problem(DType::bf16), DataKind::real);
  expect_failure(o, "(the f32 sum's bound) rounded to bf16");
}

TEST_F(Harness, FailureFileHoldsTheReplayLine) {
  const Variant v = fake("skips_all", [](Backend&, const Problem&, const BwdBuffers&) {});
  const Outcome o = verify(v, avg_problem(DType::f32));
  ASSERT_EQ(o.status, Status::fail);
  const std::vector<fs::path> files = failure_files();
  ASSERT_EQ(files.size(), 1u);
  const std::string name = files[0].filename().string();
  EXPECT_EQ(name.rfind("fake.skips_all-cpu-ints-seed3-", 0), 0u) << name;
  for (char c : name) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') << name;
  EXPECT_EQ(read(files[0]), o.message + "\n");
  EXPECT_NE(o.replay.find("--variant fake.skips_all --backend cpu"), std::string::npos) << o.replay;
}

TEST_F(Harness, FailureFilesOfDifferentCasesDoNotCollide) {
  const Variant v = fake("skips_all", [](Backend&, const Problem&, const BwdBuffers&) {});
  EXPECT_EQ(verify(v, avg_problem(DType::f32)).status, Status::fail);
  EXPECT_EQ(verify(v, avg_problem(DType::f64)).status, Status::fail);
  EXPECT_EQ(verify(v, avg_problem(DType::f64), DataKind::real).status, Status::fail);
  EXPECT_EQ(failure_files().size(), 3u);
}

// The kernel sees its inputs in the dtype; an oracle answer computed from values the dtype
// cannot hold would blame the kernel for the difference.
TEST_F(Harness, DataTheDtypeCannotHoldIsRefused) {
  const Variant v = fake("right", [](Backend&, const Problem& p, const BwdBuffers& b) { write_right(p, b); });
  const Problem p = avg_problem(DType::bf16);
  Expected e = compute_expected(p, DataSpec{});
  e.data.dy[7] = 1 + 1.0 / 512;
  EXPECT_THROW(PreparedRun(*backend_, v, p, DataSpec{}, std::make_shared<const Expected>(e)), Error);
}

// Beyond the bands the CPU backend's guard pages fault; the handler prints the case and its
// replay line and leaves them in the failure directory before the process dies.
TEST_F(Harness, WriteFarPastDxCrashesWithTheReplayLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Variant v = fake("past10m", [](Backend&, const Problem& p, const BwdBuffers& b) {
    write_right(p, b);
    static_cast<volatile unsigned char*>(b.dx)[dx_bytes(p) + (size_t{10} << 20)] = 1;
  });
  const Problem p = avg_problem(DType::f32);
  EXPECT_DEATH(verify(v, p),
               "FAIL fake.past10m on cpu: crashed \\(out-of-bounds access\\).*"
               "replay: poolgrad replay .*--variant fake.past10m --backend cpu");
  const std::vector<fs::path> files = failure_files();
  ASSERT_EQ(files.size(), 1u);
  const std::string text = read(files[0]);
  EXPECT_NE(text.find("crashed (out-of-bounds access)"), std::string::npos) << text;
  EXPECT_NE(text.find("  problem: " + to_string(p)), std::string::npos) << text;
  EXPECT_NE(text.find("  replay: poolgrad replay"), std::string::npos) << text;
}

// --- reference/rounding.hpp ----------------------------------------------------------------------

double rne(DType t, double v) { return ref::round_nearest_even(t, v); }
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Rounding, Bf16HandPicked) {
  EXPECT_EQ(rne(DType::bf16, 1.0), 1.0);
  EXPECT_EQ(rne(DType::bf16, 1 + 0x1p-8), 1.0);                     // tie, to the even 1.0
  EXPECT_EQ(rne(DType::bf16, 1 + 3 * 0x1p-8), 1 + 0x1p-6);          // tie, to the even 1 + 2/128
  EXPECT_EQ(rne(DType::bf16, 1 + 0x1p-8 + 0x1p-40), 1 + 0x1p-7);    // just above a tie
  EXPECT_EQ(rne(DType::bf16, -(1 + 0x1p-8 + 0x1p-40)), -(1 + 0x1p-7));
  EXPECT_EQ(rne(DType::bf16, 1 + 0x1p-7 - 0x1p-30), 1 + 0x1p-7);    // not truncated
  const double max = 0x1.fep127;                                    // 0x7f7f
  EXPECT_EQ(rne(DType::bf16, max), max);
  EXPECT_EQ(rne(DType::bf16, 0x1.ffp127 - 0x1p100), max);           // below the tie at max
  EXPECT_EQ(rne(DType::bf16, 0x1.ffp127), kInf);                    // the tie at max overflows
  EXPECT_EQ(rne(DType::bf16, -0x1p200), -kInf);
  EXPECT_EQ(rne(DType::bf16, 0x1p-133), 0x1p-133);                  // smallest subnormal
  EXPECT_EQ(rne(DType::bf16, 0x1p-134), 0.0);                       // tie, to the even 0
  EXPECT_EQ(rne(DType::bf16, 0x1p-134 + 0x1p-160), 0x1p-133);
  EXPECT_EQ(rne(DType::bf16, 3 * 0x1p-134), 0x1p-132);              // tie, to the even 2 units
  EXPECT_EQ(rne(DType::bf16, 0x1p-126 - 0x1p-134), 0x1p-126);       // tie up into the normals
  EXPECT_TRUE(std::signbit(rne(DType::bf16, -0x1p-140)));
  EXPECT_TRUE(std::isnan(rne(DType::bf16, std::nan(""))));
}

TEST(Rounding, F16HandPicked) {
  EXPECT_EQ(rne(DType::f16, 2049), 2048);                            // tie, to even
  EXPECT_EQ(rne(DType::f16, 2051), 2052);                            // tie, to even
  EXPECT_EQ(rne(DType::f16, 2049.5), 2050);
  EXPECT_EQ(rne(DType::f16, 65504), 65504);                          // max finite
  EXPECT_EQ(rne(DType::f16, 65519.99), 65504);
  EXPECT_EQ(rne(DType::f16, 65520), kInf);                           // the tie at max overflows
  EXPECT_EQ(rne(DType::f16, -1e6), -kInf);
  EXPECT_EQ(rne(DType::f16, 0x1p-24), 0x1p-24);                      // smallest subnormal
  EXPECT_EQ(rne(DType::f16, 0x1p-25), 0.0);                          // tie, to the even 0
  EXPECT_EQ(rne(DType::f16, 3 * 0x1p-25), 0x1p-23);                  // tie, to the even 2 units
  EXPECT_EQ(rne(DType::f16, 0x1p-14 - 0x1p-25), 0x1p-14);            // tie up into the normals
  EXPECT_EQ(rne(DType::f16, 0x1p-14 - 0x1p-25 - 0x1p-40), 0x1p-14 - 0x1p-24);
  EXPECT_EQ(rne(DType::f16, 0.1), 0x1.998p-4);
  EXPECT_EQ(rne(DType::f16, kInf), kInf);
}

// Random doubles over f32's range and beyond, one in four an exact tie between two floats.
TEST(Rounding, F32MatchesTheCompilersConversion) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(0.5, 1);
  for (int i = 0; i < 200000; ++i) {
    double v = std::ldexp(mantissa(rng), static_cast<int>(rng() % 320) - 170);
    if (i % 4 == 0) {
      const float below = static_cast<float>(v);
      v = (static_cast<double>(below) + static_cast<double>(std::nextafter(below, std::numeric_limits<float>::infinity()))) / 2;
    }
    if (rng() % 2) v = -v;
    EXPECT_EQ(rne(DType::f32, v), static_cast<double>(static_cast<float>(v))) << std::hexfloat << v;
  }
}

// numeric.hpp's converters narrow an f32 with integer tricks; this file's oracle works on the
// value. Both round to nearest even, so they agree on every float. Exponents are drawn across
// each type's range (subnormals, overflow), and one case in four is an exact tie.
TEST(Rounding, AgreesWithNumericConvertersOnRandomFloats) {
  std::mt19937 rng(11);
  auto same = [](double a, double b) {
    return a == b && std::signbit(a) == std::signbit(b);
  };
  int checked = 0;
  for (int i = 0; i < 400000; ++i) {
    const bool for_f16 = i % 2 == 0;
    const uint32_t sign = rng() & 0x80000000u;
    const uint32_t exponent = for_f16 ? 127 - 27 + rng() % 45 : rng() % 256;  // f16: 2^-27 .. 2^17
    uint32_t fraction = rng() & 0x7fffffu;
    if (rng() % 4 == 0) fraction = for_f16 ? (fraction & ~0x1fffu) | 0x1000u : (fraction & ~0xffffu) | 0x8000u;
    const float f = bits_as<float>(sign | exponent << 23 | fraction);
    if (std::isnan(f)) continue;
    ++checked;
    if (for_f16) {
      const double kernel = to_float(to_f16(f));
      ASSERT_TRUE(same(rne(DType::f16, f), kernel)) << std::hexfloat << f << " -> " << kernel;
    } else {
      const double kernel = to_float(to_bf16(f));
      ASSERT_TRUE(same(rne(DType::bf16, f), kernel)) << std::hexfloat << f << " -> " << kernel;
    }
  }
  EXPECT_GT(checked, 390000);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// 1D average pooling on one plane of 2^23 elements, k2s2: big enough for the oracle to slice the
// plane over threads and for verify() to compare in slices. dx[i] = dy[i / 2] / 2 exactly.
Problem long_plane() {
  Problem p;
  p.op = Op::avg;
  p.dims = 1;
  p.in[2] = int64_t{1} << 23;
  p.kernel[2] = p.stride[2] = 2;
  finalize(p);
  return p;
}

TEST(ThreadedOracle, SlicedLongPlaneMatchesTheDefinition) {
  const Problem p = long_plane();
  const HostData d = make_data(p, DataSpec{5, DataKind::ints});
  const ref::Gradient g = ref::backward_avg(p, d.dy);
  int64_t bad = 0;
  for (int64_t i = 0; i < p.in_elems(); ++i) bad += g.dx[i] != d.dy[i / 2] / 2 || g.terms[i] != 1;
  EXPECT_EQ(bad, 0);
}

TEST_F(Harness, SlicedCompareReportsTheFirstMismatchesInOrder) {
  // Wrong elements in several slices: the report counts all and lists the lowest offsets first.
  const std::vector<int64_t> wrong = {7, 3000001, 5000002, 8000003};
  const Variant v = fake("wrong_in_slices", [&](Backend&, const Problem& p, const BwdBuffers& b) {
    write_right(p, b);
    for (int64_t i : wrong) store_from_double(p.dtype, b.dx, i, 1000.0);
  });
  const Outcome o = verify(v, long_plane());
  expect_failure(o, "4 of 8388608 dx elements wrong");
  size_t last = 0;
  for (int64_t i : wrong) {
    const size_t at = o.message.find("(offset " + std::to_string(i) + ")");
    ASSERT_NE(at, std::string::npos) << o.message;
    EXPECT_GT(at, last) << "reported in element order";
    last = at;
  }
}

}  // namespace
}  // namespace pg
