// The CPU backend's instantiation of the max-pool variants (g++). One unit per op, so the kernels
// compile in parallel and a change to one op's kernels rebuilds only its units.
#include "kernels/common/exec.hpp"
#include "kernels/max/variants.hpp"

namespace pg {

std::vector<Variant> cpu_max_variants() { return make_variants<CpuExec>(MaxVariants{}); }

namespace {

// launch_with(..., IndexWidth::wide) is the same instantiation launch() already holds: listing it
// costs no compile time here, where the tests would instantiate every kernel a second time.
template <class V>
void add_int64(std::vector<Variant>& out) {
  if constexpr (requires(const Problem& p, const BwdBuffers& b) { V::launch_with(CpuExec{}, p, b, IndexWidth::wide); }) {
    Variant v = make_variant<CpuExec, V>();
    v.launch_cpu = [](Backend&, const Problem& p, const BwdBuffers& b) { V::launch_with(CpuExec{}, p, b, IndexWidth::wide); };
    out.push_back(std::move(v));
  }
}

template <class... V>
std::vector<Variant> int64_variants(VariantList<V...>) {
  std::vector<Variant> out;
  (add_int64<V>(out), ...);
  return out;
}

}  // namespace

std::vector<Variant> cpu_max_variants_int64() { return int64_variants(MaxVariants{}); }

}  // namespace pg
