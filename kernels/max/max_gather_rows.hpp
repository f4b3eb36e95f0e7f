// max.gather.rows: max-pool backward from stored indices for 1D problems (channels-first: every
// (n, c) row contiguous), any kernel, stride, dilation, padding, ceil mode, dtype, index format
// and type, over segments of a row.
//
// Why: on long 1D rows (TCN's dilated k3 d4 over 4,096, SoundNet's k8 s8 over 110,250) the
// per-element gather waits for an index and then for its dy, one element per thread, and the
// run and tile variants read a window's index once per covering run or walk N-D tiles: 42-67% of
// the copy ceiling, TCN 1.34x PyTorch. A row is one contiguous range of dy and indices and one of
// dx, so here a block owns a segment of a row:
//   1. loads the windows that hold any of its positions, consecutive threads on consecutive
//      windows, a batch of loads in flight per thread, and keeps per window (a NamedDy in shared
//      memory) its dy and the segment-local position its index names, -1 when that is outside
//      the segment. Whether the position is a tap of the window is not checked here: phase 2
//      looks a position up only in the windows of which it is a tap, so a foreign index (ORT's
//      MaxPoolGrad follows them) is never followed;
//   2. each dx position of the segment, consecutive threads on consecutive positions, sums dy
//      over the windows holding it, ascending, where the window names it, and is written once,
//      coalesced. At stride 1 the holders of an interior position are every d-th window of a
//      range (no division, one shared-memory load per tap); near a segment's ends, undilated
//      strided axes and dilated strided ones bound the range by divisions.
// Deterministic (each element summed by one thread in ascending window order, as
// max.gather.stored sums it: bitwise the same), no atomics, no zeroing pass over dx.
//
// 2026-11-27 (bench/results/2026-11-27_rows_lean.md), against this file's first version: TCN
// k3 d4 0.288 -> 0.190 ms on the H100 (96% of copy), 0.285 -> 0.163 on the H200; 1D k5 d3
// 0.373 -> 0.221 (H100). Strides of 2 and more leave few windows per block in flight: there
// tiled, direct and stored.run stay ahead.
//
// The CPU backend runs the same phases with emulated threads and a small segment
// (kRowsCpuShape), so fuzz-sized rows span several segments with a partial last one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/common/numeric.hpp"
#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"
#include "kernels/max/max_tile_walk.hpp"

namespace pg {

// Segment shape: threads per block and dx positions per thread (a segment is their product).
struct MaxRowsShape {
  int threads, per_thread;
};
inline constexpr MaxRowsShape kRowsGpuShape{kMaxTiledThreads, 8};
inline constexpr MaxRowsShape kRowsCpuShape{3, 2};
// Window loads each thread has in flight before it decodes any.
inline constexpr int kRowsLoadBatch = 4;

struct MaxRowsPlan {
  int threads, per_thread, segment;  // segment: dx positions per block
  int windows;                       // the most windows that hold a position of one segment
  size_t bytes;                      // shared memory: a NamedDy per window
};

// The plan for `shape`, shrinking positions per thread until the windows fit 48 KiB; false when
// not even one position per thread does. A block waits for its loads before it sums, so it needs
// windows enough to keep loads in flight: with stride s a segment holds about 1/s windows per
// position, and a thread takes s times shape.per_thread positions (up to kRowsMaxPerThread, and
// no more than a row's share).
inline constexpr int kRowsMaxPerThread = 32;
inline bool plan_max_rows(const Problem& p, size_t slot_size, MaxRowsShape shape, MaxRowsPlan* plan) {
  const int64_t reach = p.effective_kernel(2) - 1, stride = p.stride[2];
  const int64_t row_share = (p.in[2] + shape.threads - 1) / shape.threads;
  const int64_t wanted = std::min<int64_t>({shape.per_thread * stride, kRowsMaxPerThread, row_share});
  for (int per = static_cast<int>(std::max<int64_t>(wanted, 1)); per >= 1; --per) {
    const int64_t segment = int64_t{shape.threads} * per;
    const int64_t windows = (segment - 1 + reach) / stride + 1;
    const int64_t bytes = windows * static_cast<int64_t>(slot_size);
    if (bytes <= static_cast<int64_t>(kMaxTiledSmemBytes)) {
      *plan = MaxRowsPlan{shape.threads, per, static_cast<int>(segment), static_cast<int>(windows),
                          static_cast<size_t>(bytes)};
      return true;
    }
  }
  return false;
}

template <class T, class Idx>
struct MaxRowsBlock {
  using Value = T;
  using Index = Idx;
  using A = accum_t<T>;
  using Slot = NamedDy<A>;
  static constexpr int kPhases = 2;

