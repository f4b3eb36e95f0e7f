// The block-streaming gather shared by avg.gather.stream and max.gather.stream: stride-1,
// kernel-3 windows on H and W (3 or 1 along D), no dilation, channels-first.
//
// With stride 1 every dy value is read by up to 27 dx elements. A per-element gather fetches it
// that many times through L1/L2, and the per-thread streaming of avg.gather's box path still
// re-reads window rows and planes from L2 (measured L2-bound on the 3D k3s1p1 rows). Here a
// block owns a tile of up to 32 x 32 dx positions of one (n, c) plane and walks down D: per
// window plane it stages the (TH + 2) x (TW + 2) windows covering the tile into shared memory,
// once, and every thread then reads its 3 x (RY + 2) windows from there. Each window plane
// contributes to the dx planes its taps reach (od - pad + 0, 1, 2 along D), which slide through
// a per-thread ring in registers; a dx plane is stored as soon as its last window plane has
// been added. DRAM sees each dy (and stored index) once plus a 1-2 element halo per tile edge.
//
// Window plane od + 2 is fetched into registers before the block works on plane od, and
// finished into shared memory (double-buffered) after it: the loads have a whole step to
// arrive, and there is one barrier per plane.
//
// A Body says what a window is (Raw as loaded, Slot as staged), how to load and finish it, how
// a thread turns its staged windows into contributions, and how dx is written. The CPU backend
// runs the same steps with emulated threads (phase by phase), so the tiling, the ring and the
// staging order are tested without a GPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/model/problem.hpp"
#include "kernels/common/divider.hpp"
#include "kernels/common/exec.hpp"

namespace pg {

inline constexpr int kStreamCols = 32;       // dx columns per tile at most
inline constexpr int kStreamThreadRows = 8;  // thread rows per block at most
inline constexpr int kStreamRowsPerThread = 4;  // dx rows per thread, sharing 2 of 3 window rows
inline constexpr int kStreamTileRows = kStreamThreadRows * kStreamRowsPerThread;
inline constexpr int kStreamSlots = (kStreamTileRows + 2) * (kStreamCols + 2);  // staged windows per plane at most
inline constexpr int kStreamThreads = kStreamCols * kStreamThreadRows;          // threads per block at most
// Staged windows one thread stages per plane at most: a block has at least staged / this many
// threads (make_stream_geom), so the fetched plane fits a fixed register array.
inline constexpr int kStreamSlotsPerThread = (kStreamSlots + kStreamThreads - 1) / kStreamThreads;
// Gathering threads up to which a 3D walk fits its block to the tile (StreamGeom::fixed_pitch).
inline constexpr int kStreamFitThreads = 160;
// The fixed layouts' staging pitches (compile-time): tiles up to 28 columns, and up to 32.
inline constexpr int kStreamNarrowPitch = 30;
inline constexpr int kStreamPitch = kStreamCols + 2;
// Staged windows a thread of a layout stages per plane at most: kPitch 0 is the fitted block.
constexpr int stream_slots_per_thread(int kPitch) {
  return kPitch == 0 ? kStreamSlotsPerThread : ((kStreamTileRows + 2) * kPitch + kStreamThreads - 1) / kStreamThreads;
}

// True when p has the window shape the stream computes: per axis H, W kernel 3, stride 1, no
// dilation, padding 0 or 1 each side; D the same, or kernel 1 without padding (2D and 1D-free
// planes). `why` says which parameter rules it out.
inline bool stream_applies(const Problem& p, std::string* why) {
  if (p.layout != Layout::channels_first) {
    *why = "layout: channels-first only (tiles are W-contiguous)";
    return false;
  }
  for (int a = 0; a < kAxes; ++a) {
    const bool flat = a == 0 && p.kernel[0] == 1 && p.stride[0] == 1 && p.pad_begin[0] == 0 && p.pad_end[0] == 0;
    const bool box = p.kernel[a] == 3 && p.stride[a] == 1 && p.dilation[a] == 1 && p.pad_begin[a] <= 1 &&
                     p.pad_end[a] <= 1;
    if (!box && !flat) {
      *why = a == 0 ? "window: needs kernel 3, stride 1, dilation 1, padding <= 1 on every axis (or kernel 1, "
                      "no padding along D)"
                    : "window: needs kernel 3, stride 1, dilation 1, padding <= 1 on H and W";
      return false;
    }
  }
  return true;
}

// Problem geometry in the launch's index type, and how blocks split it.
template <class Idx>
struct StreamGeom {
  Idx in[kAxes], out[kAxes], pb[kAxes];
  Idx in_plane, out_plane;  // elements per (n, c) plane
  Idx chunk;                // dx planes per block along D
  int tile_h, tile_w;       // dx rows / columns per tile (<= 32 each)
  int thread_rows;          // threads along H: tile_h / RY rounded up
  int pitch;                // staged windows per row: tile_w + 2
  int staged;               // staged windows per plane: (thread_rows * RY + 2) rows of pitch
  int threads;              // per block: tile_w * thread_rows gather, all stage; a multiple of 32
  // 0: the block fitted to the tile (threads, pitch and staged as above). Else a fixed layout:
  // 256 threads over a compile-time staging pitch of this many windows, whose constant offsets
  // the gathers of large 3D tiles run faster on: kStreamNarrowPitch for tiles up to 28 columns
  // (its first tile_w * thread_rows threads gather), kStreamPitch up to 32 (a lane per column,
  // a warp per thread row).
  int fixed_pitch;
  Divider<int32_t> by_tile_w, by_pitch;
  Divider<Idx> tiles_w, tiles_h, chunks;

