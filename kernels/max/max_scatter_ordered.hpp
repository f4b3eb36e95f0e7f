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
// 1D) window row o reaches the padded rows [o * s, o * s + reach], and once it is done the rows
// below (o + 1) * s are final. A block of 32 planes walks kOrderedBatch windows a step; after a
// step it writes the rows its window rows finished and clears their slots for the rows to come,
// so a ring holds reach + 1 rows plus the stride times the window rows a step can finish.
//
// A block's steps (MaxOrderedBlock::run), each a phase all its threads finish before the next:
//   load   the next step's indices and dy of the block's 32 planes into a staging buffer, read
//          coalesced in both layouts (channels-first: 16 consecutive windows of a plane a half
//          warp; channels-last: 32 consecutive channels of a window), while
//   add    each thread adds the current step's windows of its plane into its ring; then
//   write  the finished rows of the 32 planes, coalesced (channels-first: a plane's rows are one
//          run of dx; channels-last: 32 consecutive channels of a position).
// Slot s of plane t lies at shared word s * stride + t: stride 32 in channels-last (a warp's adds
// and writes each hit 32 banks), 33 in channels-first (its writes walk one plane's slots).
// The phases run on the GPU with a barrier after each, and on the CPU backend with 32 emulated
// threads in phase order (MaxOrderedOnCpu), so the fuzz reaches every step of it in CI.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/model/variant.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_geometry.hpp"

namespace pg {

// Planes (threads) per block: one warp, so that the few planes of a pooling layer (16,384 on
// YOLO's SPP) spread over every multiprocessor instead of filling a few.
inline constexpr int kOrderedThreads = 32;
// Windows a step: each thread has 16 windows' loads in flight while it adds the 16 before.
inline constexpr int kOrderedBatch = 16;
// A block's shared memory: what an AMD workgroup's LDS holds (NVIDIA opts in past 48 KiB).
inline constexpr size_t kOrderedSmemBytes = 64 * 1024;

// A block's staging buffers: two steps of stored indices and dy, by window and plane.
inline size_t ordered_stage_bytes(size_t accum) {
  return 2 * kOrderedBatch * (kOrderedThreads + 1) * (sizeof(int64_t) + accum);
}

// The ring's shape for problem p: its axis, the positions of a row (the plane's positions past
// the axis), the windows of a window row, the window rows a step may end, and the ring's rows:
// the window's reach plus the rows those window rows finish. A step of kOrderedBatch windows ends
// up to ceil(kOrderedBatch / row_windows) window rows; where that many rings' rows would not fit
// a block's shared memory, steps end fewer (down to one: a step then stops at its window row's
// end). ends = 0: not even that fits.
struct OrderedRing {
  int axis = kAxes - 1;
  int64_t row_positions = 1, row_windows = 1, ends = 0, rows = 0;
};

inline OrderedRing ordered_ring(const Problem& p) {
  OrderedRing r;
  for (int a = 0; a < kAxes; ++a)
    if (p.in[a] > 1 || p.out[a] > 1) {
      r.axis = a;
      break;
    }
  for (int a = r.axis + 1; a < kAxes; ++a) {
    r.row_positions *= p.in[a];
    r.row_windows *= p.out[a];
  }
  const int64_t reach_rows = p.dilation[r.axis] * (p.kernel[r.axis] - 1) + 1, s = p.stride[r.axis];
  const int64_t accum = p.dtype == DType::f64 ? 8 : 4;
  const int64_t stride = p.layout == Layout::channels_last ? kOrderedThreads : kOrderedThreads + 1;
  const int64_t room = static_cast<int64_t>(kOrderedSmemBytes - ordered_stage_bytes(accum));
  const int64_t ring_rows = room / (r.row_positions * stride * accum);  // rows of 32 rings that fit
  if (ring_rows < reach_rows + s) return r;
  const int64_t most = (kOrderedBatch + std::max<int64_t>(r.row_windows, 1) - 1) / std::max<int64_t>(r.row_windows, 1);
  r.ends = std::min(most, (ring_rows - reach_rows) / s);
  r.rows = reach_rows + r.ends * s;
  return r;
}

// A block's shared memory for p: the rings at their word stride and the staging buffers;
// SIZE_MAX when no ring fits.
inline size_t ordered_block_bytes(const Problem& p) {
  const OrderedRing r = ordered_ring(p);
  if (r.ends == 0) return SIZE_MAX;
  const size_t accum = p.dtype == DType::f64 ? 8 : 4;
  const size_t stride = p.layout == Layout::channels_last ? kOrderedThreads : kOrderedThreads + 1;
  return static_cast<size_t>(r.rows * r.row_positions) * stride * accum + ordered_stage_bytes(accum);
}

// One block's 32 planes. Every thread (and the CPU backend's one driver) keeps the same walk:
// where the windows are, which rows are written; only the rings and the planes differ.
template <class T, class Idx, int A0, int kRa>
struct MaxOrderedBlock {
  using A = accum_t<T>;
  static constexpr int P = kOrderedThreads, B = kOrderedBatch, kStage = kOrderedThreads + 1;
  MaxGeom<Idx> g;
  // The ring axis, a template argument: with it known, every array of coordinates stays in
  // registers (a runtime axis put them in local memory).
  static constexpr int ra = kRa;
  Idx rows;           // ring rows
  Idx row_positions;  // input positions of a ring row
  Idx row_windows;    // windows of a window row
  Idx ends;           // window rows a step may end
  Idx s_mod_rows;     // the stride along ra, modulo rows
  Idx planes;         // N * C
  Divider<int32_t> by_row;  // row_positions
  int stride;         // shared words between a slot's planes: 32 or 33
  bool plain;         // plane-format indices and no dilation: slot_of's short path
  const T* dy;
  const void* indices;
  T* dx;

