// V consecutive elements moved as one access: 16-byte loads and stores along the contiguous
// channel axis of channels-last tensors. The caller guarantees the alignment (see
// max_dispatch.hpp: the vector path is taken only for 16-byte aligned buffers and C % V == 0).
#pragma once

#include <cstdint>

#include "kernels/common/hip_compat.hpp"

namespace pg {

inline bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

template <class T, int V>
struct alignas(sizeof(T) * V < 16 ? sizeof(T) * V : 16) Pack {
  T v[V];
};

template <int V, class T, class Idx>
PG_HD Pack<T, V> load_pack(const T* base, Idx at) {
  return *reinterpret_cast<const Pack<T, V>*>(base + at);
}

template <int V, class T, class Idx>
PG_HD void store_pack(T* base, Idx at, const Pack<T, V>& p) {
  *reinterpret_cast<Pack<T, V>*>(base + at) = p;
}

}  // namespace pg
