// Turns the static conv variant list into registry entries for one executor, as
// kernels/register.hpp does for pooling. Included only by kernels/conv/instantiate_*.
#pragma once

#include <vector>

#include "kernels/register.hpp"  // VariantList

namespace pg {

// A conv variant is a struct with (kernels/common/variant_defaults.hpp: ConvTraits, and
// ConvVariantDefaults for the common supports and workspace_bytes):
//   static constexpr ConvTraits traits;            name, deterministic, gpu_only, error_model
//   static ConvDomain domain();
//   static Support supports(const ConvProblem&);   what the domain cannot say; yes otherwise
//   static size_t workspace_bytes(const ConvProblem&);
//   static void launch(const Exec&, const ConvProblem&, const ConvBuffers&)  for each executor it runs on:
//     a GPU-only variant has no CPU launch, so its registry entry has no launch_cpu.
template <class V>
concept ConvVariantType = requires(const ConvProblem& p) {
  { V::traits } -> std::convertible_to<ConvTraits>;
  { V::domain() } -> std::same_as<ConvDomain>;
  { V::supports(p) } -> std::same_as<Support>;
  { V::workspace_bytes(p) } -> std::convertible_to<size_t>;
};

template <class Exec, class V>
  requires ConvVariantType<V>
ConvVariant make_conv_variant() {
  ConvVariant v;
  fill_record<V>(v);
  v.error_model = V::traits.error_model;
  if constexpr (requires(const ConvProblem& p, const ConvBuffers& b) { V::launch(Exec{}, p, b); }) {
    ConvLaunchFn fn = [](Backend& be, const ConvProblem& p, const ConvBuffers& b) {
      V::launch(Exec::on_stream(be.gpu_stream()), p, b);
    };
    if constexpr (Exec::is_gpu) v.launch_gpu = fn;
    else v.launch_cpu = fn;
  }
  return v;
}

template <class Exec, class... V>
std::vector<ConvVariant> make_conv_variants(VariantList<V...>) {
  return {make_conv_variant<Exec, V>()...};
}

}  // namespace pg