  // Shared memory of a block.
  struct Frame {
    A* ring;         // [slot][stride]
    int64_t* named;  // [2][B][kStage]: a step's stored indices, by window and plane
    A* grad;         // [2][B][kStage]: their dy
    Idx plane0;      // the block's first plane
  };

  PG_HD Frame frame(Idx block, unsigned char* smem) const {
    Frame f;
    f.named = reinterpret_cast<int64_t*>(smem);
    f.grad = reinterpret_cast<A*>(f.named + 2 * B * kStage);
    f.ring = f.grad + 2 * B * kStage;
    f.plane0 = block * P;
    return f;
  }

  // Where the walk is: the next window, its coordinates, the first padded ra row of its window
  // row and that row's ring row; the first row not yet written and its ring row.
  struct Walk {
    Idx w, in_row;  // in_row: the window's place in its window row
    Idx o[kAxes];
    Idx first, first_row;
    Idx done, done_row;
  };

  // One window on: a carry into the ring axis starts the next window row.
  PG_HD void advance(Walk& k) const {
    ++k.w;
    if (++k.in_row == row_windows) k.in_row = 0;
#pragma unroll
    for (int a = kAxes - 1; a > ra; --a) {
      if (++k.o[a] < g.out[a]) return;
      k.o[a] = 0;
    }
    ++k.o[ra];
    k.first += g.s[ra];
    k.first_row += s_mod_rows;
    if (k.first_row >= rows) k.first_row -= rows;
  }

  // The ring slot that index v of window o names; -1 when it names none of the window's taps.
  PG_HD int slot_of(int64_t v, Idx nc, const Walk& k) const {
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
        if (static_cast<uint64_t>(q[a] - (k.o[a] * g.s[a] - g.pb[a])) > static_cast<uint64_t>(g.reach[a])) return -1;
    } else if (!decode_index_at<A0>(g, v, nc, k.o, q)) {
      return -1;
    }
    Idx row = k.first_row + (q[ra] + g.pb[ra] - k.first);
    if (row >= rows) row -= rows;
    Idx inner = 0;
#pragma unroll
    for (int a = ra + 1; a < kAxes; ++a) inner = inner * g.in[a] + q[a];
    return static_cast<int>(row * row_positions + inner);
  }

