#include "src/harness/conv_registry.hpp"

#include "kernels/exports.hpp"

namespace pg {

const std::vector<ConvVariant>& conv_variants() {
  static const std::vector<ConvVariant> all = [] {
    std::vector<ConvVariant> list = cpu_conv_variants();
    for (const ConvVariant& g : gpu_conv_variants())
      for (ConvVariant& v : list)
        if (v.name == g.name) v.launch_gpu = g.launch_gpu;
    return list;
  }();
  return all;
}

const ConvVariant* find_conv_variant(const std::string& name) {
  for (const ConvVariant& v : conv_variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace pg
