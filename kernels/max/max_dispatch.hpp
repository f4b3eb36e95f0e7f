// Which instantiation a max-pool backward launch runs: element type, index width (int32 when
// every coordinate fits, int64 otherwise), whether the leading spatial axis is trivial (1D/2D
// problems skip its arithmetic), and the channels-last vector width (16-byte accesses along C).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kernels/common/pack.hpp"
#include "kernels/common/variant_defaults.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"
#include "kernels/max/max_geometry.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {

// `wide` forces int64 arithmetic, so tests cover the > 2^31-element path on small problems.
enum class IndexWidth { fit, wide };

inline bool uses_int32(const Problem& p, IndexWidth width) {
  return width == IndexWidth::fit && max_fits_int32(p);
}

// A max variant runs at the index width that fits; its launch_with(..., IndexWidth::wide) is how
// the tests reach the int64 path on small problems.
template <class Self>
struct MaxVariant : VariantDefaults {
  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    Self::launch_with(ex, p, b, IndexWidth::fit);
  }
};

// supports() of the variants built on int32 offsets only.
inline Support int32_offsets_only(const Problem& p) {
  if (!uses_int32(p, IndexWidth::fit)) return Support::no("size: offsets must fit int32 (int64 is max.gather.stored's)");
  return Support::yes();
}

// A leading axis of size 1 whose only tap is its only position: the axis a 1D or 2D problem
// gets. (A kernel-1 window over size 1 with begin padding would sit in the padding instead.)
inline bool leading_axis_trivial(const Problem& p) {
  return p.in[0] == 1 && p.out[0] == 1 && p.kernel[0] == 1 && p.pad_begin[0] == 0;
}

template <class T>
inline constexpr int vector_lanes = 16 / static_cast<int>(sizeof(T));

// Calls f.template operator()<1>() when bit is set, else <0>(): a runtime choice made a
// template argument, so each dispatcher states its choices once instead of as a ladder.
template <class F>
void with_bit(bool bit, F&& f) {
  if (bit) f.template operator()<1>();
  else f.template operator()<0>();
}

// Calls body.template operator()<T, Idx, A0, V>(): T the storage type, Idx the index width,
// A0 the first non-trivial axis, V the channels per work item. The vector path needs
// channels-last, C % V == 0 and every buffer in `buffers` 16-byte aligned; a body without one
// passes kVectors = false and only ever gets V = 1.
template <bool kVectors = true, class Body>
void dispatch_max(const Problem& p, IndexWidth width, std::initializer_list<const void*> buffers, Body&& body) {
  with_dtype(p.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (!uses_int32(p, width)) {
      body.template operator()<T, int64_t, 0, 1>();
      return;
    }
    constexpr int VW = vector_lanes<T>;
    bool vector = kVectors && p.layout == Layout::channels_last && p.c % VW == 0;
    for (const void* b : buffers) vector = vector && aligned16(b);
    with_bit(leading_axis_trivial(p), [&]<int A0>() {
      with_bit(vector, [&]<int kVector>() {
        if constexpr (kVectors || !kVector) body.template operator()<T, int32_t, A0, kVector ? VW : 1>();
      });
    });
  });
}

}  // namespace pg
