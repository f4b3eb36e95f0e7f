// max.scatter.ordered: max-pool backward from stored indices for every window (any kernel,
// stride, dilation, padding), both layouts, every index format and type, as one thread per
// (n, c) plane that walks the plane's windows in row-major order and adds each window's dy into
// a private ring of dx rows in shared memory.
//
// Why: the deterministic gathers of overlapping max windows look, for each dx element, at every
// window that covers it (k * k compares on YOLO's SPP k13) or count and list first and scan the
// listed positions' boxes after (max.gather.counted: 34-62% of the copy ceiling on SPP/SPPF,
// H100, 2026-12-06, a block's critical path). A thread that owns a whole plane needs neither:
// walking the windows in the order the sums run, it adds each window's dy where its index
// points, one shared-memory add a window whatever the window's size, and each dx element's sum
// is built in exactly the order the other deterministic variants use (row-major window order,
// in the accumulator type, from zero), so the result is bitwise theirs, with no atomics.
//
// The ring: along the ring axis (the first spatial axis longer than 1: D in 3D, H in 2D, W in
// 1D) a window row o reaches the padded rows [o * s, o * s + reach]; once o is done the rows
// below (o + 1) * s are final. So a thread keeps reach + 1 rows of its plane (each the plane's
// positions past the ring axis), writes the final ones to dx as the walk passes them (a row no
// window reaches, between windows of a long stride, is written 0) and reuses their slots.
//
// Channels-last is the layout it is built for: a warp's 32 threads are 32 consecutive channels,
// so each window's index and dy and each dx row are coalesced, and slot s of thread t lies at
// shared word s * 32 + t, one bank a thread. Channels-first planes lie apart, so there each warp
// access is 32 sectors; it computes the same sums and is left to the selection to rank.
//
// Parallelism is one thread a plane, N * C threads (16,384 on YOLO's SPP): few warps a
// multiprocessor, so each thread reads kOrderedBatch windows ahead of the ones it adds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "src/model/variant.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

// Threads per block: one warp, so that the few planes of a pooling layer spread over every
// multiprocessor instead of filling a few.
inline constexpr int kOrderedThreads = 32;
// A thread's ring in bytes: a block's 32 rings in 64 KiB (an AMD workgroup's whole LDS; NVIDIA
// opts in past 48 KiB).
inline constexpr size_t kOrderedRingBytes = 64 * 1024 / kOrderedThreads;
// Windows a thread reads ahead of the ones it adds: a multiprocessor holds about four warps of
// YOLO-sized layers, which must keep ~20 KB of loads in flight to cover DRAM latency.
inline constexpr int kOrderedBatch = 16;

// The ring's shape for problem p: its axis, its rows (reach + 1 along the axis) and the
// positions of a row (the plane's positions past the axis).
struct OrderedRing {
  int axis;
  int64_t rows, row_positions;
  int64_t slots() const { return rows * row_positions; }
};

inline OrderedRing ordered_ring(const Problem& p) {
  OrderedRing r{kAxes - 1, 1, 1};
  for (int a = 0; a < kAxes; ++a)
    if (p.in[a] > 1 || p.out[a] > 1) {
      r.axis = a;
      break;
    }
  r.rows = p.dilation[r.axis] * (p.kernel[r.axis] - 1) + 1;
  for (int a = r.axis + 1; a < kAxes; ++a) r.row_positions *= p.in[a];
  return r;
}

inline size_t ordered_ring_bytes(const Problem& p) {
  const OrderedRing r = ordered_ring(p);
  const size_t accum = p.dtype == DType::f64 ? 8 : 4;
  // Beyond the budget in any factor: no ring (and no overflow in the product).
  if (r.rows > int64_t(kOrderedRingBytes) || r.row_positions > int64_t(kOrderedRingBytes)) return SIZE_MAX;
  return static_cast<size_t>(r.slots()) * accum;
}

// One plane's walk. Ring: A& at(int slot) const, the thread's own slots.
template <class T, class Idx, int A0>
struct MaxOrderedPlane {
  using A = accum_t<T>;
  MaxGeom<Idx> g;
  int ra;             // the ring axis
  Idx rows;           // ring rows: reach + 1 along ra
  Idx row_positions;  // input positions of a ring row
  Idx s_mod_rows;     // the stride along ra, modulo rows
  Idx planes;         // N * C
  bool plain;         // plane-format indices and no dilation: decode's short path
  const T* dy;
  const void* indices;
  T* dx;

