#include "fuzz/registered_targets.hpp"

#include "fuzz/conv_target.hpp"
#include "fuzz/pool_target.hpp"

namespace pg::fuzz {
namespace {

template <class V, class Make>
void add(const std::vector<V>& all, const std::regex& names, bool cpu, bool gpu, Targets* out, const Make& make) {
  for (const V& v : all) {
    if (!std::regex_search(v.name, names)) continue;
    if (cpu && !v.gpu_only) out->push_back(make(v, BackendKind::cpu));
    if (gpu && v.launch_gpu) out->push_back(make(v, BackendKind::gpu));
  }
}

}  // namespace

Targets registered_targets(const std::regex& names, bool cpu, bool gpu) {
  Targets targets;
  add(variants(), names, cpu, gpu, &targets, pool_target);
  add(conv_variants(), names, cpu, gpu, &targets, conv_target);
  return targets;
}

}  // namespace pg::fuzz
