#include "fuzz/registered_targets.hpp"

#include "fuzz/conv_target.hpp"
#include "fuzz/pool_target.hpp"

namespace pg::fuzz {
namespace {

bool is_vendor(const Variant& v) { return v.vendor; }
bool is_vendor(const ConvVariant&) { return false; }

template <class V, class Make>
void add(const std::vector<V>& all, const std::regex& names, bool cpu, bool gpu, bool vendor, Targets* out,
         const Make& make) {
  for (const V& v : all) {
    if (!std::regex_search(v.name, names) || (is_vendor(v) && !vendor)) continue;
    if (cpu && !v.gpu_only) out->push_back(make(v, BackendKind::cpu));
    if (gpu && v.launch_gpu) out->push_back(make(v, BackendKind::gpu));
  }
}

}  // namespace

Targets registered_targets(const std::regex& names, bool cpu, bool gpu, bool vendor) {
  Targets targets;
  add(variants(), names, cpu, gpu, vendor, &targets, pool_target);
  add(conv_variants(), names, cpu, gpu, vendor, &targets, conv_target);
  return targets;
}

std::vector<std::string> vendor_variants_matching(const std::regex& names) {
  std::vector<std::string> out;
  for (const Variant& v : variants())
    if (v.vendor && std::regex_search(v.name, names)) out.push_back(v.name);
  return out;
}

}  // namespace pg::fuzz
