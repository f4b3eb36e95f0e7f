// Turns the static variant list into registry entries for one executor. Included only by the
// backends' instantiation units.
#pragma once

#include <vector>

#include "src/registry.hpp"

namespace pg {

template <class... V>
struct VariantList {};

// A variant is a struct with:
//   static constexpr const char* name; static constexpr Op op; static constexpr Inputs inputs;
//   static constexpr bool deterministic, gpu_only;
//   static Domain domain();                  the problems it computes (src/domain.hpp)
//   static Support supports(const Problem&); what the domain cannot say; yes otherwise
//   static size_t workspace_bytes(const Problem&);
//   template <class Exec> static void launch(const Exec&, const Problem&, const BwdBuffers&);
template <class Exec, class V>
Variant make_variant() {
  Variant v;
  v.name = V::name;
  v.op = V::op;
  v.inputs = V::inputs;
  v.deterministic = V::deterministic;
  v.gpu_only = V::gpu_only;
  v.domain = V::domain();
  v.supports_problem = &V::supports;
  v.workspace_bytes = &V::workspace_bytes;
  LaunchFn fn = [](Backend&, const Problem& p, const BwdBuffers& b) { V::launch(Exec{}, p, b); };
  if constexpr (Exec::is_gpu) v.launch_gpu = fn;
  else v.launch_cpu = fn;
  return v;
}

template <class Exec, class... V>
std::vector<Variant> make_variants(VariantList<V...>) {
  return {make_variant<Exec, V>()...};
}

}  // namespace pg