  // Offsets of plane nc's origin in dy/indices and in dx.
  PG_HD void bases(Idx nc, Idx* out_base, Idx* in_base) const {
    if (g.channels_last) {
      const Idx n = g.groups_div.div(nc);
      const Idx c = nc - n * g.c;
      *out_base = n * g.out_plane * g.c + c;
      *in_base = n * g.in_plane * g.c + c;
    } else {
      *out_base = nc * g.out_plane;
      *in_base = nc * g.in_plane;
    }
  }

  // Thread t's share of the stored indices and dy of windows [w, w + n) of the block's planes:
  // channels-first, element e = t + 32 i is window e % B of plane e / B (a half warp reads 16
  // consecutive windows of a plane); channels-last, window i of plane t.
  PG_HD void load(const Frame& f, int t, Idx w, int n, int64_t (&v)[B], A (&grad)[B]) const {
#pragma unroll
    for (int i = 0; i < B; ++i) {
      int p = t, j = i;
      if (!g.channels_last) {
        const int e = t + P * i;
        p = e / B;
        j = e % B;
      }
      v[i] = -1;
      grad[i] = A(0);
      const Idx nc = f.plane0 + p;
      if (j < n && nc < planes) {
        Idx out_base, in_base;
        bases(nc, &out_base, &in_base);
        const Idx at = out_base + (w + j) * g.step;
        load_indices<1>(indices, g.index_type, at, &v[i]);
        grad[i] = static_cast<A>(to_float(dy[at]));
      }
    }
  }

  PG_HD void stage(const Frame& f, int t, int buf, const int64_t (&v)[B], const A (&grad)[B]) const {
#pragma unroll
    for (int i = 0; i < B; ++i) {
      int p = t, j = i;
      if (!g.channels_last) {
        const int e = t + P * i;
        p = e / B;
        j = e % B;
      }
      f.named[(buf * B + j) * kStage + p] = v[i];
      f.grad[(buf * B + j) * kStage + p] = grad[i];
    }
  }

  // Thread t adds the n staged windows of its plane into its ring, from walk k on: first every
  // window's slot (independent decodes, which overlap), then the adds in window order, a run of
  // windows naming one slot summed in a register (the same adds in the same order).
  PG_HD void add(const Frame& f, int t, int buf, int n, Walk k) const {
    const Idx nc = f.plane0 + t;
    int slot[B];
    A grad[B];
#pragma unroll
    for (int j = 0; j < B; ++j) {
      slot[j] = -1;
      grad[j] = f.grad[(buf * B + j) * kStage + t];
      if (j < n) {
        slot[j] = slot_of(f.named[(buf * B + j) * kStage + t], nc, k);
        advance(k);
      }
    }
    int at = -1;
    A acc = A(0);
#pragma unroll
    for (int j = 0; j < B; ++j) {
      if (slot[j] < 0) continue;
      if (slot[j] != at) {
        if (at >= 0) f.ring[at * stride + t] = acc;
        at = slot[j];
        acc = f.ring[at * stride + t];
      }
      acc += grad[j];
    }
    if (at >= 0) f.ring[at * stride + t] = acc;
  }

  // Thread t's share of writing the padded ra rows [k.done, to) of the block's planes, each from
  // its ring slots, which it clears; a row past the ring's reach (no window names it) is 0.
  PG_HD void write(const Frame& f, int t, const Walk& k, Idx to) const {
    const Idx count = to - k.done;
    if (count <= 0) return;
    const auto row_of = [&](Idx rr) {
      Idx row = k.done_row + rr;
      return row >= rows ? row - rows : row;
    };
    const auto value = [&](Idx rr, Idx j, int p) {
      if (rr >= rows) return A(0);
      A& slot = f.ring[static_cast<int>(row_of(rr) * row_positions + j) * stride + p];
      const A v = slot;
      slot = A(0);
      return v;
    };
    // The rows inside the tensor: [lo, hi) of [0, count).
    Idx lo = g.pb[ra] - k.done, hi = g.pb[ra] + g.in[ra] - k.done;
    if (lo < 0) lo = 0;
    if (hi > count) hi = count;
    if (g.channels_last) {
      const Idx nc = f.plane0 + t;
      if (nc >= planes) return;
      Idx out_base, in_base;
      bases(nc, &out_base, &in_base);
      for (Idx rr = lo; rr < hi; ++rr) {
        T* row = dx + in_base + (k.done + rr - g.pb[ra]) * row_positions * g.step;
        for (Idx j = 0; j < row_positions; ++j) row[j * g.step] = from_accum<T>(value(rr, j, t));
      }
      return;
    }
    // Channels-first: a plane's rows [lo, hi) are one run of dx, written by all 32 threads.
    const int run = static_cast<int>((hi - lo) * row_positions);
    for (int p = 0; p < P; ++p) {
      const Idx nc = f.plane0 + p;
      if (nc >= planes) break;
      T* out = dx + nc * g.in_plane + (k.done + lo - g.pb[ra]) * row_positions;
      for (int e = t; e < run; e += P) {
        const int rr = by_row.div(e);
        out[e] = from_accum<T>(value(lo + rr, e - rr * static_cast<int>(row_positions), p));
      }
    }
  }

