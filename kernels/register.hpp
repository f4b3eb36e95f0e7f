// Turns the static variant list into registry entries for one executor. Included only by the
// backends' instantiation units.
#pragma once

#include <concepts>
#include <vector>

#include "kernels/exports.hpp"

namespace pg {

template <class... V>
struct VariantList {};

// A variant is a struct with (VariantDefaults, kernels/common/variant_defaults.hpp, answers
// gpu_only, supports and workspace_bytes the common way):
//   static constexpr const char* name; static constexpr Op op; static constexpr Inputs inputs;
//   static constexpr bool deterministic, gpu_only;
//   static Domain domain();                  the problems it computes (src/model/domain.hpp)
//   static Support supports(const Problem&); what the domain cannot say; yes otherwise
//   static size_t workspace_bytes(const Problem&);
//   template <class Exec> static void launch(const Exec&, const Problem&, const BwdBuffers&);
template <class V, class Exec>
concept PoolVariant = requires(const Problem& p, const BwdBuffers& b) {
  { V::name } -> std::convertible_to<const char*>;
  { V::op } -> std::convertible_to<Op>;
  { V::inputs } -> std::convertible_to<Inputs>;
  { V::deterministic } -> std::convertible_to<bool>;
  { V::gpu_only } -> std::convertible_to<bool>;
  { V::domain() } -> std::same_as<Domain>;
  { V::supports(p) } -> std::same_as<Support>;
  { V::workspace_bytes(p) } -> std::convertible_to<size_t>;
  V::launch(Exec{}, p, b);
};

template <class Exec, class V>
  requires PoolVariant<V, Exec>
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
