// Turns the static variant list into registry entries for one executor. Included only by the
// backends' instantiation units.
#pragma once

#include <concepts>
#include <vector>

#include "kernels/common/variant_defaults.hpp"
#include "kernels/exports.hpp"

namespace pg {

template <class... V>
struct VariantList {};

// What the pooling and conv records share, from the variant's struct.
template <class V, class Record>
void fill_record(Record& r) {
  r.name = V::traits.name;
  r.deterministic = V::traits.deterministic;
  r.gpu_only = V::traits.gpu_only;
  r.domain = V::domain();
  r.supports_problem = &V::supports;
  r.workspace_bytes = &V::workspace_bytes;
}

// A variant is a struct with (kernels/common/variant_defaults.hpp: PoolTraits, and VariantDefaults
// for the common supports and workspace_bytes):
//   static constexpr PoolTraits traits;      name, op, inputs, deterministic, gpu_only
//   static Domain domain();                  the problems it computes (src/model/domain.hpp)
//   static Support supports(const Problem&); what the domain cannot say; yes otherwise
//   static size_t workspace_bytes(const Problem&);
//   template <class Exec> static void launch(const Exec&, const Problem&, const BwdBuffers&);
template <class V, class Exec>
concept PoolVariant = requires(const Problem& p, const BwdBuffers& b) {
  { V::traits } -> std::convertible_to<PoolTraits>;
  { V::domain() } -> std::same_as<Domain>;
  { V::supports(p) } -> std::same_as<Support>;
  { V::workspace_bytes(p) } -> std::convertible_to<size_t>;
  V::launch(Exec{}, p, b);
};

template <class Exec, class V>
  requires PoolVariant<V, Exec>
Variant make_variant() {
  Variant v;
  fill_record<V>(v);
  v.op = V::traits.op;
  v.inputs = V::traits.inputs;
  LaunchFn fn = [](Backend& be, const Problem& p, const BwdBuffers& b) { V::launch(Exec::on_stream(be.gpu_stream()), p, b); };
  if constexpr (Exec::is_gpu) v.launch_gpu = fn;
  else v.launch_cpu = fn;
  return v;
}

template <class Exec, class... V>
std::vector<Variant> make_variants(VariantList<V...>) {
  return {make_variant<Exec, V>()...};
}

}  // namespace pg