  MaxGeom<Idx> g;
  MaxRowsPlan plan;
  Divider<Idx> by_segments;  // segments per row
  const T* dy;
  const void* indices;
  T* dx;

  struct Frame {
    Idx nc, x0, o_lo;
    int len, windows;  // dx positions of this segment, and windows loaded
    Idx origin;        // x0 + padding - o_lo * stride: window w's first tap is w * stride - origin
    Slot* slots;       // per window
  };

  PG_HD Frame frame(Idx tile, unsigned char* smem) const {
    Frame f;
    f.nc = by_segments.div(tile);
    f.x0 = (tile - f.nc * static_cast<Idx>(by_segments.divisor)) * plan.segment;
    const Idx left = g.in[2] - f.x0;
    f.len = left < plan.segment ? static_cast<int>(left) : plan.segment;
    Idx lo, hi, unused;
    covering(g, 2, f.x0, &lo, &unused);
    covering(g, 2, f.x0 + f.len - 1, &unused, &hi);
    f.o_lo = lo;
    f.windows = hi >= lo ? static_cast<int>(hi - lo + 1) : 0;
    f.origin = f.x0 + g.pb[2] - lo * g.s[2];
    f.slots = reinterpret_cast<Slot*>(smem);
    return f;
  }

  PG_HD void start(const Frame&, int) const {}

  PG_HD void phase(int i, const Frame& f, int tid) const {
    if (i == 0) load(f, tid);
    else sum(f, tid);
  }

  // Phase 1: the segment's windows, kRowsLoadBatch loads in flight per thread. A window keeps the
  // position its index names only when that lies in the segment; whether it is one of the
  // window's taps is left to phase 2, which looks a position up only in the windows holding it.
  PG_HD void load(const Frame& f, int tid) const {
    if (g.index_type == IndexType::i64) load_as<int64_t>(f, tid);
    else if (g.index_type == IndexType::i32) load_as<int32_t>(f, tid);
    else load_as<uint8_t>(f, tid);
  }

  template <class S>
  PG_HD void load_as(const Frame& f, int tid) const {
    const Idx row = f.nc * g.out_plane + f.o_lo;
    const S* stored_at = static_cast<const S*>(indices) + row;
    const T* dy_at = dy + row;
    // A stored plane position minus this is segment-local (1D: global_col and global_row agree).
    const int64_t plane_x0 =
        (g.format == IndexFormat::plane ? 0 : static_cast<int64_t>(f.nc) * g.in_plane) + f.x0;
    for (int base = tid; base < f.windows; base += kRowsLoadBatch * plan.threads) {
      S stored[kRowsLoadBatch] = {};  // zeroed: compilers cannot see that w bounds both loops alike
      A grad[kRowsLoadBatch] = {};
#pragma unroll
      for (int b = 0; b < kRowsLoadBatch; ++b) {
        const int w = base + b * plan.threads;
        if (w < f.windows) {
          stored[b] = stored_at[w];
          grad[b] = to_float(dy_at[w]);
        }
      }
#pragma unroll
      for (int b = 0; b < kRowsLoadBatch; ++b) {
        const int w = base + b * plan.threads;
        if (w >= f.windows) break;
        const int64_t v = static_cast<int64_t>(stored[b]);  // u8 255 stays 255: never a tap
        int64_t at;                                         // segment-local position named
        if (g.format == IndexFormat::window) {
          const bool tap = static_cast<uint64_t>(v) < static_cast<uint64_t>(g.k[2]);
          at = tap ? static_cast<int64_t>(w) * g.s[2] - f.origin + v * g.d[2] : -1;
        } else {
          at = v - plane_x0;
        }
        const int32_t named = static_cast<uint64_t>(at) < static_cast<uint64_t>(f.len) ? static_cast<int32_t>(at) : -1;
        f.slots[w] = Slot{named, grad[b]};
      }
    }
  }