  PG_HD Idx out_offset(Idx outer, Idx od, Idx oh, Idx ow) const {
    return ((outer * out[0] + od) * out[1] + oh) * out[2] + ow;
  }
  PG_HD Idx in_offset(Idx outer, Idx z, Idx h, Idx w) const { return ((outer * in[0] + z) * in[1] + h) * in[2] + w; }
};

// Tiles no wider than 32 and no taller than 32, split evenly (W = 56 is two tiles of 28, not
// 32 + 24); D is cut into chunks only when the tiles alone would leave the GPU short of blocks
// (each chunk re-stages the KD - 1 window planes before it).
// A block fitted to its tile has as many threads as the tile has columns times thread rows,
// rounded up to whole warps: an 18 x 18 tile runs 3 warps, not 8 of which 5 would gather nothing
// (H100, 2026-12-05, bench/results/2026-12-05_h100_stream_fit.md: 3D tiles of 36-40 columns
// 1.52-1.78x, 2D rows 1.15x for max and 1.86x for avg). 3D walks of more gathering threads than
// kStreamFitThreads keep a fixed layout: fitted, a 28 x 28 tile and a 32 x 32 one ran 0.90x
// (fewer warps, and runtime pitch and slot arithmetic on every plane). Their pitch is the
// narrower of the two fixed ones that holds the tile: a 28-column tile stages 30 x 30 windows,
// not 34 x 34 (a fifth fewer slots a thread), and its 7 x 28 gathering threads leave the
// block's last warp only staging.
template <class Idx>
StreamGeom<Idx> make_stream_geom(const Problem& p, int64_t* blocks) {
  StreamGeom<Idx> g;
  for (int a = 0; a < kAxes; ++a) {
    g.in[a] = static_cast<Idx>(p.in[a]);
    g.out[a] = static_cast<Idx>(p.out[a]);
    g.pb[a] = static_cast<Idx>(p.pad_begin[a]);
  }
  g.in_plane = static_cast<Idx>(p.in_plane());
  g.out_plane = static_cast<Idx>(p.out_plane());
  const int64_t tw = (p.in[2] + kStreamCols - 1) / kStreamCols, th = (p.in[1] + kStreamTileRows - 1) / kStreamTileRows;
  g.tile_w = static_cast<int>((p.in[2] + tw - 1) / tw);
  g.tile_h = static_cast<int>((p.in[1] + th - 1) / th);
  g.thread_rows = (g.tile_h + kStreamRowsPerThread - 1) / kStreamRowsPerThread;
  const bool fit = p.kernel[0] == 1 || g.tile_w * g.thread_rows <= kStreamFitThreads;
  g.fixed_pitch = fit ? 0 : g.tile_w + 2 <= kStreamNarrowPitch ? kStreamNarrowPitch : kStreamPitch;
  g.pitch = fit ? g.tile_w + 2 : g.fixed_pitch;
  // The wide fixed layout's eight warps all gather, whatever the tile's height: all 34 rows.
  g.staged = g.fixed_pitch == kStreamPitch ? kStreamSlots : (g.thread_rows * kStreamRowsPerThread + 2) * g.pitch;
  if (fit) {
    const int threads = std::max(g.tile_w * g.thread_rows, (g.staged + kStreamSlotsPerThread - 1) / kStreamSlotsPerThread);
    g.threads = (threads + 31) / 32 * 32;
  } else {
    g.threads = kStreamThreads;
  }
  g.by_tile_w = Divider<int32_t>(g.tile_w);
  g.by_pitch = Divider<int32_t>(g.pitch);
  constexpr int64_t kWantBlocks = 1024;
  const int64_t per_chunk = p.n * p.c * tw * th;
  const int64_t chunks = std::min<int64_t>(p.in[0], std::max<int64_t>(1, (kWantBlocks + per_chunk - 1) / std::max<int64_t>(per_chunk, 1)));
  const int64_t chunk = (p.in[0] + chunks - 1) / chunks;
  const int64_t used = (p.in[0] + chunk - 1) / chunk;
  g.chunk = static_cast<Idx>(chunk);
  g.tiles_w = Divider<Idx>(static_cast<Idx>(tw));
  g.tiles_h = Divider<Idx>(static_cast<Idx>(th));
  g.chunks = Divider<Idx>(static_cast<Idx>(used));
  *blocks = per_chunk * used;
  return g;
}

// Where a staged window lies: the same for every window plane of a block.
template <class Idx>
struct StreamSlot {
  Idx oh, ow;     // window coordinates in the output plane
  Idx at;         // oh * out W + ow
  bool inside;    // a real window (else staged empty)
};

// One block's walk; each thread holds one Walker. KD: window extent along D (3, or 1 for the
// flat D axis). kPitch: the fixed layout's staging pitch, or 0 for the block fitted to the tile. `Body` provides:
//   using Raw, Slot, Acc, Pre;   a window as loaded, as staged; accumulator; per-slot constants
//   Pre prepare(const StreamSlot&) const;                       once per block and slot
//   Raw load(Idx outer, Idx od, const StreamSlot&) const;       loads only: no use of the values
//   Slot finish(const Raw&, Idx outer, Idx od, const StreamSlot&, const Pre&) const;
//   Slot empty() const;                                         a window that contributes nothing
//   template <int KD, int RY> void gather(const Slot* s, int pitch, Acc (&ring)[KD][RY]) const;
//       s points at the thread's first window (rows `pitch` apart); ring[t][k] += the
//       contributions of this window plane to dx plane od - pad + t, row k of the thread
//   void store(Idx at, Acc v) const;                            dx[at] = v
template <class Body, class Idx, int KD, int kPitch>
struct StreamWalker {
  using Raw = typename Body::Raw;
  using Slot = typename Body::Slot;
  using Acc = typename Body::Acc;
  using Pre = typename Body::Pre;
  static constexpr int RY = kStreamRowsPerThread;
  static constexpr int kSlots = stream_slots_per_thread(kPitch);

