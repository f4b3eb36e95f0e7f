// The build without a GPU backend (-Dgpu=none, or gpu=auto with no nvcc found).
#include "src/model/backend.hpp"
#include "src/harness/conv_registry.hpp"
#include "src/harness/copy.hpp"
#include "src/harness/fma_peak.hpp"
#include "src/harness/graph_replay.hpp"
#include "src/harness/registry.hpp"
#include "kernels/exports.hpp"

namespace pg {

int gpu_count(std::string* why_none) {
  if (why_none) *why_none = "built without a GPU backend (-Dgpu=none or nvcc not found)";
  return 0;
}

std::unique_ptr<Backend> make_gpu_backend(int device) {
  throw Error("no GPU backend in this build; cannot open gpu" + std::to_string(device));
}

const char* gpu_runtime_name() { return "none"; }

std::unique_ptr<GraphReplay> GraphReplay::capture(Backend& b, const std::function<void()>&, std::string* why) {
  *why = "the " + b.name() + " backend has no graphs";
  return nullptr;
}
GraphReplay::~GraphReplay() = default;
void GraphReplay::launch() {}

std::vector<Variant> gpu_max_variants() { return {}; }
std::vector<Variant> gpu_avg_variants() { return {}; }
std::vector<ConvVariant> gpu_conv_variants() { return {}; }

void copy_kernel_gpu(void*, void*, const void*, size_t) { throw Error("no GPU backend in this build"); }
void fma_chains_gpu(void*, float*, int64_t, int) { throw Error("no GPU backend in this build"); }

}  // namespace pg
