// max.scatter.ordered: max-pool backward from stored indices for every window (any kernel, stride,
// dilation, padding), channels-first, every index format and type, as a scatter into shared
// memory that adds in row-major window order: deterministic, bitwise equal to the gathers.
//
// Why: a gather checks every window that covers a dx element against it. On the overlapping
// stride-1 rows that is 27 compares per element for 3D k3 windows (max.gather.stream: 202 thread
// instructions per element against a budget of 126 at the copy ceiling, I3D's branch at 50% of
// copy, H200, 2026-12-02), and more for SPP's k13. A window names one position, so a scatter costs
// one add per window whatever its size; what it loses is the order of the adds, which the
// deterministic variants fix (row-major window order, from +0). Here each warp owns a tile of dx
// (rows x columns of one (n, c) plane, over a run of D planes) and keeps the order itself:
//   - it walks the windows that can name a tile position plane by plane (od ascending), each
//     plane's window box in row-major order, 32 windows a round (one a lane, rounds in order);
//   - each lane decodes its window's stored index (the checks every variant makes) and, where it
//     names a tile position, adds the window's dy to that position's accumulator in a ring of
//     dx planes in shared memory. Lanes of a round that name the same position add one after
//     another in lane order (a match of the named slots ranks each lane among its peers), so every
//     position gets its windows' dy in row-major order;
//   - once no later window plane can reach a dx plane, the warp stores it, coalesced, and zeroes
//     its ring slot.
// Each dy and stored index is read once per tile that its window can reach (a halo of the
// window's reach at tile edges); each dx element is written once; no atomics anywhere.
//
// The CPU backend runs each warp's windows one after another in the same order: the tile, box,
// ring and flush logic is fuzzed in CI; the lane ranking runs on NVIDIA GPUs only (elsewhere a
// warp's first lane walks its windows alone).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

inline constexpr int kOrderedLanes = 32;
inline constexpr int kOrderedWarps = 4;  // tiles per block, one a warp
// Shared memory per warp: 4 warps in 48 KiB, so a block needs no opt-in. A 28 x 28 tile of a
// 3D k3 ring (3 planes of f32) is 9.4 KiB.
inline constexpr size_t kOrderedWarpBytes = 12 * 1024;
// Windows a lane loads before it adds any: four rounds of a warp in flight.
inline constexpr int kOrderedBatch = 4;

// How the tiles lie. The same on the host and in the kernel.
template <class Idx>
struct OrderedShape {
  int th = 1, tw = 1;      // dx rows and columns per tile
  int ring = 1;            // dx planes in flight: max(effective D kernel, D stride)
  int box_w = 1;           // window columns a tile's box lays out per row (its widest)
  int box_rows = 1;        // window rows of its box at most
  Idx chunk = 1;           // dx planes per tile along D
  Idx items = 0;           // tiles in all
  Divider<Idx> tiles_w, tiles_h, chunks;
  Divider<int32_t> by_box_w, by_tw, by_ring;
};

// Caps on the CPU backend, so fuzz-sized problems span several tiles along H, W and D.
struct OrderedCaps {
  int max_tw, max_th;
  int64_t max_chunk;
  int64_t want_items;
};
inline constexpr OrderedCaps kOrderedGpuCaps{64, 1 << 20, int64_t{1} << 40, 4096};
inline constexpr OrderedCaps kOrderedCpuCaps{8, 4, 4, 1};

// Windows along axis a that can reach n consecutive positions at most.
inline int64_t ordered_box_extent(const Problem& p, int a, int64_t n) {
  return std::min<int64_t>(p.out[a], (n - 1 + p.dilation[a] * (p.kernel[a] - 1)) / p.stride[a] + 1);
}

