// Where an atomic variant adds its terms: dx itself for f32/f64, an f32 workspace for f16 and
// bf16 (half-precision atomics would round every partial sum; frameworks that do so lose
// gradient, CK accumulates in f32 the same way). narrow_workspace() then writes dx once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/model/problem.hpp"
#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"

namespace pg {

inline size_t accum_workspace_bytes(const Problem& p) {
  return dtype_size(p.dtype) == 2 ? static_cast<size_t>(p.in_elems()) * sizeof(float) : 0;
}

// The zeroed buffer the atomics add into: `elems` values of dx's accumulator type.
template <class T, class Exec>
accum_t<T>* zeroed_accumulator(const Exec& ex, int64_t elems, void* dx, void* workspace) {
  void* target = sizeof(T) == 2 ? workspace : dx;
  ex.zero(target, static_cast<size_t>(elems) * sizeof(accum_t<T>));
  return static_cast<accum_t<T>*>(target);
}

template <class T, class Exec>
accum_t<T>* zeroed_accumulator(const Exec& ex, const Problem& p, const BwdBuffers& b) {
  return zeroed_accumulator<T>(ex, p.in_elems(), b.dx, b.workspace);
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
void narrow_workspace(const Exec& ex, int64_t elems, const void* workspace, void* dx) {
  if constexpr (sizeof(T) == 2)
    ex.template for_each<Idx>(elems, NarrowItem<T>{static_cast<const float*>(workspace), static_cast<T*>(dx)});
}

template <class T, class Idx, class Exec>
void narrow_workspace(const Exec& ex, const Problem& p, const BwdBuffers& b) {
  narrow_workspace<T, Idx>(ex, p.in_elems(), b.workspace, b.dx);
}

}  // namespace pg