  // The written rows move up to `to`.
  PG_HD void wrote(Walk& k, Idx to) const {
    for (; k.done < to; ++k.done)
      if (++k.done_row == rows) k.done_row = 0;
  }

  // The whole walk of one block. phase(fn) runs fn(t) for every thread t and returns once all
  // have: on the GPU each thread calls it with its own t and a barrier follows.
  template <class Phase>
  PG_HD void run(const Frame& f, Phase&& phase) const {
    const int slots = static_cast<int>(rows * row_positions);
    phase([&](int t) {
      for (int s = 0; s < slots; ++s) f.ring[s * stride + t] = A(0);
    });
    Walk k{};
    const Idx windows = g.out_plane;
    // The windows of the step from window w (at in_row in its window row): B, fewer at the end
    // of the plane or where the step would end more than `ends` window rows.
    const auto step = [&](Idx w, Idx in_row) {
      Idx n = windows - w;
      const Idx to_ends = row_windows - in_row + (ends - 1) * row_windows;
      if (n > to_ends) n = to_ends;
      return n < B ? static_cast<int>(n) : B;
    };
    int n = step(0, 0);
    phase([&](int t) {
      int64_t v[B];
      A grad[B];
      load(f, t, 0, n, v, grad);
      stage(f, t, 0, v, grad);
    });
    int buf = 0;
    while (n > 0) {
      const Idx w_next = k.w + n;
      Idx in_row_next = k.in_row + n;
      while (in_row_next >= row_windows) in_row_next -= row_windows;
      const int n_next = step(w_next, in_row_next);
      phase([&](int t) {
        int64_t v[B];
        A grad[B];
        if (n_next > 0) load(f, t, w_next, n_next, v, grad);
        add(f, t, buf, n, k);
        if (n_next > 0) stage(f, t, buf ^ 1, v, grad);
      });
      for (int j = 0; j < n; ++j) advance(k);
      // The rows below the current window row's first are final, and at the end every row.
      const Idx to = n_next > 0 ? k.first : g.pb[ra] + g.in[ra];
      if (to > k.done) {
        phase([&](int t) { write(f, t, k, to); });
        wrote(k, to);
      }
      buf ^= 1;
      n = n_next;
    }
    if (windows == 0) phase([&](int t) { write(f, t, k, g.pb[ra] + g.in[ra]); });
  }
};

template <class Block>
struct MaxOrderedOnCpu {
  Block block;
  template <class Idx>
  void operator()(Idx i) const {
    alignas(16) unsigned char smem[kOrderedSmemBytes];
    const auto f = block.frame(static_cast<decltype(block.planes)>(i), smem);
    block.run(f, [&](auto&& fn) {
      for (int t = 0; t < kOrderedThreads; ++t) fn(t);
    });
  }
};

template <class Block>
void run_max_ordered(const CpuExec& ex, const Block& block, size_t) {
  using Idx = decltype(block.planes);
  const int64_t blocks = (static_cast<int64_t>(block.planes) + kOrderedThreads - 1) / kOrderedThreads;
  ex.template for_each<Idx>(blocks, MaxOrderedOnCpu<Block>{block});
}

#if PG_GPU_COMPILER