  Idx outer, h0, w0, z_begin, z_end, od_first, od_last;
  int tx, ty, tid;
  bool gathers;  // the thread owns dx rows of the tile (the others only stage)
  // Per slot only its offset in the output plane (-1: not a real window) and the body's
  // constants are kept; the rest of a StreamSlot is recomputed when needed (registers).
  Idx at[kSlots];
  Pre pre[kSlots];
  Raw raw[kSlots];  // the fetched window plane
  Idx fetched;                     // which one
  Acc ring[KD][RY];

  // The layout's sizes: compile-time constants in the fixed ones.
  PG_HD static int pitch(const StreamGeom<Idx>& g) {
    if constexpr (kPitch == 0) return g.pitch;
    else return kPitch;
  }
  PG_HD static int threads(const StreamGeom<Idx>& g) {
    if constexpr (kPitch == 0) return g.threads;
    else return kStreamThreads;
  }
  PG_HD static int staged(const StreamGeom<Idx>& g) {
    if constexpr (kPitch == kStreamPitch) return kStreamSlots;
    else return g.staged;
  }

  PG_HD void begin(const Body& body, const StreamGeom<Idx>& g, Idx block, int tid_) {
    tid = tid_;
    if constexpr (kPitch == kStreamPitch) {
      // A lane per tile column, a warp per thread row, every warp gathering: compile-time. Mapped
      // by the tile's width like the others, this layout spilled 24 bytes, not 8, and its rows
      // ran 0.88-0.89x (H100, 2026-12-05).
      ty = tid / kStreamCols;
      tx = tid - ty * kStreamCols;
      gathers = true;
    } else {
      ty = g.by_tile_w.div(tid);
      tx = tid - ty * g.tile_w;
      gathers = ty < g.thread_rows;
    }
    const Idx tile_w = g.tiles_w.mod(block);
    Idx rest = g.tiles_w.div(block);
    const Idx tile_h = g.tiles_h.mod(rest);
    rest = g.tiles_h.div(rest);
    const Idx chunk = g.chunks.mod(rest);
    outer = g.chunks.div(rest);
    w0 = tile_w * g.tile_w;
    h0 = tile_h * g.tile_h;
    z_begin = chunk * g.chunk;
    z_end = z_begin + g.chunk < g.in[0] ? z_begin + g.chunk : g.in[0];
    // Window planes that reach dx planes [z_begin, z_end); those outside [0, out D) are empty.
    od_first = z_begin + g.pb[0] - (KD - 1);
    od_last = z_end - 1 + g.pb[0];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      at[s] = Idx{-1};
      StreamSlot<Idx> q = slot(g, s);
      const int j = tid + s * threads(g);
      const int r = row_of(g, j), c = j - r * pitch(g);
      // Rows past the tile's last window row (up to a whole thread row) and columns past its
      // last window column (the fixed layouts') are staged empty.
      q.inside = j < staged(g) && r < g.tile_h + 2 && c < g.tile_w + 2 && q.oh >= 0 && q.oh < g.out[1] && q.ow >= 0 &&
                 q.ow < g.out[2];
      q.at = q.inside ? q.oh * g.out[2] + q.ow : Idx{0};
      at[s] = q.inside ? q.at : Idx{-1};
      pre[s] = body.prepare(q);
    }
#pragma unroll
    for (int t = 0; t < KD; ++t)
#pragma unroll
      for (int k = 0; k < RY; ++k) ring[t][k] = Acc(0);
  }

