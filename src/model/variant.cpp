#include "src/model/variant.hpp"

namespace pg {

Support Variant::supports(const Problem& p, BackendKind backend) const {
  if (p.op != op) return Support::no(std::string("is a ") + op_name(op) + "-pool variant");
  if (backend == BackendKind::cpu && gpu_only)
    return Support::no("GPU only: no CPU launch (it needs block cooperation, or it calls a GPU library)");
  if (backend == BackendKind::gpu && !launch_gpu) return Support::no("not built for the GPU");
  const Domain::Verdict in = domain.admits(p);
  if (!in.ok) return Support::no(in.why);
  return supports_problem(p);
}

void Variant::launch(Backend& b, const Problem& p, const BwdBuffers& buf) const {
  const Support s = supports(p, b.kind());
  if (!s.ok) throw Error("variant " + name + " does not support " + to_string(p) + " on " + b.name() + ": " + s.why);
  const LaunchFn& fn = b.kind() == BackendKind::cpu ? launch_cpu : launch_gpu;
  fn(b, p, buf);
}

}  // namespace pg
