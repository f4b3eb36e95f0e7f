// Hopper's tensor memory accelerator (TMA, sm_90): a box of a tensor copied global -> shared
// memory by one instruction, its completion counted on a shared-memory barrier (mbarrier).
//
// A TmaTensor describes the tensor and box (up to 5 dimensions, innermost first); the GPU launch
// encodes it into the driver's opaque tensor map (encode_tma_map), and the CPU backend copies the
// same box element by element (tma_load_box_host), so the coordinates a kernel computes are
// fuzzed on every machine. Elements whose coordinates fall outside the tensor (negative ones
// too) arrive as zeros: a convolution's padding costs nothing.
//
// Boxes here are rows of 128 bytes (box[0] * element size) stored with the 128-byte swizzle:
// 16-byte chunk c of row r lands at chunk c ^ (r % 8), the layout wgmma's descriptors name. The
// destination must be 1024-byte aligned, as the hardware swizzles on address bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/common/hip_compat.hpp"

#if defined(__CUDACC__)
#include <cuda.h>
#include <cudaTypedefs.h>
#include "src/model/backend.hpp"  // pg::Error
#endif

namespace pg {

inline constexpr int kTmaMaxRank = 5;
inline constexpr int kTmaRowBytes = 128;

struct TmaTensor {
  int32_t rank = 0;
  int64_t dim[kTmaMaxRank] = {};     // elements along each dimension, innermost first
  int64_t stride[kTmaMaxRank] = {};  // elements between neighbours along each dimension; stride[0] = 1
  int32_t box[kTmaMaxRank] = {};     // the box's extent along each dimension
  const void* base = nullptr;

  PG_HD int64_t box_elems() const {
    int64_t e = 1;
    for (int d = 0; d < rank; ++d) e *= box[d];
    return e;
  }
};

// The driver's tensor map, opaque: 128 bytes, 64-byte aligned (CUtensorMap). Passed in a
// __grid_constant__ kernel parameter, whose address the copy instruction takes.
struct alignas(64) TmaMap {
  uint64_t opaque[16];
};

// Where byte `b` of row `row` of a 128-byte-swizzled box lies, in bytes from its start.
PG_HD int tma_swizzled_byte(int64_t row, int b) {
  return static_cast<int>(row * kTmaRowBytes) + ((((b >> 4) ^ static_cast<int>(row)) & 7) << 4) + (b & 15);
}

// The CPU backend's copy: the box at `coord` (one per dimension, may be negative) into `dst`.
template <class T>
void tma_load_box_host(const TmaTensor& t, const int32_t* coord, T* dst) {
  const T* src = static_cast<const T*>(t.base);
  const int64_t elems = t.box_elems();
  for (int64_t i = 0; i < elems; ++i) {
    int64_t rest = i, at = 0;
    bool inside = true;
    for (int d = 0; d < t.rank; ++d) {
      const int64_t c = coord[d] + rest % t.box[d];
      rest /= t.box[d];
      inside = inside && c >= 0 && c < t.dim[d];
      at += c * t.stride[d];
    }
    const int64_t row = i / t.box[0];
    const int b = static_cast<int>(i % t.box[0] * sizeof(T));
    dst[tma_swizzled_byte(row, b) / sizeof(T)] = inside ? src[at] : T{0};
  }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PG_TMA_DEVICE 1

__device__ __forceinline__ unsigned tma_smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// Thread 0, once: the barrier expects one arrival per phase; the fences make the initialised
// barrier visible to the copy engine (the async proxy).
__device__ __forceinline__ void tma_barrier_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(tma_smem(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The arrival of this phase, which completes once `bytes` more have landed.
__device__ __forceinline__ void tma_expect(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tma_smem(bar)), "r"(bytes) : "memory");
}

// Until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void tma_wait(uint64_t* bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(tma_smem(bar)), "r"(parity) : "memory");
  } while (!done);
}

// The box of `map` at `c` into dst, counted on `bar`.
__device__ __forceinline__ void tma_load_box(void* dst, const TmaMap* map, int rank, const int32_t* c, uint64_t* bar) {
  const unsigned d = tma_smem(dst), b = tma_smem(bar);
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  switch (rank) {
    case 2:
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                   ::"r"(d), "l"(m), "r"(c[0]), "r"(c[1]), "r"(b) : "memory");
      break;
    case 3:
      asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                   ::"r"(d), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b) : "memory");
      break;
    case 4:
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                   ::"r"(d), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b) : "memory");
      break;
    default:
      asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                   ::"r"(d), "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(b) : "memory");
      break;
  }
}
#endif

#if defined(__CUDACC__)
// The tensor map of `t` for 16-bit elements (bf16 or f16), 128-byte swizzle, zeros out of bounds.
// Throws pg::Error naming the tensor's sizes when the driver refuses it.
inline TmaMap encode_tma_map(const TmaTensor& t, bool bf16, const char* what) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (encode == nullptr) throw Error(std::string(what) + ": the driver has no cuTensorMapEncodeTiled (CUDA 12 or later)");
  cuuint64_t dim[kTmaMaxRank], stride[kTmaMaxRank];
  cuuint32_t box[kTmaMaxRank], step[kTmaMaxRank];
  std::string sizes;
  for (int d = 0; d < t.rank; ++d) {
    dim[d] = static_cast<cuuint64_t>(t.dim[d]);
    if (d > 0) stride[d - 1] = static_cast<cuuint64_t>(t.stride[d]) * 2;
    box[d] = static_cast<cuuint32_t>(t.box[d]);
    step[d] = 1;
    sizes += (d ? " x " : "") + std::to_string(t.dim[d]) + "/" + std::to_string(t.box[d]);
  }
  CUtensorMap map;
  const CUresult r = encode(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            static_cast<cuuint32_t>(t.rank), const_cast<void*>(t.base), dim, stride, box, step,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(std::string(what) + ": cuTensorMapEncodeTiled refused the tensor (dims/box " + sizes + "): error " +
                std::to_string(static_cast<int>(r)));
  static_assert(sizeof(CUtensorMap) == sizeof(TmaMap), "the driver's tensor map is 128 bytes");
  TmaMap out;
  std::memcpy(&out, &map, sizeof out);
  return out;
}
#endif

}  // namespace pg
