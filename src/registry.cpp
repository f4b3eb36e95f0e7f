#include "src/registry.hpp"

namespace pg {

Support Variant::supports(const Problem& p, BackendKind backend) const {
  if (p.op != op) return Support::no(std::string("is a ") + op_name(op) + "-pool variant");
  if (backend == BackendKind::cpu && gpu_only)
    return Support::no("GPU only: needs block cooperation the CPU backend does not model");
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

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> list = cpu_max_variants(), avg = cpu_avg_variants();
    list.insert(list.end(), avg.begin(), avg.end());
    std::vector<Variant> gpu = gpu_max_variants(), gpu_avg = gpu_avg_variants();
    gpu.insert(gpu.end(), gpu_avg.begin(), gpu_avg.end());
    for (const Variant& g : gpu)
      for (Variant& v : list)
        if (v.name == g.name) v.launch_gpu = g.launch_gpu;
    return list;
  }();
  return all;
}

const Variant* find_variant(const std::string& name) {
  for (const Variant& v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace pg