// The tiles for p: columns up to the caps, then as many rows as the ring fits in a warp's bytes,
// both split evenly; D cut into chunks only when the tiles alone leave the GPU short of warps.
// false when not even a one-position tile fits (a D reach too long for the ring).
template <class Idx>
bool plan_max_ordered(const Problem& p, size_t accum_size, const OrderedCaps& caps, OrderedShape<Idx>* s) {
  const int64_t eff_d = p.dilation[0] * (p.kernel[0] - 1) + 1;
  const int64_t ring = std::max<int64_t>(eff_d, p.stride[0]);
  const int64_t positions = static_cast<int64_t>(kOrderedWarpBytes / accum_size) / ring;
  if (positions < 1) return false;
  const int64_t tiles_w = (p.in[2] + caps.max_tw - 1) / caps.max_tw;
  int64_t tw = (p.in[2] + tiles_w - 1) / tiles_w;
  tw = std::min(tw, positions);
  const int64_t tiles_w2 = (p.in[2] + tw - 1) / tw;
  tw = (p.in[2] + tiles_w2 - 1) / tiles_w2;
  const int64_t max_th = std::max<int64_t>(1, std::min<int64_t>(caps.max_th, positions / tw));
  const int64_t tiles_h = (p.in[1] + max_th - 1) / max_th;
  const int64_t th = (p.in[1] + tiles_h - 1) / tiles_h;
  const int64_t planes = p.n * p.c * tiles_h * tiles_w2;
  // An empty batch or channel dimension has no tiles (and no runs to want).
  const int64_t want = planes == 0 ? 1 : std::min<int64_t>(p.in[0], std::max<int64_t>(1, (caps.want_items + planes - 1) / planes));
  int64_t chunk = std::min<int64_t>((p.in[0] + want - 1) / want, caps.max_chunk);
  const int64_t chunks = (p.in[0] + chunk - 1) / chunk;
  chunk = (p.in[0] + chunks - 1) / chunks;
  s->th = static_cast<int>(th);
  s->tw = static_cast<int>(tw);
  s->ring = static_cast<int>(ring);
  s->box_w = static_cast<int>(ordered_box_extent(p, 2, tw));
  s->box_rows = static_cast<int>(ordered_box_extent(p, 1, th));
  s->chunk = static_cast<Idx>(chunk);
  s->items = static_cast<Idx>(planes * chunks);
  s->tiles_w = Divider<Idx>(tiles_w2);
  s->tiles_h = Divider<Idx>(tiles_h);
  s->chunks = Divider<Idx>(chunks);
  s->by_box_w = Divider<int32_t>(s->box_w);
  s->by_tw = Divider<int32_t>(s->tw);
  s->by_ring = Divider<int32_t>(s->ring);
  return true;
}

// One warp's tile. I: the stored index type; A0: 1 when D is trivially 1 (1D and 2D problems).
template <class T, class Idx, class I, int A0>
struct MaxOrderedBody {
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  OrderedShape<Idx> s;
  const T* dy;
  const I* indices;
  T* dx;
  bool plain;  // plane or global_row indices of undilated windows: decode's short path

  // Where a tile lies, and its window box (planes od_lo..od_hi, rows from oh_lo, columns
  // ow_lo..ow_hi laid out box_w apart).
  struct Tile {
    Idx outer, h0, w0, z_begin, z_end;
    Idx od_lo, od_hi, oh_lo, oh_hi, ow_lo, ow_hi;
    int windows;  // laid-out windows per plane: rows * box_w
  };

  PG_HD Tile tile(Idx item) const {
    Tile t;
    const Idx iw = s.tiles_w.mod(item);
    Idx rest = s.tiles_w.div(item);
    const Idx ih = s.tiles_h.mod(rest);
    rest = s.tiles_h.div(rest);
    const Idx ic = s.chunks.mod(rest);
    t.outer = s.chunks.div(rest);
    t.w0 = iw * s.tw;
    t.h0 = ih * s.th;
    t.z_begin = ic * s.chunk;
    t.z_end = t.z_begin + s.chunk < g.in[0] ? t.z_begin + s.chunk : g.in[0];
    const Idx h1 = t.h0 + s.th < g.in[1] ? t.h0 + s.th : g.in[1];
    const Idx w1 = t.w0 + s.tw < g.in[2] ? t.w0 + s.tw : g.in[2];
    Idx unused;
    covering(g, 0, t.z_begin, &t.od_lo, &unused);
    covering(g, 0, t.z_end - 1, &unused, &t.od_hi);
    covering(g, 1, t.h0, &t.oh_lo, &unused);
    covering(g, 1, h1 - 1, &unused, &t.oh_hi);
    covering(g, 2, t.w0, &t.ow_lo, &unused);
    covering(g, 2, w1 - 1, &unused, &t.ow_hi);
    const Idx rows = t.oh_hi - t.oh_lo + 1;
    t.windows = rows > 0 && t.ow_hi >= t.ow_lo ? static_cast<int>(rows) * s.box_w : 0;
    return t;
  }

