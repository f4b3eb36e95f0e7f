// Where an atomic variant adds its terms: dx itself for f32/f64, an f32 workspace for f16 and
// bf16 (half-precision atomics would round every partial sum; frameworks that do so lose
// gradient, CK accumulates in f32 the same way). narrow_workspace() then writes dx once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/problem.hpp"
#include "src/registry.hpp"
#include "kernels/common/exec.hpp"

namespace pg {

inline size_t accum_workspace_bytes(const Problem& p) {
  return dtype_size(p.dtype) == 2 ? static_cast<size_t>(p.in_elems()) * sizeof(float) : 0;
}

// The zeroed buffer the atomics add into.
template <class T, class Exec>
accum_t<T>* zeroed_accumulator(const Exec& ex, const Problem& p, const BwdBuffers& b) {
  void* target = sizeof(T) == 2 ? b.workspace : b.dx;
  ex.zero(target, static_cast<size_t>(p.in_elems()) * sizeof(accum_t<T>));
  return static_cast<accum_t<T>*>(target);
}

template <class T>
struct NarrowItem {
  const float* sum;
  T* dx;
  template <class Idx>
  PG_HD void operator()(Idx i) const { dx[i] = from_accum<T>(sum[i]); }
};

// Half types: dx = the workspace rounded once. f32/f64 summed in place: nothing to do.
template <class T, class Idx, class Exec>
void narrow_workspace(const Exec& ex, const Problem& p, const BwdBuffers& b) {
  if constexpr (sizeof(T) == 2)
    ex.template for_each<Idx>(p.in_elems(), NarrowItem<T>{static_cast<const float*>(b.workspace), static_cast<T*>(b.dx)});
}

}  // namespace pg
