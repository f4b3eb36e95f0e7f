// What a pooling backward variant IS: its name, what it reads, what it computes (its Domain),
// an exact supports() and one launch per backend. The list of every registered variant is the
// harness's (src/harness/registry.hpp); the kernels fill it through kernels/exports.hpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/model/backend.hpp"
#include "src/model/domain.hpp"
#include "src/model/problem.hpp"

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

// The checks every variant record, pooling or conv, makes before its own condition (GPU only, not
// built for this backend, outside its domain), and its launch, which runs nothing it refuses.
template <class V, class P>
Support checked_support(const V& v, const P& p, BackendKind backend) {
  if (backend == BackendKind::cpu && v.gpu_only)
    return Support::no("GPU only: no CPU launch (it needs block cooperation, or it calls a GPU library)");
  if (backend == BackendKind::gpu && !v.launch_gpu) return Support::no("not built for the GPU");
  const Domain::Verdict in = v.domain.admits(p);
  if (!in.ok) return Support::no(in.why);
  return v.supports_problem(p);
}

template <class V, class P, class Buffers>
void checked_launch(const V& v, Backend& b, const P& p, const Buffers& buf, const std::string& problem_text) {
  const Support s = v.supports(p, b.kind());
  if (!s.ok) throw Error("variant " + v.name + " does not support " + problem_text + " on " + b.name() + ": " + s.why);
  (b.kind() == BackendKind::cpu ? v.launch_cpu : v.launch_gpu)(b, p, buf);
}

// poolgrad's own kernels: neither a plugin's nor a vendor library's.
inline bool is_own(const Variant& v) { return v.plugin.empty() && !v.vendor; }

}  // namespace pg
