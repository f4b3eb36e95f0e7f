// The oracle against PyTorch 2.11: every case of tests/golden/pytorch_pool.json (made by
// tools/make_golden.py on the CPU) through plan_pool/pool_forward/pool_backward, the code
// `poolgrad forward|backward` runs, and a handful through the real executable.
//
// Required: f64 bit-exact (PyTorch's CPU kernels sum in the oracle's row-major order and divide
// once), f32 within (taps + 2) unit roundoffs of the sum of |terms| (PyTorch accumulates f32
// in f32), max indices equal, and a refusal of every case PyTorch refuses, and of no other.
//
// Excluded from the index comparison: windows whose taps all lie in padding (dilation with
// padding, the cases flagged no_tap_windows). PyTorch returns y = -inf with an index that is
// not a tap of the window (its scan start, after skipping the padding, lies past the input),
// and its backward would route dy there; the oracle gives index -1 and routes nothing. The
// generator runs no backward for those cases.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "reference/pool_reference.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/pool_run.hpp"
#include "kernels/common/numeric.hpp"
#include "tests/npy_arrays.hpp"

namespace pg {
namespace {

using nlohmann::json;

PoolArgs args_of(const json& c) {
  PoolArgs a;
  a.op = c["op"];
  a.kernel_size = c["kernel_size"].get<std::vector<int64_t>>();
  a.stride = c["stride"].get<std::vector<int64_t>>();
  a.padding = c["padding"].get<std::vector<int64_t>>();
  a.ceil_mode = c["ceil_mode"];
  a.layout = c["layout"];
  if (a.op.rfind("max", 0) == 0) {
    a.dilation = c["dilation"].get<std::vector<int64_t>>();
  } else {
    a.count_include_pad = c["count_include_pad"].get<bool>();
    if (!c["divisor_override"].is_null()) a.divisor_override = c["divisor_override"].get<int64_t>();
  }
  return a;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// The command line that reruns a case, minus the file names.
std::string command_line(const PoolArgs& a) {
  std::ostringstream o;
  o << "--op " << a.op << " --kernel-size " << join(a.kernel_size);
  if (!a.stride.empty()) o << " --stride " << join(a.stride);
  o << " --padding " << join(a.padding);
  if (!a.dilation.empty()) o << " --dilation " << join(a.dilation);
  if (a.ceil_mode) o << " --ceil-mode";
  if (a.count_include_pad) o << " --count-include-pad " << (*a.count_include_pad ? "true" : "false");
  if (a.divisor_override) o << " --divisor-override " << *a.divisor_override;
  o << " --layout " << a.layout;
  return o.str();
}

double element(const NpyArray& a, size_t i) { return load_as_double(npy_float_dtype(a.header.type), a.data.data(), static_cast<int64_t>(i)); }

std::vector<double> abs_values(const NpyArray& a) {
  std::vector<double> v(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::fabs(element(a, i));
  return v;
}

NpyArray with_values(const NpyArray& like, const std::vector<double>& v) {
  NpyArray a = like;
  for (size_t i = 0; i < v.size(); ++i) store_from_double(npy_float_dtype(a.header.type), a.data.data(), static_cast<int64_t>(i), v[i]);
  return a;
}

// "" when `got` matches PyTorch's `want`; `scale` is the same computation on |terms| (f32 bound).
std::string compare(const char* what, const NpyArray& got, const NpyArray& want, const NpyArray& scale, int64_t taps) {
  if (got.header.shape != want.header.shape || got.header.type != want.header.type)
    return std::string(what) + ": shape or dtype differs from PyTorch's";
  const bool exact = want.header.type == NpyType::f64;
  for (size_t i = 0; i < static_cast<size_t>(want.header.elements()); ++i) {
    const double g = element(got, i), w = element(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double bound = exact ? 0 : (taps + 2) * 0x1p-24 * std::fabs(element(scale, i)) + 0x1p-149;
    if (g == w || (std::isfinite(w) && std::fabs(g - w) <= bound)) continue;
    std::ostringstream o;
    o.precision(17);
    o << what << "[" << i << "]: oracle " << g << ", PyTorch " << w << (exact ? " (f64: must be exact)" : "");
    return o.str();
  }
  return "";
}

struct Golden {
  json cases;
  std::string torch;
};

const Golden& golden() {
  static const Golden g = [] {
    const char* path = std::getenv("POOLGRAD_GOLDEN");
    std::ifstream in(path ? path : "tests/golden/pytorch_pool.json");
    EXPECT_TRUE(in) << "cannot open the golden file; set POOLGRAD_GOLDEN";
    const json j = json::parse(in);
    return Golden{j["cases"], j["torch"]};
  }();
  return g;
}

// Runs one case through the library; "" when it agrees with PyTorch.
std::string check_case(const json& c) {
  const PoolArgs args = args_of(c);
  const NpyArray x = golden_tensor(c["input"]);
  PoolPlan plan;
  try {
    plan = plan_pool(args, x.header);
  } catch (const InvalidInput& e) {
    if (c.contains("error")) return "";
    return std::string("oracle refused a case PyTorch accepts: ") + e.what();
  }
  if (c.contains("error")) return "oracle accepted a case PyTorch refuses with: " + c["error"].get<std::string>();
  const int64_t taps = plan.problem.taps();

  const ForwardResult f = pool_forward(plan, x);
  const ForwardResult f_abs = pool_forward(plan, with_values(x, abs_values(x)));
  std::string bad = compare("output", f.output, golden_tensor(c["output"]), f_abs.output, taps);
  if (!bad.empty()) return bad;
  if (c.contains("indices")) {
    const NpyArray want = golden_tensor(c["indices"]);
    if (want.data.size() != f.indices.data.size()) return "indices: size differs";
    for (size_t i = 0; i < want.data.size() / 8; ++i) {
      int64_t w, g;
      std::memcpy(&w, &want.data[8 * i], 8);
      std::memcpy(&g, &f.indices.data[8 * i], 8);
      if (g == ref::kNoTap && c["no_tap_windows"].get<bool>()) continue;
      if (g != w) return "indices[" + std::to_string(i) + "]: oracle " + std::to_string(g) + ", PyTorch " + std::to_string(w);
    }
  }
  if (!c.contains("grad_input")) return "";
  const NpyArray dy = golden_tensor(c["grad_output"]), want_dx = golden_tensor(c["grad_input"]);
  const NpyArray dy_abs = with_values(dy, abs_values(dy));
  std::optional<NpyArray> indices;
  if (c.contains("indices")) indices = golden_tensor(c["indices"]);
  const NpyArray* stored = indices ? &*indices : nullptr;
  bad = compare("grad_input", pool_backward(plan, "oracle", x, dy, stored), want_dx,
                pool_backward(plan, "oracle", x, dy_abs, stored), taps);
  if (!bad.empty() || !stored) return bad;
  return compare("grad_input (argmax recomputed)", pool_backward(plan, "oracle", x, dy, nullptr), want_dx,
                 pool_backward(plan, "oracle", x, dy_abs, nullptr), taps);
}

TEST(PyTorchGolden, EveryCaseAgrees) {
  const Golden& g = golden();
  ASSERT_GE(g.cases.size(), 300u);
  int refused = 0;
  for (size_t i = 0; i < g.cases.size(); ++i) {
    const json& c = g.cases[i];
    refused += c.contains("error");
    const std::string bad = check_case(c);
    EXPECT_EQ(bad, "") << "case " << i << " (torch " << g.torch << "): poolgrad forward "
                       << command_line(args_of(c)) << " with input shape " << c["input"]["shape"].dump()
                       << " " << c["input"]["dtype"].get<std::string>();
  }
  EXPECT_GE(refused, 50) << "the set should exercise PyTorch's refusals";
  RecordProperty("cases", static_cast<int>(g.cases.size()));
  RecordProperty("refused", refused);
}

int run_poolgrad(const std::string& arguments) {
  const char* exe = std::getenv("POOLGRAD_EXE");
  EXPECT_NE(exe, nullptr) << "set POOLGRAD_EXE to the poolgrad executable";
  const int status = std::system((std::string(exe ? exe : "poolgrad") + " " + arguments + " 2>/dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A few cases through the executable itself: argument parsing, files, exit codes.
TEST(PyTorchGolden, ThroughThePoolgradExecutable) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("poolgrad-golden-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string x = (dir / "x.npy").string(), y = (dir / "y.npy").string(), idx = (dir / "i.npy").string(),
                    dy = (dir / "dy.npy").string(), dx = (dir / "dx.npy").string();
  int accepted = 0, refused = 0;
  for (const json& c : golden().cases) {
    const bool is_refused = c.contains("error");
    if (is_refused ? refused >= 3 : (accepted >= 6 || !c.contains("grad_input"))) continue;
    const PoolArgs args = args_of(c);
    const std::string cmd = command_line(args);
    SCOPED_TRACE("poolgrad forward " + cmd);
    write_npy(x, golden_tensor(c["input"]));
    const bool max = c.contains("indices");
    const int rc = run_poolgrad("forward " + cmd + " --input " + x + " --output " + y + (max ? " --indices-output " + idx : ""));
    if (is_refused) {
      EXPECT_EQ(rc, 2) << "PyTorch refuses: " << c["error"];
      ++refused;
      continue;
    }
    ++accepted;
    ASSERT_EQ(rc, 0);
    const NpyArray want_y = golden_tensor(c["output"]);
    EXPECT_EQ(compare("output", read_npy(y), want_y, want_y, 0), "");
    if (max) {
      EXPECT_EQ(read_npy(idx).data, golden_tensor(c["indices"]).data);
    }
    write_npy(dy, golden_tensor(c["grad_output"]));
    ASSERT_EQ(run_poolgrad("backward " + cmd + " --input " + x + " --grad-output " + dy + (max ? " --indices " + idx : "") + " --output " + dx), 0);
    const NpyArray got_dx = read_npy(dx), want_dx = golden_tensor(c["grad_input"]);
    // Exact only where every case here is exact: the f32 bound needs |terms|, so f32 cases
    // must match to 4 ulps of the largest |dx| here.
    double largest = 0;
    for (size_t i = 0; i < static_cast<size_t>(want_dx.header.elements()); ++i) largest = std::max(largest, std::fabs(element(want_dx, i)));
    for (size_t i = 0; i < static_cast<size_t>(want_dx.header.elements()); ++i) {
      const double g = element(got_dx, i), w = element(want_dx, i);
      const double bound = want_dx.header.type == NpyType::f64 ? 0 : 4 * 0x1p-24 * largest;
      EXPECT_TRUE((std::isnan(g) && std::isnan(w)) || std::fabs(g - w) <= bound) << "dx[" << i << "]: " << g << " vs " << w;
    }
  }
  EXPECT_EQ(accepted, 6);
  EXPECT_EQ(refused, 3);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pg