  // Window j of plane od's box: its dy, and the ring slot of the tile position its stored index
  // names, or -1 (a laid-out column past the box, an index naming no tap, or a position outside
  // the tile or its D run). Reads only.
  struct Named {
    int slot;
    A grad;
  };
  struct Raw {
    T dy;
    I index;
    bool real;
  };
  PG_HD Raw load(const Tile& t, Idx od, int j) const {
    const int r = s.by_box_w.div(j), c = j - r * s.box_w;
    const Idx ow = t.ow_lo + c;
    if (j >= t.windows || ow > t.ow_hi) return {T{}, I{}, false};
    const Idx at = ((t.outer * g.out[0] + od) * g.out[1] + t.oh_lo + r) * g.out[2] + ow;
    return {dy[at], indices[at], true};
  }
  PG_HD Named name(const Tile& t, Idx od, int j, const Raw& raw) const {
    if (!raw.real) return {-1, A(0)};
    const int r = s.by_box_w.div(j);
    const Idx o[kAxes] = {od, t.oh_lo + r, t.ow_lo + (j - r * s.box_w)};
    Idx q[kAxes];
    if (!decode(static_cast<int64_t>(raw.index), t.outer, o, q)) return {-1, A(0)};
    const Idx lh = q[1] - t.h0, lw = q[2] - t.w0;
    if (q[0] < t.z_begin || q[0] >= t.z_end || lh < 0 || lh >= s.th || lw < 0 || lw >= s.tw) return {-1, A(0)};
    const int z = s.by_ring.mod(static_cast<int32_t>(q[0]));
    return {(z * s.th + static_cast<int>(lh)) * s.tw + static_cast<int>(lw), static_cast<A>(to_float(raw.dy))};
  }

  // Whether stored index v names a tap of window o, and its input coordinates in q: with `plain`
  // a subtraction, the divisions by W and H and a range check per axis (every position of an
  // undilated window's span is a tap), else decode_index_at's general path (~85 instructions
  // against ~25: the 3D k3 rows spend most of a window's instructions here).
  PG_HD bool decode(int64_t v, Idx nc, const Idx* o, Idx* q) const {
    if (!plain) return decode_index_at<A0>(g, v, nc, o, q);
    const int64_t local = g.format == IndexFormat::plane ? v : v - static_cast<int64_t>(nc) * g.in_plane;
    if (static_cast<uint64_t>(local) >= static_cast<uint64_t>(g.in_plane)) return false;
    Idx r = static_cast<Idx>(local);
    q[0] = 0;
#pragma unroll
    for (int a = kAxes - 1; a > A0; --a) {
      const Idx next = g.in_div[a].div(r);
      q[a] = r - next * g.in[a];
      r = next;
    }
    q[A0] = r;
    bool ok = true;
#pragma unroll
    for (int a = A0; a < kAxes; ++a)
      ok = ok && static_cast<uint64_t>(q[a] - (o[a] * g.s[a] - g.pb[a])) <= static_cast<uint64_t>(g.reach[a]);
    return ok;
  }

