// The variant registry: every kernel variant with its name, what it needs, whether it
// supports a problem on a backend, and how to launch it there.
//
// Variants are listed once per op, in kernels/max/variants.hpp and kernels/avg/variants.hpp.
// Each backend's translation units (kernels/<op>/instantiate_cpu.cpp, instantiate_gpu.cu)
// instantiate those lists for their executor; variants() joins them by name. Plugins
// (src/plugin.hpp) add theirs after those, through add_variants().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/backend.hpp"
#include "src/domain.hpp"
#include "src/problem.hpp"

namespace pg {

// What a backward variant reads besides dy.
enum class Inputs {
  dy_only,         // average pooling
  dy_and_indices,  // max pooling from stored argmax indices
  dy_and_x,        // max pooling, argmax recomputed from the forward input
};

struct Support {
  bool ok = true;
  std::string why;  // set when !ok: one line, shown by `poolgrad variants` and in reports
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Device pointers of one backward run. Tensors are dense in the problem's layout; indices
// in the problem's index format and type; workspace is workspace_bytes(problem) long.
struct BwdBuffers {
  const void* x = nullptr;
  const void* dy = nullptr;
  const void* indices = nullptr;
  void* dx = nullptr;
  void* workspace = nullptr;
};

using LaunchFn = std::function<void(Backend&, const Problem&, const BwdBuffers&)>;

struct Variant {
  std::string name;  // op.strategy.argmax-source, e.g. max.gather.stored
  Op op = Op::max;
  Inputs inputs = Inputs::dy_only;
  bool deterministic = false;  // bitwise repeatable run to run
  bool gpu_only = false;       // needs block cooperation; the CPU backend cannot run it
  Domain domain;               // the problems it computes; the fuzz generates inside it
  // Conditions beyond the domain's axes; called only for problems the domain admits.
  std::function<Support(const Problem&)> supports_problem;
  std::function<size_t(const Problem&)> workspace_bytes;
  LaunchFn launch_cpu;
  LaunchFn launch_gpu;  // empty when the build has no GPU backend
  std::string plugin;   // the shared library it came from (absolute path); empty for poolgrad's own
  // A vendor library's kernel (cudnn.*): under test against its profile like any variant, but its
  // disagreements are findings about the vendor, so poolgrad's own kernel and agreement tests
  // leave it out (is_own) and fuzz_variants runs it only when POOLGRAD_VENDOR=1.
  bool vendor = false;

  // Exact: yes means launch() runs this variant's own body on p, and nothing else ever runs.
  Support supports(const Problem& p, BackendKind backend) const;
  // Throws pg::Error, launching nothing, when supports() says no.
  void launch(Backend& b, const Problem& p, const BwdBuffers& buf) const;
};

const std::vector<Variant>& variants();
// poolgrad's own kernels: neither a plugin's nor a vendor library's.
inline bool is_own(const Variant& v) { return v.plugin.empty() && !v.vendor; }
const Variant* find_variant(const std::string& name);  // nullptr when unknown
// Why a variant family is not registered, one line each ("cudnn.*: libcudnn not found ..."), for
// `poolgrad variants`.
const std::vector<std::string>& absent_families();
// Appends to variants(). References into the list may move: add before looking any variant up
// (the CLI loads every --plugin first). Throws Error when a name is taken.
void add_variants(std::vector<Variant> more);

// Filled by the backends' translation units, one per op (kernels/max/, kernels/avg/). The GPU
// lists carry name and launch_gpu only.
std::vector<Variant> cpu_max_variants();
std::vector<Variant> cpu_avg_variants();
std::vector<Variant> gpu_max_variants();
std::vector<Variant> gpu_avg_variants();
// cuDNN's pooling backward (src/cudnn_pool.cpp, CUDA builds), when a GPU and libcudnn are found at
// run time; otherwise none, with *why_absent set (src/cudnn_absent.cpp in other builds).
std::vector<Variant> cudnn_variants(std::string* why_absent);

}  // namespace pg
