#include "src/harness/copy.hpp"

#include "kernels/exports.hpp"

namespace pg {

void copy_kernel(Backend& b, void* dst, const void* src, size_t bytes) {
  if (b.kind() == BackendKind::cpu) copy_kernel_cpu(dst, src, bytes);
  else copy_kernel_gpu(b.gpu_stream(), dst, src, bytes);
}

}  // namespace pg