  // The ring slot that index v of window o names; -1 when it names none of the window's taps.
  // first: the padded ra coordinate of the window row's first tap; first_row: its ring row.
  PG_HD int slot_of(int64_t v, Idx nc, const Idx* o, Idx first, Idx first_row) const {
    Idx q[kAxes];
    if (plain) {
      if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(g.in_plane)) return -1;
      Idx r = static_cast<Idx>(v);
      q[0] = 0;
#pragma unroll
      for (int a = kAxes - 1; a > A0; --a) {
        const Idx next = g.in_div[a].div(r);
        q[a] = r - next * g.in[a];
        r = next;
      }
      q[A0] = r;
#pragma unroll
      for (int a = A0; a < kAxes; ++a)
        if (static_cast<uint64_t>(q[a] - (o[a] * g.s[a] - g.pb[a])) > static_cast<uint64_t>(g.reach[a])) return -1;
    } else if (!decode_index_at<A0>(g, v, nc, o, q)) {
      return -1;
    }
    Idx row = first_row + (q[ra] + g.pb[ra] - first);
    if (row >= rows) row -= rows;
    Idx inner = 0;
    for (int a = ra + 1; a < kAxes; ++a) inner = inner * g.in[a] + q[a];
    return static_cast<int>(row * row_positions + inner);
  }

  // Writes the padded ra rows [from, to) of the plane at in_base: a row the ring holds (below
  // `live_end`) from its slots, which it leaves zero for the rows to come; any other row 0.
  template <class Ring>
  PG_HD void flush(const Ring& ring, Idx in_base, Idx from, Idx to, Idx first, Idx first_row, Idx live_end) const {
    for (Idx u = from; u < to; ++u) {
      const Idx r = u - g.pb[ra];
      if (r < 0 || r >= g.in[ra]) continue;
      T* out = dx + in_base + r * row_positions * g.step;
      if (u < live_end) {
        Idx row = first_row + (u - first);
        if (row >= rows) row -= rows;
        const int base = static_cast<int>(row * row_positions);
        for (Idx j = 0; j < row_positions; ++j) {
          A& slot = ring.at(base + static_cast<int>(j));
          out[j * g.step] = from_accum<T>(slot);
          slot = A(0);
        }
      } else {
        for (Idx j = 0; j < row_positions; ++j) out[j * g.step] = from_accum<T>(A(0));
      }
    }
  }

  template <class Ring>
  PG_HD void scan(Idx plane, const Ring& ring) const {
    Idx nc = plane, in_base, out_base;
    if (g.channels_last) {
      const Idx n = g.groups_div.div(plane);
      const Idx c = plane - n * g.c;
      in_base = n * g.in_plane * g.c + c;
      out_base = n * g.out_plane * g.c + c;
    } else {
      in_base = plane * g.in_plane;
      out_base = plane * g.out_plane;
    }
    const int slots = static_cast<int>(rows * row_positions);
    for (int s = 0; s < slots; ++s) ring.at(s) = A(0);

    const Idx windows = g.out_plane;
    Idx o[kAxes] = {0, 0, 0};
    Idx first = 0, first_row = 0, done = 0;  // window row o[ra]'s first padded row, its ring row; rows written
    int64_t v_now[kOrderedBatch], v_next[kOrderedBatch];
    A grad_now[kOrderedBatch], grad_next[kOrderedBatch];
    const auto fetch = [&](Idx w0, int64_t* v, A* grad) {
#pragma unroll
      for (int j = 0; j < kOrderedBatch; ++j) {
        const Idx w = w0 + j;
        v[j] = -1;
        grad[j] = A(0);
        if (w < windows) {
          const Idx at = out_base + w * g.step;
          load_indices<1>(indices, g.index_type, at, &v[j]);
          grad[j] = static_cast<A>(to_float(dy[at]));
        }
      }
    };
    fetch(0, v_now, grad_now);
    for (Idx w0 = 0; w0 < windows; w0 += kOrderedBatch) {
      fetch(w0 + kOrderedBatch, v_next, grad_next);
#pragma unroll
      for (int j = 0; j < kOrderedBatch; ++j) {
        if (w0 + j >= windows) break;
        const int slot = slot_of(v_now[j], nc, o, first, first_row);
        if (slot >= 0) ring.at(slot) += grad_now[j];
        // The next window; a carry into (or past) the ring axis ends window row o[ra].
        int a = kAxes - 1;
        for (; a > ra; --a) {
          if (++o[a] < g.out[a]) break;
          o[a] = 0;
        }
        if (a == ra) {
          ++o[ra];
          if (o[ra] < g.out[ra]) {
            const Idx next = first + g.s[ra];
            flush(ring, in_base, done, next, first, first_row, first + rows);
            done = next;
            first = next;
            first_row += s_mod_rows;
            if (first_row >= rows) first_row -= rows;
          }
        }
      }
#pragma unroll
      for (int j = 0; j < kOrderedBatch; ++j) {
        v_now[j] = v_next[j];
        grad_now[j] = grad_next[j];
      }
    }
    // Every row from the last window row's first to the plane's end.
    flush(ring, in_base, done, g.in[ra] + g.pb[ra], first, first_row, windows > 0 ? first + rows : first);
  }
};

