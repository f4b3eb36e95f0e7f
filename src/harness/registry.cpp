#include "src/harness/registry.hpp"

#include "kernels/exports.hpp"

namespace pg {

namespace {

std::vector<std::string>& absent() {
  static std::vector<std::string> lines;
  return lines;
}

std::vector<Variant>& registered() {
  static std::vector<Variant> all = [] {
    std::vector<Variant> list = cpu_max_variants(), avg = cpu_avg_variants();
    list.insert(list.end(), avg.begin(), avg.end());
    std::vector<Variant> gpu = gpu_max_variants(), gpu_avg = gpu_avg_variants();
    gpu.insert(gpu.end(), gpu_avg.begin(), gpu_avg.end());
    for (const Variant& g : gpu)
      for (Variant& v : list)
        if (v.name == g.name) v.launch_gpu = g.launch_gpu;
    std::string why;
    const std::vector<Variant> vendor = cudnn_variants(&why);
    list.insert(list.end(), vendor.begin(), vendor.end());
    if (vendor.empty()) absent().push_back("cudnn.*: " + why);
    return list;
  }();
  return all;
}

}  // namespace

const std::vector<Variant>& variants() { return registered(); }

const std::vector<std::string>& absent_families() {
  registered();
  return absent();
}

void add_variants(std::vector<Variant> more) {
  for (size_t i = 0; i < more.size(); ++i) {
    bool taken = find_variant(more[i].name);
    for (size_t j = 0; j < i; ++j) taken = taken || more[j].name == more[i].name;
    if (taken) throw Error("variant " + more[i].name + " is already registered");
  }
  for (Variant& v : more) registered().push_back(std::move(v));
}

const Variant* find_variant(const std::string& name) {
  for (const Variant& v : variants())
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace pg