  PG_HD static int row_of(const StreamGeom<Idx>& g, int j) {
    if constexpr (kPitch == 0) return g.by_pitch.div(j);
    else return j / kPitch;
  }

  // Slot s of this thread: staged window j = tid + s * threads, row j / pitch, column j % pitch.
  PG_HD StreamSlot<Idx> slot(const StreamGeom<Idx>& g, int s) const {
    const int j = tid + s * threads(g);
    const int r = row_of(g, j), c = j - r * pitch(g);
    StreamSlot<Idx> q;
    q.oh = h0 + g.pb[1] - 2 + r;
    q.ow = w0 + g.pb[2] - 2 + c;
    q.at = at[s] >= 0 ? at[s] : Idx{0};
    q.inside = at[s] >= 0;
    return q;
  }

  // Loads window plane od into registers; nothing waits for them until finish(). Planes past
  // the block's last are not loaded (they would never be staged).
  PG_HD void fetch(const Body& body, const StreamGeom<Idx>& g, Idx od) {
    fetched = od;
    if (od < 0 || od >= g.out[0] || od > od_last) return;
#pragma unroll
    for (int s = 0; s < kSlots; ++s)
      if (at[s] >= 0) raw[s] = body.load(outer, od, slot(g, s));
  }

  // Stages the fetched plane into buf (every slot this thread owns).
  PG_HD void finish(const Body& body, const StreamGeom<Idx>& g, Slot* buf) const {
    const Idx od = fetched;
    const bool plane_inside = od >= 0 && od < g.out[0];
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      const int j = tid + s * threads(g);
      if (j < staged(g))
        buf[j] = plane_inside && at[s] >= 0 ? body.finish(raw[s], outer, od, slot(g, s), pre[s]) : body.empty();
    }
  }

  // Before the walk: stages plane od_first into buf0 and puts plane od_first + 1 in flight.
  PG_HD void prologue(const Body& body, const StreamGeom<Idx>& g, Slot* buf0) {
    fetch(body, g, od_first);
    finish(body, g, buf0);
    fetch(body, g, od_first + 1);
  }

  // After step(od): stages plane od + 1 into next (the buffer step(od) did not read) and puts
  // plane od + 2 in flight.
  PG_HD void advance(const Body& body, const StreamGeom<Idx>& g, Idx od, Slot* next) {
    finish(body, g, next);
    fetch(body, g, od + 2);
  }

  // Adds window plane od (staged in buf) to the ring, stores the dx plane it completes (od -
  // pad along D), and slides the ring.
  PG_HD void step(const Body& body, const StreamGeom<Idx>& g, Idx od, const Slot* buf) {
    if (!gathers) return;
    body.template gather<KD, RY>(buf + ty * RY * pitch(g) + tx, pitch(g), ring);
    const Idx z = od - g.pb[0];
    if (z >= z_begin && z < z_end && tx < g.tile_w) {
#pragma unroll
      for (int k = 0; k < RY; ++k) {
        const int ly = ty * RY + k;
        if (ly < g.tile_h && h0 + ly < g.in[1] && w0 + tx < g.in[2])
          body.store(g.in_offset(outer, z, h0 + ly, w0 + tx), ring[0][k]);
      }
    }
#pragma unroll
    for (int t = 0; t + 1 < KD; ++t)
#pragma unroll
      for (int k = 0; k < RY; ++k) ring[t][k] = ring[t + 1][k];
#pragma unroll
    for (int k = 0; k < RY; ++k) ring[KD - 1][k] = Acc(0);
  }
};