  // dx planes [from, to) are final: stored (the tile's positions inside the tensor) and their
  // ring slots zeroed. Lanes `lane`, + lanes, ... of the plane's positions.
  PG_HD void flush(const Tile& t, Idx from, Idx to, A* ring, int lane, int lanes) const {
    const int positions = s.th * s.tw;
    for (Idx z = from; z < to; ++z) {
      A* plane = ring + s.by_ring.mod(static_cast<int32_t>(z)) * positions;
      for (int i = lane; i < positions; i += lanes) {
        const int r = s.by_tw.div(i), c = i - r * s.tw;
        const Idx h = t.h0 + r, w = t.w0 + c;
        if (h < g.in[1] && w < g.in[2]) dx[((t.outer * g.in[0] + z) * g.in[1] + h) * g.in[2] + w] = from_accum<T>(plane[i]);
        plane[i] = A(0);
      }
    }
  }

  // The first dx plane no window plane after od reaches.
  PG_HD Idx final_before(const Tile& t, Idx od) const {
    const Idx next = (od + 1) * g.s[0] - g.pb[0];
    return next < t.z_end ? next : t.z_end;
  }

  // The CPU backend's warp: every window in order, one after another. The ring starts zero and
  // is left zero.
  PG_HD void run_in_order(Idx item, A* ring) const {
    const Tile t = tile(item);
    Idx flushed = t.z_begin;
    for (Idx od = t.od_lo; od <= t.od_hi; ++od) {
      for (int j = 0; j < t.windows; ++j) {
        const Named n = name(t, od, j, load(t, od, j));
        if (n.slot >= 0) ring[n.slot] += n.grad;
      }
      const Idx to = final_before(t, od);
      if (to > flushed) {
        flush(t, flushed, to, ring, 0, 1);
        flushed = to;
      }
    }
    flush(t, flushed, t.z_end, ring, 0, 1);
  }

#if PG_GPU_COMPILER && defined(__CUDA_ARCH__)
  // The GPU's warp: rounds of 32 windows in order, kOrderedBatch rounds loaded before any adds.
  // Within a round, the lanes naming one slot add in lane order (their rank among the peers
  // __match_any_sync finds), one rank a step.
  __device__ void run_warp(Idx item, A* ring, int lane) const {
    const Tile t = tile(item);
    Idx flushed = t.z_begin;
    for (Idx od = t.od_lo; od <= t.od_hi; ++od) {
      for (int base = 0; base < t.windows; base += kOrderedLanes * kOrderedBatch) {
        Raw raw[kOrderedBatch];
#pragma unroll
        for (int b = 0; b < kOrderedBatch; ++b) {
          const int j = base + b * kOrderedLanes + lane;
          raw[b] = j < t.windows ? load(t, od, j) : Raw{T{}, I{}, false};
        }
#pragma unroll
        for (int b = 0; b < kOrderedBatch; ++b) {
          const int j = base + b * kOrderedLanes + lane;
          const Named n = name(t, od, j, raw[b]);
          const unsigned peers = __match_any_sync(0xffffffffu, n.slot);
          int rank = __popc(peers & ((1u << lane) - 1u));
          if (n.slot < 0) rank = -1;
          for (int step = 0; __any_sync(0xffffffffu, rank >= step); ++step) {
            if (rank == step) ring[n.slot] += n.grad;
            __syncwarp();
          }
        }
      }
      const Idx to = final_before(t, od);
      if (to > flushed) {
        flush(t, flushed, to, ring, lane, kOrderedLanes);
        __syncwarp();
        flushed = to;
      }
    }
    flush(t, flushed, t.z_end, ring, lane, kOrderedLanes);
    __syncwarp();
  }
#endif
};

#if PG_GPU_COMPILER

