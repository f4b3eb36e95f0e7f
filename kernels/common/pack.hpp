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

// store_pack for output no kernel of the launch reads again, marked evict-first (CUDA's
// st.global.cs, AMD's nontemporal store). Why: a broadcast that reads a small dy (L2 hits) while
// it writes a large dx ran at 2.6 TB/s with plain stores and at 3.9 TB/s with these, the speed of
// a plain fill (H200, 2026-11-28, bench/results/2026-11-28_h200_broadcast.md).
template <int V, class T, class Idx>
PG_HD void store_pack_streaming(T* base, Idx at, const Pack<T, V>& p) {
#if PG_DEVICE_PASS
  constexpr int kBytes = static_cast<int>(sizeof(Pack<T, V>));
  void* dst = base + at;
  const void* src = &p;
#if defined(__CUDA_ARCH__)
  if constexpr (kBytes == 16) __stcs(static_cast<int4*>(dst), *static_cast<const int4*>(src));
  else if constexpr (kBytes == 8) __stcs(static_cast<int2*>(dst), *static_cast<const int2*>(src));
  else if constexpr (kBytes == 4) __stcs(static_cast<int*>(dst), *static_cast<const int*>(src));
  else if constexpr (kBytes == 2) __stcs(static_cast<short*>(dst), *static_cast<const short*>(src));
  else store_pack<V>(base, at, p);
#else
  typedef int Int4 __attribute__((ext_vector_type(4)));
  typedef int Int2 __attribute__((ext_vector_type(2)));
  if constexpr (kBytes == 16) __builtin_nontemporal_store(*static_cast<const Int4*>(src), static_cast<Int4*>(dst));
  else if constexpr (kBytes == 8) __builtin_nontemporal_store(*static_cast<const Int2*>(src), static_cast<Int2*>(dst));
  else if constexpr (kBytes == 4) __builtin_nontemporal_store(*static_cast<const int*>(src), static_cast<int*>(dst));
  else if constexpr (kBytes == 2) __builtin_nontemporal_store(*static_cast<const short*>(src), static_cast<short*>(dst));
  else store_pack<V>(base, at, p);
#endif
#else
  store_pack<V>(base, at, p);
#endif
}

}  // namespace pg
