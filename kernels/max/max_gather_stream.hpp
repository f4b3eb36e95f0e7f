// max.gather.stream: max-pool backward from stored indices for the overlapping stride-1 window
// (k3 s1, padding 0 or 1) as a block-streaming gather (plane_stream.hpp).
//
// A per-element gather reads 27 stored indices (8 bytes each) per dx element through the
// caches, and the atomic scatter pays a zeroing pass plus contended atomics; both measured
// under a third of the copy ceiling on the 3D k3s1p1 row. Here each window's stored index is
// read from DRAM once, when its plane is staged, and decoded there into the tap it names,
// td * 9 + th * 3 + tw (kNoTap when it names no position of the window inside the input).
// A thread then checks its 3 x (RY + 2) staged windows against compile-time tap numbers: the
// window at row offset a, column offset b from a dx element's first covering window holds it at
// tap (2 - a, 2 - b) along H and W, and the window's td says which of the KD dx planes it
// reaches. Sums run in a fixed order (window plane, then row, then column): deterministic, no
// atomics, every dx element written once.
#pragma once

#include "src/model/variant.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/common/require.hpp"
#include "kernels/common/plane_stream.hpp"

namespace pg {

inline constexpr int32_t kNoTap = -1;

// Typed on the stored index type I rather than reading through load_indices' runtime switch:
// the switch widens every staged index to int64 and took the kernel from 64 to 80 registers
// (3 blocks per SM instead of 4, nvcc 13 sm_90).
template <class T, class Idx, class I>
struct MaxStreamBody {
  using Acc = accum_t<T>;
  struct Slot {
    Acc dy;
    int32_t tap;
  };
  struct Pre {};
  StreamGeom<Idx> g;
  Divider<Idx> by_w, by_h;  // input W, H
  IndexFormat format;
  const T* dy;
  const I* indices;
  T* dx;

  PG_HD Pre prepare(const StreamSlot<Idx>&) const { return {}; }
  PG_HD Slot empty() const { return {Acc(0), kNoTap}; }

  struct Raw {
    T dy;
    I index;
  };
  PG_HD Raw load(Idx outer, Idx od, const StreamSlot<Idx>& s) const {
    const Idx at = g.out_offset(outer, od, 0, 0) + s.at;
    return {dy[at], indices[at]};
  }

  PG_HD Slot finish(const Raw& raw, Idx outer, Idx od, const StreamSlot<Idx>& s, const Pre&) const {
    const int64_t v = static_cast<int64_t>(raw.index);
    int32_t tap = kNoTap;
    if (format == IndexFormat::window) {
      // The window's own tap number over its 3 x 3 (x 3) taps: the same numbering.
      if (v >= 0 && v < 27) tap = static_cast<int32_t>(v);
    } else {
      const int64_t local = format == IndexFormat::plane ? v : v - static_cast<int64_t>(outer) * g.in_plane;
      if (local >= 0 && local < g.in_plane) {
        const Idx row = by_w.div(static_cast<Idx>(local));
        const Idx iw = static_cast<Idx>(local) - row * g.in[2];
        const Idx id = by_h.div(row), ih = row - id * g.in[1];
        const Idx td = id - (od - g.pb[0]), th = ih - (s.oh - g.pb[1]), tw = iw - (s.ow - g.pb[2]);
        if (td >= 0 && td < 3 && th >= 0 && th < 3 && tw >= 0 && tw < 3) tap = static_cast<int32_t>((td * 3 + th) * 3 + tw);
      }
    }
    return {static_cast<Acc>(to_float(raw.dy)), tap};
  }

  template <int KD, int RY>
  PG_HD void gather(const Slot* s, int pitch, Acc (&ring)[KD][RY]) const {
#pragma unroll
    for (int r = 0; r < RY + 2; ++r)
#pragma unroll
      for (int b = 0; b < 3; ++b) {
        const Slot w = s[r * pitch + b];
#pragma unroll
        for (int k = 0; k < RY; ++k) {
          const int a = r - k;  // window row offset from dx row k's first covering window
          if (a < 0 || a > 2) continue;
          const int32_t hw = (2 - a) * 3 + (2 - b);
#pragma unroll
          for (int t = 0; t < KD; ++t)
            if (w.tap == t * 9 + hw) ring[t][k] += w.dy;
        }
      }
  }

  PG_HD void store(Idx at, Acc v) const { dx[at] = from_accum<T>(v); }
};

struct MaxGatherStream : MaxVariant<MaxGatherStream> {
  static constexpr PoolTraits traits{
      .name = "max.gather.stream", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // k3 s1 with pads 0 or 1 on H and W, and on D or D flat (2D); 32 x 32 tiles: W and H cross
  // tiles with partial edge ones, D several planes. The body would also take a kernel-1 D axis
  // longer than 1, which a Domain cannot state (its flat axis has size 1): such problems are
  // left to the other variants rather than admitted by a wider supports().
  static Domain domain() {
    Domain d;
    d.min_dims = 2;
    d.windows = WindowRule::listed;
    d.shapes = {WindowShape{3, 1, 0, 1}};
    d.trivial_leading = 1;
    d.layouts = {Layout::channels_first};
    d.index_formats = {IndexFormat::plane, IndexFormat::global_row, IndexFormat::window};
    d.reach[0] = 7;
    d.reach[1] = 40;
    d.reach[2] = 70;
    d.max_channels = 3;
    return d;
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxGatherStream>(p);
    const auto go = [&]<class T, class Idx, class I>() {
      int64_t unused;
      MaxStreamBody<T, Idx, I> body{make_stream_geom<Idx>(p, &unused),
                                    Divider<Idx>(static_cast<Idx>(p.in[2])),
                                    Divider<Idx>(static_cast<Idx>(p.in[1])),
                                    p.index_format,
                                    static_cast<const T*>(b.dy),
                                    static_cast<const I*>(b.indices),
                                    static_cast<T*>(b.dx)};
      if (p.kernel[0] == 3) launch_plane_stream<Idx, 3>(ex, p, body);
      else launch_plane_stream<Idx, 1>(ex, p, body);
    };
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto with_idx = [&]<class Idx>() {
        switch (p.index_type) {
          case IndexType::i64: go.template operator()<T, Idx, int64_t>(); return;
          case IndexType::i32: go.template operator()<T, Idx, int32_t>(); return;
          case IndexType::u8: go.template operator()<T, Idx, uint8_t>(); return;
        }
      };
      if (uses_int32(p, width)) with_idx.template operator()<int32_t>();
      else with_idx.template operator()<int64_t>();
    });
  }
};

}  // namespace pg