// The CPU backend: one work item per block, its 256 threads emulated phase by phase.
template <class Body, class Idx, int KD, int kPitch>
struct StreamOnCpu {
  Body body;
  StreamGeom<Idx> g;

  void operator()(Idx block) const {
    using Walker = StreamWalker<Body, Idx, KD, kPitch>;
    std::vector<typename Body::Slot> buf(2 * kStreamSlots);
    std::vector<Walker> threads(Walker::threads(g));
    for (int tid = 0; tid < Walker::threads(g); ++tid) threads[tid].begin(body, g, block, tid);
    const Walker& w0 = threads[0];
    for (auto& t : threads) t.prologue(body, g, buf.data());
    for (Idx od = w0.od_first; od <= w0.od_last; ++od) {
      const bool odd = ((od - w0.od_first) & 1) != 0;
      typename Body::Slot* cur = buf.data() + (odd ? kStreamSlots : 0);
      typename Body::Slot* next = buf.data() + (odd ? 0 : kStreamSlots);
      for (auto& t : threads) t.step(body, g, od, cur);
      if (od < w0.od_last)
        for (auto& t : threads) t.advance(body, g, od, next);
    }
  }
};

#if PG_GPU_COMPILER

// Fitted blocks with 32-bit index arithmetic: four to a multiprocessor, 64 registers, no spills.
// Left free, nvcc gave the fitted 3D max body 80 (its runtime pitch and thread count). The fixed
// layout, and the 64-bit bodies (which would spill hundreds of bytes under the cap), keep the
// thread bound only.
template <class Body, class Idx, int KD, int kPitch>
__global__ void PG_LAUNCH_BOUNDS(kStreamThreads, sizeof(Idx) == 4 ? 4 : 0) plane_stream_kernel(Body body, StreamGeom<Idx> g, Idx blocks) {
  __shared__ typename Body::Slot buf[2][kStreamSlots];
  for (Idx block = blockIdx.x; block < blocks; block += gridDim.x) {
    StreamWalker<Body, Idx, KD, kPitch> w;
    w.begin(body, g, block, threadIdx.x);
    w.prologue(body, g, buf[0]);
    __syncthreads();
    for (Idx od = w.od_first; od <= w.od_last; ++od) {
      const int cur = static_cast<int>((od - w.od_first) & 1);
      w.step(body, g, od, buf[cur]);
      // buf[1 - cur] was last read in the step before the previous barrier.
      if (od < w.od_last) w.advance(body, g, od, buf[1 - cur]);
      __syncthreads();
    }
    // The next block's prologue writes buf[0] again (no reads of it after this barrier).
  }
}

#endif

// Runs body over p on the executor's backend.
template <class Idx, int KD, class Body>
void launch_plane_stream(const CpuExec& ex, const Problem& p, const Body& body) {
  int64_t blocks;
  const StreamGeom<Idx> g = make_stream_geom<Idx>(p, &blocks);
  switch (g.fixed_pitch) {
    case 0: ex.template for_each<Idx>(blocks, StreamOnCpu<Body, Idx, KD, 0>{body, g}); return;
    case kStreamNarrowPitch: ex.template for_each<Idx>(blocks, StreamOnCpu<Body, Idx, KD, kStreamNarrowPitch>{body, g}); return;
    default: ex.template for_each<Idx>(blocks, StreamOnCpu<Body, Idx, KD, kStreamPitch>{body, g}); return;
  }
}

#if PG_GPU_COMPILER
template <class Idx, int KD, class Body>
void launch_plane_stream(const GpuExec& ex, const Problem& p, const Body& body) {
  int64_t blocks;
  const StreamGeom<Idx> g = make_stream_geom<Idx>(p, &blocks);
  if (blocks == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(blocks, int64_t{1} << 20));
  const Idx n = static_cast<Idx>(blocks);
  switch (g.fixed_pitch) {
    case 0: plane_stream_kernel<Body, Idx, KD, 0><<<grid, g.threads, 0, ex.stream>>>(body, g, n); break;
    case kStreamNarrowPitch: plane_stream_kernel<Body, Idx, KD, kStreamNarrowPitch><<<grid, g.threads, 0, ex.stream>>>(body, g, n); break;
    default: plane_stream_kernel<Body, Idx, KD, kStreamPitch><<<grid, g.threads, 0, ex.stream>>>(body, g, n); break;
  }
  PG_LAUNCH_CHECK("plane_stream_kernel");
}
#endif

}  // namespace pg
