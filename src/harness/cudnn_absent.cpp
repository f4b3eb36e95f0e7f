// Builds without the CUDA backend have no cuDNN family (src/harness/cudnn_pool.cpp); `poolgrad variants`
// says so.
#include "src/harness/registry.hpp"

namespace pg {

std::vector<Variant> cudnn_variants(std::string* why_absent) {
  *why_absent = "not built: cuDNN needs the CUDA backend (this build has none)";
  return {};
}

}  // namespace pg