template <class Body>
__global__ void __launch_bounds__(kOrderedLanes * kOrderedWarps) max_ordered_kernel(Body body) {
  extern __shared__ unsigned char ordered_smem[];
  using A = typename Body::A;
  const int warp = static_cast<int>(threadIdx.x) / kOrderedLanes, lane = static_cast<int>(threadIdx.x) % kOrderedLanes;
  const int positions = body.s.ring * body.s.th * body.s.tw;
  A* ring = reinterpret_cast<A*>(ordered_smem) + warp * positions;
  for (int i = lane; i < positions; i += kOrderedLanes) ring[i] = A(0);
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
  using Idx = decltype(body.s.items);
  for (int64_t item = static_cast<int64_t>(blockIdx.x) * kOrderedWarps + warp; item < body.s.items;
       item += static_cast<int64_t>(gridDim.x) * kOrderedWarps) {
#if defined(__CUDA_ARCH__)
    body.run_warp(static_cast<Idx>(item), ring, lane);
#else
    // No 32-lane warp intrinsics here: the warp's first lane walks its windows alone.
    if (lane == 0) body.run_in_order(static_cast<Idx>(item), ring);
#endif
  }
}

#endif

struct MaxScatterOrdered : MaxVariant<MaxScatterOrdered> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.ordered", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  static Domain domain() {
    Domain d;
    d.layouts = {Layout::channels_first};
    // Several tiles along H and W and runs of up to four D planes on the CPU's caps.
    d.reach[0] = 9;
    d.reach[1] = 12;
    d.reach[2] = 24;
    return d;
  }
  static Support supports(const Problem& p) {
    OrderedShape<int64_t> s;
    if (!plan_max_ordered(p, p.dtype == DType::f64 ? sizeof(double) : sizeof(float), kOrderedGpuCaps, &s))
      return Support::no("window: the D reach needs more dx planes in flight than a warp's shared memory holds");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxScatterOrdered>(p);
    const auto go = [&]<class T, class Idx, class I, int A0>() {
      using Body = MaxOrderedBody<T, Idx, I, A0>;
      const bool plain = (p.index_format == IndexFormat::plane || p.index_format == IndexFormat::global_row) &&
                         p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
      Body body{make_max_geom<Idx>(p, 1), {}, static_cast<const T*>(b.dy), static_cast<const I*>(b.indices),
                static_cast<T*>(b.dx), plain};
      plan_max_ordered(p, sizeof(typename Body::A), Exec::is_gpu ? kOrderedGpuCaps : kOrderedCpuCaps, &body.s);
      if (body.s.items == 0) return;
      run(ex, body);
    };
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto with_a0 = [&]<class Idx, class I>() {
        if (leading_axis_trivial(p)) go.template operator()<T, Idx, I, 1>();
        else go.template operator()<T, Idx, I, 0>();
      };
      const auto with_idx = [&]<class Idx>() {
        switch (p.index_type) {
          case IndexType::i64: with_a0.template operator()<Idx, int64_t>(); return;
          case IndexType::i32: with_a0.template operator()<Idx, int32_t>(); return;
          case IndexType::u8: with_a0.template operator()<Idx, uint8_t>(); return;
        }
      };
      if (uses_int32(p, width)) with_idx.template operator()<int32_t>();
      else with_idx.template operator()<int64_t>();
    });
  }

 private:
  template <class Body>
  static void run(const CpuExec& ex, const Body& body) {
    using Idx = decltype(body.s.items);
    const size_t positions = static_cast<size_t>(body.s.ring) * body.s.th * body.s.tw;
    ex.template for_each<Idx>(body.s.items, [body, positions](Idx item) {
      std::vector<typename Body::A> ring(positions, typename Body::A(0));
      body.run_in_order(item, ring.data());
    });
  }
#if PG_GPU_COMPILER
  template <class Body>
  static void run(const GpuExec& ex, const Body& body) {
    const int64_t blocks = std::min<int64_t>((static_cast<int64_t>(body.s.items) + kOrderedWarps - 1) / kOrderedWarps, int64_t{1} << 20);
    const size_t bytes = kOrderedWarps * static_cast<size_t>(body.s.ring) * body.s.th * body.s.tw * sizeof(typename Body::A);
    max_ordered_kernel<Body><<<static_cast<unsigned>(blocks), kOrderedLanes * kOrderedWarps, bytes, ex.stream>>>(body);
    PG_LAUNCH_CHECK("max_ordered_kernel");
  }
#endif
};

}  // namespace pg