  // Phase 2: each position sums the windows naming it among those holding it (of which it is a
  // tap: window w with w * stride = x + origin - j * dilation for tap j), in ascending window
  // order. At stride 1 the holders are windows t - reach .. t step dilation (t = x + origin),
  // clipped to those loaded only near the segment's ends; undilated, they are a range of
  // windows bounded by two divisions; only a dilated and strided axis divides per tap.
  PG_HD void sum(const Frame& f, int tid) const {
    const Idx at = f.nc * g.in_plane + f.x0;  // dx element of position 0
    const int k = static_cast<int>(g.k[2]), d = static_cast<int>(g.d[2]), s = static_cast<int>(g.s[2]);
    const int reach = static_cast<int>(g.reach[2]), last = f.windows - 1;
    for (int x = tid; x < f.len; x += plan.threads) {
      const int t = x + static_cast<int>(f.origin);
      A acc = A(0);
      auto add = [&](int w) {
        const Slot e = f.slots[w];
        if (e.named == x) acc += e.grad;
      };
      if (s == 1 && t >= reach && t <= last) {  // every tap's window loaded: no bound to compute
        for (int w = t - reach; w <= t; w += d) add(w);
      } else if (s == 1 && t >= 0) {  // near the segment's ends: the loaded ones
        int first = t - reach, end = t;
        if (first < 0) first = static_cast<int>(g.d_div[2].mod(t));
        if (end > last) end = t - d * static_cast<int>(g.d_div[2].div(t - last + d - 1));
        for (int w = first; w <= end; w += d) add(w);
      } else if (d == 1 && t >= 0) {  // windows whose span [w * s, w * s + reach] holds t
        const int w_top = static_cast<int>(g.s_div[2].div(t)), from = t - reach;
        const int w_hi = w_top < last ? w_top : last;
        const int w_lo = from <= 0 ? 0 : static_cast<int>(g.s_div[2].div(from + s - 1));
        for (int w = w_lo; w <= w_hi; ++w) add(w);
      } else {
        for (int j = k - 1; j >= 0; --j) {
          const int u = t - j * d;
          if (u < 0) continue;
          const int w = static_cast<int>(g.s_div[2].div(static_cast<Idx>(u)));
          if (w * s == u && w <= last) add(w);
        }
      }
      dx[at + x] = from_accum<T>(acc);
    }
  }
};

struct MaxGatherRows : MaxVariant<MaxGatherRows> {
  static constexpr PoolTraits traits{
      .name = "max.gather.rows", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // 1D, channels-first, every window, dtype, index format and type whose one-position-per-thread
  // segment's windows fit in shared memory (supports()). Rows up to several CPU segments long
  // with a partial last one.
  static Domain domain() { return channels_first_rows(); }

  static Support supports(const Problem& p) {
    MaxRowsPlan plan;
    const size_t slot = p.dtype == DType::f64 ? sizeof(NamedDy<double>) : sizeof(NamedDy<float>);
    if (!plan_max_rows(p, slot, MaxRowsShape{kRowsGpuShape.threads, 1}, &plan))
      return Support::no("window reach too large: a segment's windows must fit 48 KiB of shared memory");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    require_supported<MaxGatherRows>(p);
    with_dtype(p.dtype, [&](auto tag) {
      using T = decltype(tag);
      auto run = [&]<class Idx>() {
        MaxRowsBlock<T, Idx> block;
        if (!plan_max_rows(p, sizeof(NamedDy<accum_t<T>>), Exec::is_gpu ? kRowsGpuShape : kRowsCpuShape, &block.plan))
          throw Error("max.gather.rows: no segment fits");
        block.g = make_max_geom<Idx>(p, 1);
        const int64_t segments = (p.in[2] + block.plan.segment - 1) / block.plan.segment;
        block.by_segments = Divider<Idx>(segments);
        block.dy = static_cast<const T*>(b.dy);
        block.indices = b.indices;
        block.dx = static_cast<T*>(b.dx);
        const int64_t tiles = p.n * p.c * segments;
        if (tiles > 0) run_max_tiles(ex, block, tiles);
      };
      if (uses_int32(p, width)) run.template operator()<int32_t>();
      else run.template operator()<int64_t>();
    });
  }
};

}  // namespace pg
