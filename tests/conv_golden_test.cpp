// Convolution through the poolgrad executable against PyTorch: every case of
// tests/golden/pytorch_conv.json (tools/make_conv_golden.py, PyTorch on the CPU) runs as
// `poolgrad forward --op convNd` and `poolgrad backward --op convNd`, plus hand-built cases that
// check the wiring on their own.
//
// Required: integer data ("ints") bit-exact in f32 and f64 (every sum is exact in any order);
// real data within (terms + 2) unit roundoffs of the sum of |terms| per element, the oracle's
// count and sum (PyTorch sums in its own order, in the dtype); every case PyTorch refuses exits
// 2, forward and backward, with one line on stderr that names the parameter the case breaks.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/common/numeric.hpp"
#include "reference/conv_reference.hpp"
#include "src/harness/conv_run.hpp"
#include "tests/npy_arrays.hpp"

namespace pg {
namespace {

using nlohmann::json;

std::vector<double> abs_values(const NpyArray& a) {
  std::vector<double> v = npy_values(a);
  for (double& e : v) e = std::fabs(e);
  return v;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

// One case as the golden file holds it: the options in PyTorch's form, the tensors in the
// layout's axis order, and either PyTorch's results or its refusal.
struct Case {
  std::string op, layout = "NCHW", kind = "ints";
  json stride = json::array(), padding = 0, pads = nullptr, dilation = json::array();
  int64_t groups = 1;
  NpyArray x, w, y, dy, dx;
  std::optional<std::string> error, concerns;
};

Case from_json(const json& c) {
  Case k;
  k.op = c["op"];
  k.layout = c["layout"];
  k.kind = c["kind"];
  k.stride = c["stride"];
  k.padding = c["padding"];
  k.pads = c["pads"];
  k.dilation = c["dilation"];
  k.groups = c["groups"];
  k.x = golden_tensor(c["input"]);
  k.w = golden_tensor(c["weight"]);
  if (c.contains("error")) {
    k.error = c["error"].get<std::string>();
    if (!c["concerns"].is_null()) k.concerns = c["concerns"].get<std::string>();
    return k;
  }
  k.y = golden_tensor(c["output"]);
  k.dy = golden_tensor(c["grad_output"]);
  k.dx = golden_tensor(c["grad_input"]);
  return k;
}

// The window options as poolgrad takes them: PyTorch's names, comma lists, --pads for the
// asymmetric padding the generator applied with F.pad.
std::string window_options(const Case& k) {
  std::ostringstream o;
  o << "--op " << k.op << " --layout " << k.layout << " --groups " << k.groups;
  auto list = [](const json& v) { return v.is_array() ? join(v.get<std::vector<int64_t>>()) : std::to_string(v.get<int64_t>()); };
  if (!k.stride.empty()) o << " --stride " << list(k.stride);
  if (!k.dilation.empty()) o << " --dilation " << list(k.dilation);
  if (!k.pads.is_null()) o << " --pads " << list(k.pads);
  else if (k.padding.is_string()) o << " --padding " << k.padding.get<std::string>();
  else o << " --padding " << list(k.padding);
  return o.str();
}

ConvArgs plan_args(const Case& k) {
  auto ints = [](const json& v) { return v.is_array() ? v.get<std::vector<int64_t>>() : std::vector<int64_t>{v.get<int64_t>()}; };
  ConvArgs a;
  a.op = k.op;
  a.layout = k.layout;
  a.groups = k.groups;
  a.stride = ints(k.stride);
  a.dilation = ints(k.dilation);
  if (!k.pads.is_null()) a.pads = ints(k.pads);
  else if (k.padding.is_string()) a.pad_mode = k.padding == "same" ? ConvPadMode::same : ConvPadMode::valid;
  else a.padding = ints(k.padding);
  return a;
}

struct Exit {
  int rc;
  std::string err;  // stderr
};

class Scratch {
 public:
  Scratch() : dir_(std::filesystem::temp_directory_path() / ("poolgrad-conv-golden-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Exit poolgrad(const std::string& arguments) const {
    const char* exe = std::getenv("POOLGRAD_EXE");
    EXPECT_NE(exe, nullptr) << "set POOLGRAD_EXE to the poolgrad executable";
    const std::string err = path("stderr.txt");
    const int status = std::system((std::string(exe ? exe : "poolgrad") + " " + arguments + " 2>" + err).c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
  }

 private:
  std::filesystem::path dir_;
};

// "" when `got` matches PyTorch's `want`: exactly for integer data, else within the bound
// from the oracle's term count and sum of |terms| per element.
std::string compare(const char* what, const Case& k, const NpyArray& got, const NpyArray& want,
                    const std::vector<double>& abs_sum, const std::vector<int64_t>& terms) {
  if (got.header.shape != want.header.shape || got.header.type != want.header.type)
    return std::string(what) + ": shape or dtype differs from PyTorch's";
  const double u = unit_roundoff(npy_float_dtype(want.header.type));
  const std::vector<double> g = npy_values(got), w = npy_values(want);
  for (size_t i = 0; i < w.size(); ++i) {
    const double bound = k.kind == "ints" ? 0 : (static_cast<double>(terms[i]) + 2) * u * abs_sum[i];
    if (g[i] == w[i] || std::fabs(g[i] - w[i]) <= bound) continue;
    std::ostringstream o;
    o.precision(17);
    o << what << "[" << i << "]: poolgrad " << g[i] << ", PyTorch " << w[i] << " (bound " << bound << ", "
      << terms[i] << " terms)";
    return o.str();
  }
  return "";
}

// Runs one case through the executable, forward and backward; "" when all agrees.
std::string check_case(const Case& k, const Scratch& s) {
  const std::string x = s.path("x.npy"), w = s.path("w.npy"), y = s.path("y.npy"), dy = s.path("dy.npy"),
                    dx = s.path("dx.npy");
  write_npy(x, k.x);
  write_npy(w, k.w);
  const std::string options = window_options(k);
  const std::string forward = "forward " + options + " --input " + x + " --weight " + w + " --output " + y;
  const std::string backward = "backward " + options + " --weight " + w + " --grad-output " + dy +
                               " --input-size " + join(k.x.header.shape) + " --output " + dx;
  if (k.error) {
    write_npy(dy, k.x);  // any file: the options are refused before it is read
    for (const std::string& cmd : {forward, backward}) {
      const Exit r = s.poolgrad(cmd);
      if (r.rc != 2) return "exit " + std::to_string(r.rc) + ", not 2, where PyTorch refuses (" + *k.error + "): " + cmd;
      if (r.err.empty() || r.err.find('\n') != r.err.size() - 1) return "not one line on stderr: '" + r.err + "'";
      if (k.concerns && r.err.find(*k.concerns) == std::string::npos)
        return "the message does not name " + *k.concerns + ": " + r.err + "  (PyTorch: " + *k.error + ")";
    }
    return "";
  }
  Exit r = s.poolgrad(forward);
  if (r.rc != 0) return "forward exit " + std::to_string(r.rc) + ": " + r.err;
  const ConvPlan plan = plan_conv(plan_args(k), k.x.header.shape, "--input shape", k.w.header);
  const ConvProblem& p = plan.problem;
  const std::vector<double> y_abs = ref::conv_forward(p, abs_values(k.x), abs_values(k.w));
  const std::vector<int64_t> y_terms(y_abs.size(), p.c_per_group() * p.taps());  // at most
  std::string bad = compare("y", k, read_npy(y), k.y, y_abs, y_terms);
  if (!bad.empty()) return bad;
  write_npy(dy, k.dy);
  r = s.poolgrad(backward);
  if (r.rc != 0) return "backward exit " + std::to_string(r.rc) + ": " + r.err;
  const ref::ConvGradient g = ref::conv_backward_data(p, abs_values(k.dy), abs_values(k.w));
  return compare("dx", k, read_npy(dx), k.dx, g.dx, g.terms);
}

// Hand-built cases in the golden file's form: the wiring of every option, on numbers worked out
// by hand (tests/conv_reference_test.cpp has the same ones against the oracle).
std::vector<Case> hand_built() {
  std::vector<Case> cases;
  auto add = [&](Case k) { cases.push_back(std::move(k)); };
  Case k;
  k.op = "conv1d";
  k.x = npy_array(NpyType::f64, {1, 1, 5}, {1, 2, 3, 4, 5});
  k.w = npy_array(NpyType::f64, {1, 1, 3}, {1, 0, -1});
  k.y = npy_array(NpyType::f64, {1, 1, 3}, {-2, -2, -2});
  k.dy = npy_array(NpyType::f64, {1, 1, 3}, {1, 2, 3});
  k.dx = npy_array(NpyType::f64, {1, 1, 5}, {1, 2, 2, -2, -3});
  add(k);
  Case unbatched = k;  // (C, W): no batch axis, in and out
  unbatched.x.header.shape = unbatched.dx.header.shape = {1, 5};
  unbatched.y.header.shape = unbatched.dy.header.shape = {1, 3};
  add(unbatched);
  Case empty = k;  // N = 0: PyTorch gives y (0, K, out) and dx (0, C, in)
  empty.x = npy_array(NpyType::f64, {0, 1, 5}, {});
  empty.y = npy_array(NpyType::f64, {0, 1, 3}, {});
  empty.dy = npy_array(NpyType::f64, {0, 1, 3}, {});
  empty.dx = npy_array(NpyType::f64, {0, 1, 5}, {});
  add(empty);

  Case same;  // even kernel: the odd pad goes to the end
  same.op = "conv1d";
  same.padding = "same";
  same.x = npy_array(NpyType::f32, {1, 1, 4}, {1, 2, 3, 4});
  same.w = npy_array(NpyType::f32, {1, 1, 2}, {1, 10});
  same.y = npy_array(NpyType::f32, {1, 1, 4}, {21, 32, 43, 4});
  same.dy = npy_array(NpyType::f32, {1, 1, 4}, {1, 1, 1, 1});
  same.dx = npy_array(NpyType::f32, {1, 1, 4}, {1, 11, 11, 11});
  add(same);

  Case pads;  // asymmetric pads 1 and 2, stride 2, dilation 2
  pads.op = "conv1d";
  pads.pads = {1, 2};
  pads.stride = {2};
  pads.dilation = {2};
  pads.x = npy_array(NpyType::f64, {1, 1, 5}, {10, 20, 30, 40, 50});
  pads.w = npy_array(NpyType::f64, {1, 1, 2}, {2, 3});
  pads.y = npy_array(NpyType::f64, {1, 1, 3}, {60, 160, 80});
  pads.dy = npy_array(NpyType::f64, {1, 1, 3}, {1, 10, 100});
  pads.dx = npy_array(NpyType::f64, {1, 1, 5}, {0, 23, 0, 230, 0});
  add(pads);

  Case depthwise;  // NHWC: x (N, H, W, C), w (K, kH, kW, C/groups), y (N, oH, oW, K)
  depthwise.op = "conv2d";
  depthwise.layout = "NHWC";
  depthwise.groups = 2;
  depthwise.x = npy_array(NpyType::f64, {1, 2, 2, 2}, {1, 5, 2, 6, 3, 7, 4, 8});
  depthwise.w = npy_array(NpyType::f64, {2, 2, 2, 1}, {1, 1, 1, 1, 1, 0, 0, -1});
  depthwise.y = npy_array(NpyType::f64, {1, 1, 1, 2}, {10, -3});
  depthwise.dy = npy_array(NpyType::f64, {1, 1, 1, 2}, {2, 3});
  depthwise.dx = npy_array(NpyType::f64, {1, 2, 2, 2}, {2, 3, 2, 0, 2, 0, 2, -3});
  add(depthwise);

  auto refused = [&](const std::string& concerns, auto change) {
    Case r = k;
    r.error = "refused";
    r.concerns = concerns;
    change(r);
    add(r);
  };
  refused("groups", [](Case& r) { r.groups = 2; });
  refused("stride", [](Case& r) { r.stride = {0}; });
  refused("stride", [](Case& r) { r.stride = {1, 1}; });
  refused("dilation", [](Case& r) { r.dilation = {0}; });
  refused("padding", [](Case& r) { r.padding = "full"; });
  refused("padding", [](Case& r) { r.padding = -1; });
  refused("stride", [](Case& r) { r.padding = "same", r.stride = {2}; });
  refused("kernel", [](Case& r) { r.w = npy_array(NpyType::f64, {1, 1, 6}, {1, 1, 1, 1, 1, 1}); });
  refused("weight", [](Case& r) { r.w = npy_array(NpyType::f64, {1, 2, 3}, {1, 1, 1, 1, 1, 1}); });
  refused("weight", [](Case& r) { r.w = npy_array(NpyType::f64, {1, 3}, {1, 1, 1}); });
  refused("input", [](Case& r) { r.x = npy_array(NpyType::f64, {1, 1, 1, 5}, {1, 2, 3, 4, 5}); });
  return cases;
}

TEST(ConvGolden, HandBuiltCasesThroughTheExecutable) {
  const Scratch scratch;
  const std::vector<Case> cases = hand_built();
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(check_case(cases[i], scratch), "") << "hand-built case " << i << ": " << window_options(cases[i]);
}

// forward and backward serve pooling and convolution: an option of the other kind, or a
// pooling padding of 'same', is refused with one line naming it, exit 2.
TEST(ConvGolden, OptionsOfTheOtherOpAreRefused) {
  const Scratch s;
  const Case k = hand_built().front();
  const std::string x = s.path("x.npy"), w = s.path("w.npy"), dy = s.path("dy.npy"), out = s.path("out.npy");
  write_npy(x, k.x);
  write_npy(w, k.w);
  write_npy(dy, k.dy);
  const std::string conv_forward = "forward --op conv1d --input " + x + " --weight " + w + " --output " + out;
  const std::string conv_backward = "backward --op conv1d --weight " + w + " --grad-output " + dy +
                                    " --input-size 1,1,5 --output " + out;
  const std::string pool_forward = "forward --op max_pool1d --kernel-size 2 --input " + x + " --output " + out;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {conv_forward + " --kernel-size 3", "poolgrad forward: --kernel-size applies to pooling only, not conv1d\n"},
      {conv_forward + " --ceil-mode", "poolgrad forward: --ceil-mode applies to pooling only, not conv1d\n"},
      {conv_forward + " --indices-output " + out, "poolgrad forward: --indices-output applies to pooling only, not conv1d\n"},
      {conv_backward + " --indices " + dy, "poolgrad backward: --indices applies to pooling only, not conv1d\n"},
      {conv_backward + " --input " + x, "poolgrad backward: --input: conv1d backward-data reads no x; give its shape as --input-size\n"},
      {conv_backward + " --variant no.such.variant",
       "poolgrad backward: --variant = no.such.variant is not a registered conv variant (see poolgrad variants)\n"},
      {"forward --op conv1d --input " + x + " --output " + out, "poolgrad forward: --weight is required for conv1d\n"},
      {pool_forward + " --weight " + w, "poolgrad forward: --weight applies to conv1d..conv3d only, not max_pool1d\n"},
      {pool_forward + " --groups 1", "poolgrad forward: --groups applies to conv1d..conv3d only, not max_pool1d\n"},
      {pool_forward + " --padding same",
       "poolgrad forward: --padding = same applies to conv only; pooling takes integers (or --auto-pad)\n"},
      {"forward --op max_pool1d --kernel-size 2 --output " + out, "poolgrad forward: --input is required\n"},
  };
  for (const auto& [command, says] : refused) {
    const Exit r = s.poolgrad(command);
    EXPECT_EQ(r.rc, 2) << command;
    EXPECT_EQ(r.err, says) << command;
  }
  EXPECT_EQ(s.poolgrad(conv_forward + " --padding valid --groups 1").rc, 0);
  EXPECT_EQ(s.poolgrad(pool_forward + " --padding 1").rc, 0);
}

TEST(ConvGolden, EveryPyTorchCaseAgrees) {
  const char* path = std::getenv("POOLGRAD_CONV_GOLDEN");
  std::ifstream in(path ? path : "tests/golden/pytorch_conv.json");
  ASSERT_TRUE(in) << "cannot open the golden file; set POOLGRAD_CONV_GOLDEN (tools/make_conv_golden.py makes it)";
  const json golden = json::parse(in);
  const json& cases = golden["cases"];
  ASSERT_GE(cases.size(), 300u);
  const Scratch scratch;
  int refused = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case k = from_json(cases[i]);
    refused += k.error.has_value();
    EXPECT_EQ(check_case(k, scratch), "") << "case " << i << " (torch " << golden["torch"].get<std::string>()
                                          << "): " << window_options(k) << ", input " << cases[i]["input"]["shape"].dump()
                                          << " " << cases[i]["input"]["dtype"].get<std::string>() << ", weight "
                                          << cases[i]["weight"]["shape"].dump();
  }
  EXPECT_GE(refused, 30) << "the set should exercise PyTorch's refusals";
  RecordProperty("cases", static_cast<int>(cases.size()));
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace pg