// A thread's slots on the CPU backend: a local array.
template <class A>
struct OrderedLocalRing {
  A* slot;
  A& at(int s) const { return slot[s]; }
};

template <class Plane>
struct MaxOrderedOnCpu {
  Plane plane;
  template <class Idx>
  void operator()(Idx i) const {
    using A = typename Plane::A;
    alignas(16) A slots[kOrderedRingBytes / sizeof(A)];
    plane.scan(static_cast<decltype(plane.planes)>(i), OrderedLocalRing<A>{slots});
  }
};

template <class Plane>
void run_max_ordered(const CpuExec& ex, const Plane& plane) {
  ex.template for_each<decltype(plane.planes)>(plane.planes, MaxOrderedOnCpu<Plane>{plane});
}

#if PG_GPU_COMPILER

// A thread's slots in shared memory: slot s of thread t at word s * blockDim + t, so that a
// warp's threads, each at its own slot, hit 32 different banks.
template <class A>
struct OrderedSharedRing {
  A* first;
  int stride;
  PG_HD A& at(int s) const { return first[s * stride]; }
};

template <class Plane, class Idx>
__global__ void PG_LAUNCH_BOUNDS(kOrderedThreads, 0) max_ordered_kernel(Plane plane) {
  using A = typename Plane::A;
  extern __shared__ double max_ordered_smem[];
  const Idx i = static_cast<Idx>(blockIdx.x) * kOrderedThreads + static_cast<Idx>(threadIdx.x);
  if (i >= plane.planes) return;
  plane.scan(i, OrderedSharedRing<A>{reinterpret_cast<A*>(max_ordered_smem) + threadIdx.x, kOrderedThreads});
}

template <class Plane>
void run_max_ordered(const GpuExec& ex, const Plane& plane) {
  using Idx = decltype(plane.planes);
  using A = typename Plane::A;
  const int64_t blocks = (static_cast<int64_t>(plane.planes) + kOrderedThreads - 1) / kOrderedThreads;
  const size_t bytes = static_cast<size_t>(plane.rows * plane.row_positions) * sizeof(A) * kOrderedThreads;
#if defined(__CUDACC__)
  PG_HIP_CHECK(cudaFuncSetAttribute(max_ordered_kernel<Plane, Idx>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
#endif
  max_ordered_kernel<Plane, Idx><<<static_cast<unsigned>(blocks), kOrderedThreads, bytes, ex.stream>>>(plane);
  PG_LAUNCH_CHECK("max_ordered_kernel");
}

#endif

struct MaxScatterOrdered : MaxVariant<MaxScatterOrdered> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.ordered", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // Every window, layout, dtype, index format and type whose ring fits a thread's share of 64 KiB
  // (supports()). Sizes for the fuzz: long enough along every axis that the ring wraps, strides
  // past the window leave rows no window reaches, and 3D rings stay within the budget.
  static Domain domain() {
    Domain d;
    d.reach[0] = 3;
    d.reach[1] = 9;
    d.reach[2] = 14;
    return d;
  }

  static Support supports(const Problem& p) {
    if (ordered_ring_bytes(p) > kOrderedRingBytes)
      return Support::no("window: a plane's ring of reach + 1 rows exceeds a thread's 2 KiB of shared memory");
    if (p.n * p.c >= (int64_t{1} << 31)) return Support::no("size: N * C planes must fit int32 (one GPU thread each)");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    if (ordered_ring_bytes(p) > kOrderedRingBytes) throw Error(std::string(traits.name) + ": no ring fits");
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const OrderedRing r = ordered_ring(p);
      MaxOrderedPlane<T, Idx, A0> plane;
      plane.g = make_max_geom<Idx>(p, 1);
      plane.ra = r.axis;
      plane.rows = static_cast<Idx>(r.rows);
      plane.row_positions = static_cast<Idx>(r.row_positions);
      plane.s_mod_rows = static_cast<Idx>(p.stride[r.axis] % r.rows);
      plane.planes = static_cast<Idx>(p.n * p.c);
      plane.plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
      plane.dy = static_cast<const T*>(b.dy);
      plane.indices = b.indices;
      plane.dx = static_cast<T*>(b.dx);
      if (plane.planes > 0) run_max_ordered(ex, plane);
    });
  }
};

}  // namespace pg
