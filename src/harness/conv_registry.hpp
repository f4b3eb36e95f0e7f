// The convolution backward-data variants poolgrad runs: listed once in kernels/conv/variants.hpp,
// instantiated per executor by kernels/conv/instantiate_cpu.cpp and instantiate_gpu.cu
// (kernels/exports.hpp), joined here by name. What one variant is: src/model/conv_variant.hpp.
#pragma once

#include <string>
#include <vector>

#include "src/model/conv_variant.hpp"

namespace pg {

const std::vector<ConvVariant>& conv_variants();
const ConvVariant* find_conv_variant(const std::string& name);  // nullptr when unknown

}  // namespace pg