template <class Block, class Idx>
__global__ void PG_LAUNCH_BOUNDS(kOrderedThreads, 0) max_ordered_kernel(Block block) {
  extern __shared__ double max_ordered_smem[];
  const int t = threadIdx.x;
  const auto f = block.frame(static_cast<Idx>(blockIdx.x), reinterpret_cast<unsigned char*>(max_ordered_smem));
  block.run(f, [&](auto&& fn) {
    fn(t);
    __syncthreads();
  });
}

template <class Block>
void run_max_ordered(const GpuExec& ex, const Block& block, size_t bytes) {
  using Idx = decltype(block.planes);
  const int64_t blocks = (static_cast<int64_t>(block.planes) + kOrderedThreads - 1) / kOrderedThreads;
#if defined(__CUDACC__)
  // Always the budget, never this launch's bytes: cases launched at once from several host
  // threads would otherwise lower the limit under each other's launches (invalid argument).
  PG_HIP_CHECK(cudaFuncSetAttribute(max_ordered_kernel<Block, Idx>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(kOrderedSmemBytes)));
#endif
  max_ordered_kernel<Block, Idx><<<static_cast<unsigned>(blocks), kOrderedThreads, bytes, ex.stream>>>(block);
  PG_LAUNCH_CHECK("max_ordered_kernel");
}

#endif

struct MaxScatterOrdered : MaxVariant<MaxScatterOrdered> {
  static constexpr PoolTraits traits{
      .name = "max.scatter.ordered", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  // 1D and 2D: every window, layout, dtype, index format and type whose block (32 rings and the
  // staging buffers) fits 64 KiB of shared memory (supports()). 3D rings would hold whole D
  // slices: 36 KB a plane on I3D's 28x28, which the gathers take instead. Sizes for the fuzz:
  // long enough that rings wrap and steps end window rows mid-step.
  static Domain domain() {
    Domain d;
    d.max_dims = 2;
    d.reach[1] = 9;
    d.reach[2] = 14;
    return d;
  }

  static Support supports(const Problem& p) {
    if (p.dims == 3) return Support::no("dims: 3D (32 planes' rings of whole D slices do not fit shared memory)");
    if (ordered_block_bytes(p) > kOrderedSmemBytes)
      return Support::no("window: 32 planes' rings of the window's reach and stride exceed 64 KiB of shared memory");
    if (p.n * p.c >= (int64_t{1} << 31)) return Support::no("size: N * C planes must fit int32 (one GPU thread each)");
    return Support::yes();
  }

  template <class Exec>
  static void launch_with(const Exec& ex, const Problem& p, const BwdBuffers& b, IndexWidth width) {
    const size_t bytes = ordered_block_bytes(p);
    if (p.dims == 3 || bytes > kOrderedSmemBytes) throw Error(std::string(traits.name) + ": no ring fits");
    dispatch_max<false>(p, width, {b.dy, b.indices, b.dx}, [&]<class T, class Idx, int A0, int V>() {
      const OrderedRing r = ordered_ring(p);
      with_bit(r.axis == 2, [&]<int kW>() {
        MaxOrderedBlock<T, Idx, A0, kW ? 2 : 1> block;
        block.g = make_max_geom<Idx>(p, 1);
        block.rows = static_cast<Idx>(r.rows);
        block.row_positions = static_cast<Idx>(r.row_positions);
        block.row_windows = static_cast<Idx>(r.row_windows);
        block.ends = static_cast<Idx>(r.ends);
        block.s_mod_rows = static_cast<Idx>(p.stride[r.axis] % r.rows);
        block.planes = static_cast<Idx>(p.n * p.c);
        block.by_row = Divider<int32_t>(r.row_positions);
        block.stride = p.layout == Layout::channels_last ? kOrderedThreads : kOrderedThreads + 1;
        block.plain = p.index_format == IndexFormat::plane && p.dilation[0] == 1 && p.dilation[1] == 1 && p.dilation[2] == 1;
        block.dy = static_cast<const T*>(b.dy);
        block.indices = b.indices;
        block.dx = static_cast<T*>(b.dx);
        if (block.planes > 0) run_max_ordered(ex, block, bytes);
      });
    });
  }
};

}  // namespace pg
