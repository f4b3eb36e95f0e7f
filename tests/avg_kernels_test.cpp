// Average-pool backward variants on the edge cases where frameworks disagree or kernels break:
// divisor conventions on the ceil overhang, negative divisor_override, padding with dilation,
// gaps, channels-last with C off the vector width, half types, tiles larger than one block's,
// bitwise agreement between variants on exact data, the int32/int64 dispatch, and each fast
// path's own cases: its domain's edges, its runs of D planes, every divisor rule. Every case
// goes through run_and_verify against the oracle on the backend the binary was started with;
// the hand-computed cases also check the numbers themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/backend_main.hpp"
#include "kernels/avg/avg_gather_box3.hpp"
#include "kernels/avg/avg_gather_columns.hpp"
#include "kernels/avg/avg_gather_rows.hpp"
#include "kernels/avg/avg_gather_k3s2.hpp"
#include "kernels/avg/avg_gather_planes.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

// An avg problem from its trailing spatial axes ({W}, {H, W} or {D, H, W}); window parameters
// apply to every given axis.
Problem avg_problem(int64_t n, int64_t c, const std::vector<int64_t>& in, int64_t k, int64_t s, int64_t pad,
                    Divisor divisor = Divisor::include_pad) {
  Problem p;
  p.op = Op::avg;
  p.dims = static_cast<int>(in.size());
  p.n = n;
  p.c = c;
  int a = kAxes - p.dims;
  for (int64_t len : in) {
    p.in[a] = len;
    p.kernel[a] = k;
    p.stride[a] = s;
    p.pad_begin[a] = p.pad_end[a] = pad;
    ++a;
  }
  p.divisor = divisor;
  finalize(p);
  return p;
}

std::vector<const Variant*> avg_variants() {
  std::vector<const Variant*> out;
  for (const Variant& v : variants())
    if (is_own(v) && v.op == Op::avg) out.push_back(&v);
  return out;
}

// Runs every avg variant that supports p on the test backend (what runs comes from supports(),
// never from a list here); each must pass, and some variant must take p.
void verify_all(const Problem& p, DataKind kind = DataKind::ints, uint64_t seed = 1) {
  const std::string invalid = validate(p);
  EXPECT_EQ(invalid, "") << to_string(p);
  if (!invalid.empty()) return;
  Backend& b = test::backend();
  const DataSpec spec{seed, kind};
  const auto expected = std::make_shared<const Expected>(compute_expected(p, spec));
  int ran = 0;
  for (const Variant* v : avg_variants()) {
    const Outcome o = run_and_verify(b, *v, p, spec, expected);
    if (o.status == Status::unsupported) continue;
    EXPECT_EQ(o.status, Status::pass) << o.message;
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no avg variant supports " << to_string(p);
}

// dx of one variant for the given dy, as doubles.
std::vector<double> backward(const Variant& v, const Problem& p, const std::vector<double>& dy) {
  Backend& b = test::backend();
  const int es = dtype_size(p.dtype);
  std::vector<unsigned char> host(dy.size() * es);
  for (size_t i = 0; i < dy.size(); ++i) store_from_double(p.dtype, host.data(), static_cast<int64_t>(i), dy[i]);
  Buffer dy_buf(b, host.size() + 16), dx_buf(b, static_cast<size_t>(p.in_elems()) * es + 16);
  Buffer ws(b, v.workspace_bytes(p));
  b.upload(dy_buf.get(), host.data(), host.size());
  BwdBuffers buf;
  buf.dy = dy_buf.get();
  buf.dx = dx_buf.get();
  buf.workspace = ws.get();
  v.launch(b, p, buf);
  b.synchronize();
  std::vector<unsigned char> got(static_cast<size_t>(p.in_elems()) * es);
  b.download(got.data(), dx_buf.get(), got.size());
  std::vector<double> dx(static_cast<size_t>(p.in_elems()));
  for (size_t i = 0; i < dx.size(); ++i) dx[i] = load_as_double(p.dtype, got.data(), static_cast<int64_t>(i));
  return dx;
}

bool runs(const Variant& v, const Problem& p) { return v.supports(p, test::backend().kind()).ok; }
std::string why(const Variant& v, const Problem& p) { return v.supports(p, test::backend().kind()).why; }

TEST(AvgKernels, CeilOverhangDivisorPerConvention) {
  // L=5, k=2, s=2, ceil: windows [0,1] [2,3] [4,5); the last one holds one input tap.
  // PyTorch (include_pad, clamped to input + pad) divides it by 1, full-kernel frameworks by 2.
  const std::vector<double> dy = {2, 4, 8};
  for (auto [rule, last] : {std::pair{Divisor::include_pad, 8.0}, {Divisor::full_kernel, 4.0}, {Divisor::exclude_pad, 8.0}}) {
    Problem p = avg_problem(1, 1, {5}, 2, 2, 0, rule);
    p.ceil_mode = true;
    finalize(p);
    ASSERT_EQ(p.out[2], 3);
    verify_all(p);
    for (const Variant* v : avg_variants()) {
      if (!runs(*v, p)) continue;
      const std::vector<double> dx = backward(*v, p, dy);
      const std::vector<double> want = {1, 1, 2, 2, last};
      EXPECT_EQ(dx, want) << v->name << " " << divisor_name(rule);
    }
  }
}

TEST(AvgKernels, CeilOverhangWideWindow) {
  // L=9, k=7, s=3, p=3, ceil: three windows, the last reaching past the end padding.
  for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
    for (int dims : {1, 2, 3}) {
      Problem p = dims == 1 ? avg_problem(2, 3, {9}, 7, 3, 3, rule)
                : dims == 2 ? avg_problem(1, 2, {9, 9}, 7, 3, 3, rule)
                            : avg_problem(1, 2, {9, 9, 9}, 7, 3, 3, rule);
      p.ceil_mode = true;
      finalize(p);
      verify_all(p, DataKind::real);
    }
  }
}

TEST(AvgKernels, NegativeDivisorOverride) {
  Problem p = avg_problem(1, 2, {6, 7}, 3, 2, 1);
  p.has_divisor_override = true;
  p.divisor_override = -3;
  verify_all(p);
  // 1D: every window divides by -3 whatever its size, padding included.
  Problem q = avg_problem(1, 1, {4}, 3, 1, 1);
  q.has_divisor_override = true;
  q.divisor_override = -3;
  finalize(q);
  for (const Variant* v : avg_variants()) {
    if (!runs(*v, q)) continue;
    const std::vector<double> dx = backward(*v, q, {3, 6, 9, 12});
    EXPECT_EQ(dx, (std::vector<double>{-3, -6, -9, -7})) << v->name;
  }
}

TEST(AvgKernels, PaddingWithDilation) {
  // Begin padding with dilation: some windows have taps only in the padding on an axis.
  Problem p = avg_problem(1, 2, {9, 8}, 3, 1, 1);
  p.dilation[1] = 2;
  p.dilation[2] = 3;
  p.stride[2] = 2;
  finalize(p);
  for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
    p.divisor = rule;
    verify_all(p);
  }
  Problem q = avg_problem(1, 1, {7, 6, 9}, 3, 2, 1, Divisor::exclude_pad);
  q.dilation[0] = 3;
  q.pad_begin[2] = 2;
  q.pad_limit = PadLimit::none;
  q.ceil_mode = true;
  finalize(q);
  verify_all(q, DataKind::real);
}

TEST(AvgKernels, AsymmetricPadding) {
  Problem p = avg_problem(2, 3, {6, 7, 8}, 3, 2, 0, Divisor::include_pad);
  p.pad_begin[1] = 2;
  p.pad_end[2] = 1;
  p.pad_begin[0] = 1;
  p.pad_limit = PadLimit::none;
  finalize(p);
  for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
    p.divisor = rule;
    verify_all(p);
  }
}

TEST(AvgKernels, GapsAreExactZero) {
  // k2 s3: every third position along each axis is covered by no window.
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    Problem p = avg_problem(1, 3, {10, 10}, 2, 3, 0);
    p.layout = layout;
    verify_all(p);
    std::vector<double> dy(static_cast<size_t>(p.out_elems()), 5.0);
    for (const Variant* v : avg_variants()) {
      if (!runs(*v, p)) continue;
      const std::vector<double> dx = backward(*v, p, dy);
      for (int64_t i = 0; i < p.in_elems(); ++i) {
        const int64_t spatial = layout == Layout::channels_first ? i % 100 : (i / 3);
        const int64_t y = spatial / 10, x = spatial % 10;
        const bool covered = y % 3 != 2 && x % 3 != 2 && y < 8 && x < 8;
        EXPECT_EQ(dx[i], covered ? 1.25 : 0.0) << v->name << " at " << i;
        if (!covered) {
          EXPECT_FALSE(std::signbit(dx[i])) << v->name << " wrote -0 at " << i;
        }
      }
    }
  }
}

TEST(AvgKernels, ChannelsLastOffTheVectorWidth) {
  // C = 5 and 6 miss every pack width (f32: 4, f16: 8); C = 12 and 16 take the packed path
  // for f32; 3D and padding included.
  for (int64_t c : {5, 6, 12, 16})
    for (DType t : {DType::f32, DType::f16}) {
      Problem p = avg_problem(2, c, {4, 5, 6}, 3, 2, 1);
      p.layout = Layout::channels_last;
      p.dtype = t;
      verify_all(p, DataKind::real);
      Problem q = avg_problem(1, c, {6, 6}, 2, 2, 0);
      q.layout = Layout::channels_last;
      q.dtype = t;
      verify_all(q, DataKind::real);
    }
}

TEST(AvgKernels, HalfTypesAccumulateInF32) {
  for (DType t : {DType::f16, DType::bf16}) {
    // W = 16 takes the packed path (8 halves), W = 13 the scalar one.
    for (int64_t w : {16, 13}) {
      Problem overlap = avg_problem(2, 3, {7, w}, 3, 1, 1);
      overlap.dtype = t;
      verify_all(overlap, DataKind::real);
      Problem disjoint = avg_problem(1, 2, {4, 6, w}, 2, 2, 0);
      disjoint.dtype = t;
      verify_all(disjoint, DataKind::real);
    }
  }
}

TEST(AvgKernels, SeveralTilesPerPlane) {
  // Sizes that span several tiles of avg.gather.tiled with partial tiles at every edge, and
  // the benchmark's window shapes, scaled down.
  struct Case {
    std::initializer_list<int64_t> in;
    int64_t k, s, pad;
    bool ceil;
    Divisor rule;
  };
  const Case cases[] = {
      {{17, 19, 45}, 3, 1, 1, false, Divisor::exclude_pad},
      {{17, 19, 45}, 3, 1, 1, false, Divisor::include_pad},
      {{20, 21, 70}, 3, 2, 1, true, Divisor::exclude_pad},
      {{57, 70}, 3, 1, 1, false, Divisor::include_pad},
      {{16, 24, 24}, 2, 2, 0, false, Divisor::include_pad},
      {{200}, 5, 1, 2, false, Divisor::exclude_pad},
  };
  for (const Case& c : cases)
    for (DType t : {DType::f32, DType::f64})
      for (Layout l : {Layout::channels_first, Layout::channels_last}) {
        // Channels-last with C = 11: two lane tiles on the CPU backend's budget, the last partial.
        Problem p = avg_problem(1, l == Layout::channels_last ? 11 : 2, c.in, c.k, c.s, c.pad, c.rule);
        p.ceil_mode = c.ceil;
        p.dtype = t;
        p.layout = l;
        finalize(p);
        verify_all(p, DataKind::real);
      }
}

TEST(AvgKernels, TiledTakesEveryWindowAndLayout) {
  // avg.gather.tiled: several planes per tile (small planes), long 1D rows cut along W, copy axes
  // (kernel 1 along D or H), dilation with padding, anisotropic windows, both layouts, half types.
  const Variant* tiled = find_variant("avg.gather.tiled");
  ASSERT_NE(tiled, nullptr);
  auto anisotropic = [](Problem p, int axis, int64_t k, int64_t s, int64_t pad, int64_t d) {
    p.kernel[axis] = k;
    p.stride[axis] = s;
    p.pad_begin[axis] = p.pad_end[axis] = pad;
    p.dilation[axis] = d;
    finalize(p);
    return p;
  };
  const Problem base3 = avg_problem(2, 5, {6, 9, 13}, 3, 1, 1);
  const std::vector<Problem> cases = {
      avg_problem(3, 7, {5, 5}, 3, 1, 1),                      // planes smaller than a tile
      avg_problem(2, 3, {301}, 5, 1, 2),                       // a long row: several W tiles
      anisotropic(base3, 0, 1, 1, 0, 1),                       // a copy axis along D: 1x3x3
      anisotropic(base3, 1, 1, 1, 0, 1),                       // a copy axis along H
      anisotropic(anisotropic(base3, 1, 2, 1, 1, 3), 2, 3, 2, 1, 2),  // dilation with padding, anisotropic
      avg_problem(1, 2, {40, 40}, 10, 10, 0),                  // large disjoint windows
  };
  for (Problem p : cases)
    for (Layout l : {Layout::channels_first, Layout::channels_last})
      for (DType t : {DType::f32, DType::bf16}) {
        p.layout = l;
        p.dtype = t;
        if (l == Layout::channels_last) p.c = 13;
        finalize(p);
        ASSERT_TRUE(runs(*tiled, p)) << to_string(p) << ": " << why(*tiled, p);
        verify_all(p, DataKind::real);
      }
}

TEST(AvgKernels, PlanesTakesEveryPath) {
  // avg.gather.planes: runs with the kernel of 3 unrolled (2D, 3D, 1D rows, a partial last run),
  // runs of kernels up to 8 (2 and 7), the per-element sum with the unrolled tap loop (stride 2,
  // dilation) and with any number of taps (kernel 9 at stride 1), one divisor for every window
  // and divisors by per-axis counts, several planes per block and a partial last block.
  const Variant* planes = find_variant("avg.gather.planes");
  ASSERT_NE(planes, nullptr);
  auto dilated = [](Problem p, int64_t d) {
    p.dilation[2] = d;
    finalize(p);
    return p;
  };
  const std::vector<Problem> cases = {
      avg_problem(2, 3, {7, 12}, 3, 1, 1),         // runs of kernel 3, a partial last run
      avg_problem(1, 5, {3, 4, 10}, 3, 1, 1),      // 3D
      avg_problem(3, 2, {37}, 3, 1, 1),            // 1D rows
      avg_problem(2, 3, {6, 11}, 2, 1, 1),         // runs of kernel 2
      avg_problem(2, 2, {5, 16}, 7, 1, 3),         // runs of kernel 7
      avg_problem(2, 3, {9, 13}, 3, 2, 1),         // per element, stride 2
      dilated(avg_problem(2, 3, {8, 14}, 3, 1, 1), 2),  // per element, dilation 2
      avg_problem(2, 2, {40}, 9, 1, 4),            // per element, nine taps
  };
  for (const Problem& base : cases)
    for (Divisor rule : {Divisor::include_pad, Divisor::exclude_pad})
      for (DType t : {DType::f32, DType::bf16}) {
        Problem p = base;
        p.divisor = rule;
        p.dtype = t;
        finalize(p);
        AvgPlanesPlan plan;
        ASSERT_TRUE(plan_avg_planes(p, 4, kPlanesCpuBudget, &plan)) << to_string(p);
        EXPECT_TRUE(runs(*planes, p)) << to_string(p) << ": " << why(*planes, p);
        verify_all(p, DataKind::real);
      }
  // A 1D f64 row of 5,000: 40 KB of s, and W tables would add 40 KB more; runs need none.
  Problem row = avg_problem(1, 2, {5000}, 3, 1, 1);
  row.dtype = DType::f64;
  finalize(row);
  EXPECT_TRUE(runs(*planes, row)) << why(*planes, row);
  verify_all(row, DataKind::real);
}

TEST(AvgKernels, ColumnsTakesEveryPath) {
  // avg.gather.columns: the 3 x 3 walk and the walk of any kernel up to 8 (2, 5, 7, 8),
  // no padding and padding on both edges, rows wider than the CPU block's threads, several planes
  // per block and a partial last block, one divisor for every window and a divisor per window,
  // divisor_override, f64 and bf16.
  const Variant* columns = find_variant("avg.gather.columns");
  ASSERT_NE(columns, nullptr);
  const std::vector<Problem> cases = {
      avg_problem(2, 3, {7, 12}, 3, 1, 1),  // 3 x 3
      avg_problem(2, 3, {9, 4}, 3, 1, 0),   // 3 x 3 unpadded, W below the threads
      avg_problem(2, 3, {6, 11}, 2, 1, 1),  // kernel 2
      avg_problem(2, 2, {9, 16}, 5, 1, 2),  // kernel 5
      avg_problem(1, 3, {8, 10}, 8, 1, 4),  // kernel 8, every window row past an edge
      avg_problem(2, 2, {3, 40}, 7, 1, 3),  // kernel 7 on three rows
  };
  for (const Problem& base : cases)
    for (Divisor rule : {Divisor::include_pad, Divisor::exclude_pad})
      for (DType t : {DType::f32, DType::bf16, DType::f64}) {
        Problem p = base;
        p.divisor = rule;
        p.dtype = t;
        finalize(p);
        AvgColumnsPlan plan;
        ASSERT_TRUE(plan_avg_columns(p, t == DType::f64 ? 8 : 4, kColumnsCpuBudget, &plan)) << to_string(p);
        EXPECT_TRUE(runs(*columns, p)) << to_string(p) << ": " << why(*columns, p);
        verify_all(p, DataKind::real);
      }
  Problem overridden = avg_problem(2, 3, {7, 12}, 3, 1, 1);
  overridden.has_divisor_override = true;
  overridden.divisor_override = -7;
  finalize(overridden);
  EXPECT_TRUE(runs(*columns, overridden)) << why(*columns, overridden);
  verify_all(overridden, DataKind::real);
  // Outside its windows: stride 2, a kernel of 9, 1D and 3D, and one window per plane (no
  // position a tap of two windows: the other variants divide there).
  const Problem outside[] = {avg_problem(2, 3, {9, 13}, 3, 2, 1), avg_problem(2, 2, {9, 40}, 9, 1, 4),
                             avg_problem(3, 2, {37}, 3, 1, 1), avg_problem(1, 2, {4, 5, 6}, 3, 1, 1),
                             avg_problem(2, 2, {3, 3}, 3, 1, 0)};
  for (const Problem& p : outside) EXPECT_FALSE(runs(*columns, p)) << to_string(p);
}

TEST(AvgKernels, RowsTakesEveryPath) {
  // avg.gather.rows (1D channels-first): the unrolled k2, k3 and k5 s1 packs, the lane walk of
  // other stride-1 windows (dilated, k9), the strided packs (overlapping, with gaps, side by
  // side), packs that cross rows (W not a whole number of packs), rows shorter than a pack, and
  // the scalar path (C * W not a whole number of packs); every divisor rule, divisor_override,
  // f64, f32 and bf16.
  const Variant* rows = find_variant("avg.gather.rows");
  const Variant* gather = find_variant("avg.gather");
  ASSERT_NE(rows, nullptr);
  ASSERT_NE(gather, nullptr);
  struct Row {
    int64_t c, w, k, s, pad, dilation;
  };
  const Row shapes[] = {
      {3, 40, 3, 1, 1, 1},  // k3 s1: the unrolled packs
      {2, 36, 2, 1, 1, 1},  // k2 s1: the unrolled packs
      {4, 22, 9, 1, 4, 1},  // k9 s1: the lane walk
      {2, 38, 3, 1, 0, 1},  // k3 s1 unpadded, packs across rows
      {2, 64, 5, 1, 2, 1},  // k5 s1: the unrolled packs
      {3, 30, 3, 2, 1, 1},  // stride 2
      {2, 24, 2, 3, 1, 1},  // gaps between windows: one division a term
      {2, 20, 3, 3, 0, 1},  // windows side by side: one division a term
      {2, 33, 3, 1, 1, 2},  // dilated: the lane walk
      {4, 3, 3, 1, 1, 1},   // rows shorter than a pack
      {5, 9, 7, 2, 3, 1},   // a kernel wider than most packs, C * W odd: the scalar path
  };
  int disjoint = 0;
  for (const Row& r : shapes)
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (DType t : {DType::f32, DType::bf16, DType::f64}) {
        Problem p = avg_problem(2, r.c, {r.w}, r.k, r.s, r.pad, rule);
        p.dilation[2] = r.dilation;
        p.dtype = t;
        finalize(p);
        EXPECT_TRUE(runs(*rows, p)) << to_string(p) << ": " << why(*rows, p);
        verify_all(p, DataKind::real);
        // Where no element is a tap of two windows its terms are avg.gather's: the same bits on
        // any data (elsewhere it multiplies by reciprocal divisors).
        if (!rows_windows_share(p)) {
          std::vector<double> dy(static_cast<size_t>(p.out_elems()));
          for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::sin(0.7 * static_cast<double>(i) + 0.3) * 3.1;
          EXPECT_EQ(backward(*rows, p, dy), backward(*gather, p, dy)) << to_string(p);
          ++disjoint;
        }
      }
  EXPECT_GT(disjoint, 0);
  Problem overridden = avg_problem(2, 3, {40}, 3, 1, 1);
  overridden.has_divisor_override = true;
  overridden.divisor_override = -7;
  finalize(overridden);
  EXPECT_TRUE(runs(*rows, overridden)) << why(*rows, overridden);
  verify_all(overridden, DataKind::real);
  // Only 1D channels-first rows.
  Problem cl = avg_problem(2, 8, {40}, 3, 1, 1);
  cl.layout = Layout::channels_last;
  finalize(cl);
  const Problem outside[] = {avg_problem(2, 3, {9, 13}, 3, 1, 1), avg_problem(1, 2, {4, 5, 6}, 3, 1, 1), cl};
  for (const Problem& p : outside) EXPECT_FALSE(runs(*rows, p)) << to_string(p);
}

TEST(AvgKernels, FlatTakesEveryPath) {
  // avg.gather.flat (2D and 3D channels-first, stride 1): the unrolled k2, k3 and k5 packs with
  // dy read as packs (at every offset in a pack: 35-wide rows) and as single values (dy not a
  // whole number of packs), the walk of other W kernels (k4, a kernel-1 W axis with padding, a
  // 3 x 1 window), packs that cross rows and rows shorter than a pack (parts), windows wholly
  // inside the input (one reciprocal) and at the edges (a reciprocal a window), the scalar path
  // (C * H * W odd), packs across planes and volumes (runs masked by row); every divisor rule,
  // f32, bf16 and f64.
  const Variant* flat = find_variant("avg.gather.flat");
  const Variant* gather = find_variant("avg.gather");
  ASSERT_NE(flat, nullptr);
  ASSERT_NE(gather, nullptr);
  struct Shape {
    int64_t n, c;
    std::vector<int64_t> in;
    int64_t kh, kw, pad_h, pad_w;
  };
  const Shape shapes[] = {
      {2, 3, {35, 35}, 3, 3, 1, 1},      // Inception's k3s1p1: packs across rows at every offset
      {1, 4, {17, 17}, 3, 3, 1, 1},      // Mixed_6b
      {2, 2, {9, 16}, 2, 2, 1, 1},       // k2
      {1, 3, {11, 20}, 5, 5, 2, 2},      // k5
      {1, 2, {9, 13}, 4, 4, 1, 2},       // k4: the lane walk
      {2, 2, {6, 10}, 3, 1, 1, 1},       // 3 x 1, a padded kernel-1 W axis: the lane walk
      {2, 3, {7, 3}, 3, 3, 1, 1},        // rows shorter than a pack
      {1, 1, {7, 4}, 2, 2, 0, 0},        // dx whole packs, dy (6 x 3) not: single loads
      {3, 1, {5, 7}, 3, 3, 1, 1},        // C * H * W odd: the scalar path
      {1, 2, {4, 6, 10}, 3, 3, 1, 1},    // 3D k3s1p1
      {1, 2, {5, 7, 9}, 2, 3, 0, 1},     // 3D, unpadded D/H, k2 along D/H
      {1, 8, {5, 13}, 3, 3, 1, 1},       // packs across planes (65 each), bf16's 8 lanes too: masked runs
      {1, 4, {3, 5, 7}, 3, 3, 1, 1},     // 3D, packs across planes and volumes (35, 105 each)
  };
  for (const Shape& sh : shapes)
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (DType t : {DType::f32, DType::bf16, DType::f64}) {
        Problem p = avg_problem(sh.n, sh.c, sh.in, 1, 1, 0, rule);
        p.pad_limit = PadLimit::none;  // the padded kernel-1 axis (ONNX allows it)
        for (int a = kAxes - p.dims; a < kAxes; ++a) {
          const bool w = a == kAxes - 1;
          p.kernel[a] = w ? sh.kw : sh.kh;
          p.pad_begin[a] = p.pad_end[a] = w ? sh.pad_w : sh.pad_h;
        }
        p.dtype = t;
        finalize(p);
        EXPECT_TRUE(runs(*flat, p)) << to_string(p) << ": " << why(*flat, p);
        verify_all(p, DataKind::real);
      }
  // One window per plane: no element is a tap of two windows, and the terms are avg.gather's,
  // the same bits on any data.
  for (Divisor rule : {Divisor::include_pad, Divisor::exclude_pad}) {
    const Problem one = avg_problem(2, 4, {3, 3}, 5, 1, 1, rule);
    ASSERT_TRUE(runs(*flat, one)) << why(*flat, one);
    ASSERT_FALSE(undilated_windows_overlap(one));
    std::vector<double> dy(static_cast<size_t>(one.out_elems()));
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::sin(0.7 * static_cast<double>(i) + 0.3) * 3.1;
    EXPECT_EQ(backward(*flat, one, dy), backward(*gather, one, dy)) << to_string(one);
  }
  Problem overridden = avg_problem(2, 3, {35, 35}, 3, 1, 1);
  overridden.has_divisor_override = true;
  overridden.divisor_override = -7;
  finalize(overridden);
  EXPECT_TRUE(runs(*flat, overridden)) << why(*flat, overridden);
  verify_all(overridden, DataKind::real);
  // Only 2D and 3D channels-first stride-1 undilated windows.
  Problem cl = avg_problem(2, 8, {9, 12}, 3, 1, 1);
  cl.layout = Layout::channels_last;
  finalize(cl);
  Problem dilated = avg_problem(1, 2, {9, 12}, 3, 1, 2);
  dilated.dilation[2] = 2;
  finalize(dilated);
  const Problem outside[] = {avg_problem(2, 3, {40}, 3, 1, 1), avg_problem(1, 2, {9, 12}, 3, 2, 1), cl, dilated};
  for (const Problem& p : outside) EXPECT_FALSE(runs(*flat, p)) << to_string(p);
}

TEST(AvgKernels, Box3Path) {
  // avg.gather.box3 (k3 s1 p1, channels-first): 2D and 3D, W of one and several packs, every
  // dtype and divisor convention.
  const Variant* box3 = find_variant("avg.gather.box3");
  ASSERT_NE(box3, nullptr);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (auto in : {std::vector<int64_t>{5, 7, 16}, {3, 3, 8}, {4, 3, 32}, {9, 24}, {2, 8}}) {
        Problem p = in.size() == 3 ? avg_problem(2, 3, {in[0], in[1], in[2]}, 3, 1, 1, rule)
                                   : avg_problem(2, 3, {in[0], in[1]}, 3, 1, 1, rule);
        p.dtype = t;
        EXPECT_TRUE(runs(*box3, p)) << to_string(p) << ": " << why(*box3, p);
        verify_all(p, DataKind::real);
      }
}

TEST(AvgKernels, Box3RunsOfSeveralPlanes) {
  // Few items per plane: D in runs of kAvgBox3MinRunPlanes with a partial last one (5 = 4 + 1,
  // 6 = 4 + 2, 9 = 4 + 4 + 1, 11 = 4 + 4 + 3), whole runs (8, 12), one short run (3), and many
  // runs (600).
  const Variant* box3 = find_variant("avg.gather.box3");
  ASSERT_NE(box3, nullptr);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (int64_t d : {3, 5, 6, 8, 9, 11, 12, 600}) {
      Problem p = avg_problem(1, 2, {d, 3, 16}, 3, 1, 1, Divisor::exclude_pad);
      p.dtype = t;
      ASSERT_TRUE(runs(*box3, p)) << to_string(p) << ": " << why(*box3, p);
      const int64_t per_run = p.n * p.c * p.in[1] * (p.in[2] * dtype_size(t) / 16);
      const PlaneRuns r = plan_plane_runs(d, per_run, kAvgBox3WantItems, kAvgBox3MinRunPlanes);
      EXPECT_EQ(r.length, std::min<int64_t>(d, kAvgBox3MinRunPlanes)) << to_string(p);
      verify_all(p, DataKind::real);
    }
  // Many items per plane, where kAvgBox3WantItems decides: one run of 5 (2^18 items per plane),
  // and 4 + 1 (2^17 per plane: two runs wanted, of at least kAvgBox3MinRunPlanes).
  for (int64_t h : {512, 256}) {
    Problem wide = avg_problem(1, 1, {5, h, 2048}, 3, 1, 1, Divisor::exclude_pad);
    ASSERT_TRUE(runs(*box3, wide)) << to_string(wide);
    const PlaneRuns r = plan_plane_runs(5, h * 2048 / 4, kAvgBox3WantItems, kAvgBox3MinRunPlanes);
    EXPECT_EQ(r.length, h == 512 ? 5 : 4);
    verify_all(wide, DataKind::real);
  }
}

TEST(AvgKernels, StrideTwoRunsOfSeveralPlanes) {
  // Few items per plane: window planes (D + 1) / 2 in runs of AvgGatherK3S2::kMinRunPlanes with
  // a partial last one (D = 5, 6: 2 + 1; D = 9, 10: 2 + 2 + 1) or not (D = 7, 12), floor and ceil.
  const Variant* k3s2 = find_variant("avg.gather.k3s2");
  ASSERT_NE(k3s2, nullptr);
  for (DType t : {DType::f32, DType::f16, DType::f64})
    for (bool ceil : {false, true})
      for (int64_t d : {5, 6, 7, 9, 10, 12}) {
        Problem p = avg_problem(1, 2, {d, 6, 16}, 3, 2, 1, Divisor::exclude_pad);
        p.dtype = t;
        p.ceil_mode = ceil;
        finalize(p);
        ASSERT_TRUE(runs(*k3s2, p)) << to_string(p) << ": " << why(*k3s2, p);
        const int64_t per_run = p.n * p.c * ((p.in[1] + 3) / 4) * (p.in[2] * dtype_size(t) / 16);
        const PlaneRuns r = plan_plane_runs((d + 1) / 2, per_run, AvgGatherK3S2::kWantItems, AvgGatherK3S2::kMinRunPlanes);
        EXPECT_EQ(r.length, AvgGatherK3S2::kMinRunPlanes) << to_string(p);
        verify_all(p, DataKind::real);
      }
}

TEST(AvgKernels, MinimumRunLengthKeepsTheBenchmarkSplit) {
  // The benchmark rows (bench/rows.cpp) are cut into runs by kWantItems alone: the minimum run
  // length changes nothing there. Items per run: box3 N * C * H * W / V, k3s2 N * C * H / 4 * W / V.
  struct Row {
    int64_t planes, per_run, want, min_length, length, count;
  };
  const Row rows[] = {
      {16, 8 * 64 * 56 * (56 / 4), kAvgBox3WantItems, kAvgBox3MinRunPlanes, 16, 1},  // (8,64,16,56,56) k3s1p1 f32
      {16, 8 * 64 * 56 * (56 / 8), kAvgBox3WantItems, kAvgBox3MinRunPlanes, 8, 2},   // the same in f16
      {1, 64 * 128 * 56 * (56 / 4), kAvgBox3WantItems, kAvgBox3MinRunPlanes, 1, 1},  // (64,128,56,56) k3s1p1
      {64, 2 * 32 * (128 / 4) * (128 / 4), AvgGatherK3S2::kWantItems, AvgGatherK3S2::kMinRunPlanes, 8, 8},  // k3s2p1 ceil
  };
  for (const Row& row : rows) {
    const PlaneRuns r = plan_plane_runs(row.planes, row.per_run, row.want, row.min_length);
    const PlaneRuns without = plan_plane_runs(row.planes, row.per_run, row.want, 1);
    EXPECT_EQ(r.length, row.length) << row.per_run;
    EXPECT_EQ(r.count, row.count) << row.per_run;
    EXPECT_EQ(r.length, without.length) << row.per_run;
    EXPECT_EQ(r.count, without.count) << row.per_run;
  }
}

TEST(AvgKernels, ExactTilingPaths) {
  // avg.direct.exact.cf (k2 s2 p0, 3D, 2D and 1D) and avg.direct.exact.cl (k2 s2 and k3 s3 p0),
  // every dtype, divisor convention and divisor_override.
  const Variant* cf = find_variant("avg.direct.exact.cf");
  const Variant* cl = find_variant("avg.direct.exact.cl");
  ASSERT_NE(cf, nullptr);
  ASSERT_NE(cl, nullptr);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (int64_t over : {0, -3, 2}) {
      std::vector<std::pair<const Variant*, Problem>> cases = {
          {cf, avg_problem(2, 3, {4, 6, 16}, 2, 2, 0)}, {cf, avg_problem(1, 2, {6, 32}, 2, 2, 0)},
          {cf, avg_problem(2, 1, {16}, 2, 2, 0)},       {cl, avg_problem(2, 16, {4, 6, 8}, 2, 2, 0)},
          {cl, avg_problem(1, 8, {6, 9}, 3, 3, 0)},     {cl, avg_problem(1, 24, {8}, 4, 4, 0)},
      };
      for (auto& [v, p] : cases) {
        if (v == cl) p.layout = Layout::channels_last;
        p.dtype = t;
        p.has_divisor_override = over != 0;
        p.divisor_override = over;
        for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
          p.divisor = rule;
          EXPECT_TRUE(runs(*v, p)) << v->name << " " << to_string(p) << ": " << why(*v, p);
          verify_all(p, DataKind::real);
        }
      }
    }
}

TEST(AvgKernels, EveryVariantHonoursEveryDivisorRule) {
  // One problem in each variant's domain, under every convention and divisor_override; every
  // avg variant must take one of them (derived from supports(): a variant with a new domain
  // fails here until a case reaches it).
  auto cl = [](Problem p) {
    p.layout = Layout::channels_last;
    return p;
  };
  auto ceil = [](Problem p) {
    p.ceil_mode = true;
    finalize(p);
    return p;
  };
  const std::vector<Problem> cases = {
      avg_problem(2, 3, {5, 6, 16}, 3, 1, 1),        // k3 s1 p1: box3, stream, tiled, gathers
      avg_problem(1, 2, {6, 24}, 3, 1, 0),           // k3 s1 p0: stream
      ceil(avg_problem(2, 3, {7, 6, 16}, 3, 2, 1)),  // k3 s2 p1 with the ceil overhang
      avg_problem(2, 3, {4, 6, 16}, 2, 2, 0),        // exact tiling, channels-first
      cl(avg_problem(2, 8, {4, 6, 8}, 2, 2, 0)),     // exact tiling, channels-last
      avg_problem(1, 2, {9, 11}, 2, 3, 0),           // disjoint with gaps
      avg_problem(2, 3, {7, 7}, 7, 7, 0),            // global pooling: broadcast.plane
      cl(avg_problem(2, 8, {5, 6}, 7, 7, 3)),        // one padded window per plane, channels-last
      avg_problem(2, 3, {40}, 3, 1, 1),              // a 1D row: rows
  };
  std::vector<std::string> taken;
  for (Problem p : cases)
    for (DType t : {DType::f32, DType::f16})
      for (int64_t over : {0, -3, 7})
        for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
          p.dtype = t;
          p.divisor = rule;
          p.has_divisor_override = over != 0;
          p.divisor_override = over;
          verify_all(p, DataKind::real);
          for (const Variant* v : avg_variants())
            if (runs(*v, p)) taken.push_back(v->name);
        }
  for (const Variant* v : avg_variants()) {
    if (v->gpu_only && test::backend().kind() == BackendKind::cpu) continue;
    EXPECT_NE(std::find(taken.begin(), taken.end(), v->name), taken.end()) << v->name << " took none of the cases";
  }
}

TEST(AvgKernels, DomainEdges) {
  // Each fast path takes a problem in its domain and refuses one just outside, saying why.
  auto with = [](Problem p, auto change) {
    change(p);
    finalize(p);
    return p;
  };
  const Problem box = avg_problem(1, 2, {5, 6, 16}, 3, 1, 1);
  const Problem down = avg_problem(1, 2, {5, 6, 16}, 3, 2, 1);
  const Problem tiles = avg_problem(1, 2, {4, 6, 16}, 2, 2, 0);
  const Problem tiles_cl = with(avg_problem(1, 8, {4, 6, 8}, 2, 2, 0), [](Problem& p) { p.layout = Layout::channels_last; });
  struct Edge {
    const char* variant;
    Problem inside, outside;
    const char* why;  // a word the refusal must contain
  };
  const Edge edges[] = {
      {"avg.gather.box3", box, with(box, [](Problem& p) { p.in[2] = 10; }), "16-byte packs"},
      {"avg.gather.box3", box, with(box, [](Problem& p) { p.pad_end[1] = 0; }), "window"},
      {"avg.gather.box3", box, with(box, [](Problem& p) { p.layout = Layout::channels_last; }), "layout"},
      {"avg.gather.k3s2", down, with(down, [](Problem& p) { p.pad_end[2] = 0; }), "window"},
      {"avg.gather.k3s2", down, with(down, [](Problem& p) { p.stride[0] = 1; }), "window"},
      {"avg.gather.k3s2", down, with(down, [](Problem& p) { p.in[2] = 10; }), "16-byte packs"},
      {"avg.direct.exact.cf", tiles, with(tiles, [](Problem& p) { p.in[0] = 5; }), "whole number of windows along D"},
      {"avg.direct.exact.cf", tiles, with(tiles, [](Problem& p) { p.pad_begin[1] = p.pad_end[1] = 1; }), "window"},
      {"avg.direct.exact.cf", tiles, tiles_cl, "layout"},
      {"avg.direct.exact.cl", tiles_cl, with(tiles_cl, [](Problem& p) { p.in[1] = 7; }), "whole number of windows along H"},
      {"avg.direct.exact.cl", tiles_cl, with(tiles_cl, [](Problem& p) { p.c = 6; }), "16-byte packs"},
      {"avg.direct.exact.cl", tiles_cl, with(tiles_cl, [](Problem& p) { p.kernel[2] = p.stride[2] = 1; }), "window"},
      {"avg.direct", tiles, with(tiles, [](Problem& p) { p.stride[1] = 1; }), "overlap"},
      {"avg.gather.stream", box, with(box, [](Problem& p) { p.stride[2] = 2; }), "window"},
      {"avg.gather.stream", box, with(box, [](Problem& p) { p.layout = Layout::channels_last; }), "layout"},
  };
  for (const Edge& e : edges) {
    const Variant* v = find_variant(e.variant);
    ASSERT_NE(v, nullptr) << e.variant;
    EXPECT_EQ(validate(e.outside), "") << to_string(e.outside);
    EXPECT_TRUE(runs(*v, e.inside)) << e.variant << " " << to_string(e.inside) << ": " << why(*v, e.inside);
    EXPECT_FALSE(runs(*v, e.outside)) << e.variant << " " << to_string(e.outside);
    EXPECT_NE(why(*v, e.outside).find(e.why), std::string::npos)
        << e.variant << " refused " << to_string(e.outside) << " with \"" << why(*v, e.outside) << "\"";
  }
}

TEST(AvgKernels, PackedPathsRefuseUnalignedBuffers) {
  // The harness allocates 16-byte aligned buffers; a packed fast path given others throws, naming
  // itself, instead of running another body.
  Backend& b = test::backend();
  Problem tiles_cl = avg_problem(1, 8, {4, 6, 8}, 2, 2, 0);
  tiles_cl.layout = Layout::channels_last;
  const Problem cases[] = {avg_problem(1, 2, {5, 6, 16}, 3, 1, 1), avg_problem(1, 2, {5, 6, 16}, 3, 2, 1),
                           avg_problem(1, 2, {4, 6, 16}, 2, 2, 0), tiles_cl};
  for (const Problem& p : cases) {
    Buffer dy(b, static_cast<size_t>(p.out_elems()) * 4 + 16), dx(b, static_cast<size_t>(p.in_elems()) * 4 + 16);
    BwdBuffers buf;
    buf.dy = static_cast<const char*>(dy.get()) + 4;
    buf.dx = dx.get();
    int refused = 0;
    for (const char* name : {"avg.gather.box3", "avg.gather.k3s2", "avg.direct.exact.cf", "avg.direct.exact.cl"}) {
      const Variant* v = find_variant(name);
      ASSERT_NE(v, nullptr) << name;
      if (!runs(*v, p)) continue;
      try {
        v->launch(b, p, buf);
        ADD_FAILURE() << name << " ran on an unaligned dy";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
        ++refused;
      }
    }
    EXPECT_EQ(refused, 1) << to_string(p);
  }
}

TEST(AvgKernels, PackGathersTakeUnalignedBuffers) {
  // avg.gather.rows and .flat read dy as 16-byte packs only when it is aligned: given a dy or dx
  // 4 bytes off, they take their single-value paths and compute the same dx as avg.gather.
  Backend& b = test::backend();
  const Variant* gather = find_variant("avg.gather");
  ASSERT_NE(gather, nullptr);
  const Problem cases[] = {avg_problem(2, 3, {35, 35}, 3, 1, 1), avg_problem(1, 2, {4, 6, 16}, 3, 1, 1),
                           avg_problem(2, 3, {40}, 3, 1, 1)};
  for (const Problem& p : cases) {
    std::vector<double> dy(static_cast<size_t>(p.out_elems()));
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::sin(0.7 * static_cast<double>(i) + 0.3) * 3.1;
    const std::vector<double> want = backward(*gather, p, dy);
    std::vector<float> host(dy.begin(), dy.end());
    for (const char* name : {"avg.gather.rows", "avg.gather.flat"}) {
      const Variant* v = find_variant(name);
      ASSERT_NE(v, nullptr) << name;
      if (!runs(*v, p)) continue;
      for (int off_dy : {0, 4})
        for (int off_dx : {0, 4}) {
          Buffer dy_buf(b, host.size() * 4 + 16), dx_buf(b, static_cast<size_t>(p.in_elems()) * 4 + 16);
          BwdBuffers buf;
          buf.dy = static_cast<const char*>(dy_buf.get()) + off_dy;
          buf.dx = static_cast<char*>(dx_buf.get()) + off_dx;
          b.upload(const_cast<void*>(buf.dy), host.data(), host.size() * 4);
          v->launch(b, p, buf);
          b.synchronize();
          std::vector<float> got(static_cast<size_t>(p.in_elems()));
          b.download(got.data(), buf.dx, got.size() * 4);
          for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i])))
                << name << " dy +" << off_dy << " dx +" << off_dx << " at " << i << ": " << to_string(p);
        }
    }
  }
}

TEST(AvgKernels, StreamTilesAndChunks) {
  // avg.gather.stream (k3 s1, padding 0 or 1): several 32 x 32 tiles with partial ones at the
  // H and W edges, D cut into chunks of one plane (few planes), of two (C = 300) and not at all
  // (C = 1100: enough tiles to fill the GPU), asymmetric padding, every divisor convention.
  // Blocks fitted to their tile (all but the last two cases) and, for the 3D walks of 24 x 30
  // and 31 x 32 tiles, the fixed layouts of pitch 30 and 34 (StreamGeom::fixed_pitch).
  const Variant* stream = find_variant("avg.gather.stream");
  ASSERT_NE(stream, nullptr);
  struct Case {
    int64_t c;
    std::vector<int64_t> in;
  };
  for (Case k : {Case{1, {7, 40, 70}}, Case{300, {5, 6, 9}}, Case{1100, {3, 4, 5}}, Case{2, {33, 65}}, Case{1, {3, 60, 70}}, Case{1, {3, 64, 62}}})
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (int64_t pe : {0, 1}) {
        Problem p = k.in.size() == 3 ? avg_problem(1, k.c, {k.in[0], k.in[1], k.in[2]}, 3, 1, 1, rule)
                                     : avg_problem(1, k.c, {k.in[0], k.in[1]}, 3, 1, 1, rule);
        for (int a = kAxes - p.dims; a < kAxes; ++a) p.pad_end[a] = (a % 2) ? pe : 1 - pe;
        p.pad_begin[kAxes - 1] = pe;
        finalize(p);
        ASSERT_TRUE(runs(*stream, p)) << to_string(p) << ": " << stream->supports_problem(p).why;
        verify_all(p, DataKind::real);
      }
}

TEST(AvgKernels, StrideTwoPath) {
  // avg.gather.k3s2 (k3 s2 p1): every divisor convention and an override, floor and ceil mode
  // (the ceil overhang changes the last window's count per axis), odd and even D and H, one and
  // two packs along W, D cut into runs, 2D and 1D through flat axes, every dtype.
  const Variant* k3s2 = find_variant("avg.gather.k3s2");
  ASSERT_NE(k3s2, nullptr);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (bool ceil : {false, true}) {
      std::vector<Problem> cases;
      for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
        for (auto in : {std::vector<int64_t>{7, 9, 16}, {6, 4, 8}, {3, 5, 16}, {4, 3, 32}, {11, 16}, {16}})
          cases.push_back(in.size() == 3   ? avg_problem(2, 3, {in[0], in[1], in[2]}, 3, 2, 1, rule)
                          : in.size() == 2 ? avg_problem(2, 3, {in[0], in[1]}, 3, 2, 1, rule)
                                           : avg_problem(2, 3, {in[0]}, 3, 2, 1, rule));
      cases.push_back(avg_problem(1, 1, {300, 3, 8}, 3, 2, 1, Divisor::exclude_pad));  // D in runs
      cases.push_back(avg_problem(1, 2, {5, 7, 8}, 3, 2, 1));
      cases.back().has_divisor_override = true;
      cases.back().divisor_override = -7;
      for (Problem& p : cases) {
        p.dtype = t;
        p.ceil_mode = ceil;
        finalize(p);
        EXPECT_TRUE(runs(*k3s2, p)) << to_string(p) << ": " << k3s2->supports_problem(p).why;
        verify_all(p, DataKind::real);
      }
    }
  // D in runs of two window planes and a last of one: 2^14 items per window plane in f64 (2 x 4
  // dx each) against kWantItems = 2^19 in avg_gather_k3s2.hpp. That path alone: the other
  // variants take seconds each at this size.
  {
    Problem deep = avg_problem(1, 1, {66, 256, 512}, 3, 2, 1, Divisor::exclude_pad);
    deep.dtype = DType::f64;
    deep.ceil_mode = true;
    finalize(deep);
    const DataSpec spec{1, DataKind::real};
    const auto expected = std::make_shared<const Expected>(compute_expected(deep, spec));
    const Outcome o = run_and_verify(test::backend(), *k3s2, deep, spec, expected);
    EXPECT_EQ(o.status, Status::pass) << to_string(deep) << ": " << o.message;
  }
  // Not the case it computes: W off the pack width, stride 1, padding 0.
  EXPECT_FALSE(runs(*k3s2, avg_problem(1, 1, {6, 6, 10}, 3, 2, 1)));
  EXPECT_FALSE(runs(*k3s2, avg_problem(1, 1, {6, 6, 16}, 3, 1, 1)));
  EXPECT_FALSE(runs(*k3s2, avg_problem(1, 1, {6, 6, 16}, 3, 2, 0)));
}

TEST(AvgKernels, VariantsAgreeBitwiseOnExactData) {
  // With divisor_override = 1 every term is an integer and every sum is exact, so the atomic
  // scatter, the gathers, the direct store and the broadcasts must produce the same bits.
  for (Layout layout : {Layout::channels_first, Layout::channels_last})
    for (auto [k, s, d] : {std::tuple<int64_t, int64_t, int64_t>{3, 1, 5}, {3, 2, 5}, {2, 2, 5}, {2, 2, 4}}) {
      // D = 4 with k2 s2: 4 x 8 x 12 tiles exactly, so the exact-tiling broadcasts join.
      Problem p = avg_problem(2, 4, {d, d == 4 ? 8 : 9, 12}, k, s, k == 2 ? 0 : 1);
      p.layout = layout;
      p.has_divisor_override = true;
      p.divisor_override = 1;
      std::vector<double> dy(static_cast<size_t>(p.out_elems()));
      for (size_t i = 0; i < dy.size(); ++i) dy[i] = static_cast<double>(static_cast<int64_t>(i * 7919 % 23) - 11);
      std::vector<double> first;
      std::string first_name;
      for (const Variant* v : avg_variants()) {
        if (!runs(*v, p)) continue;
        const std::vector<double> dx = backward(*v, p, dy);
        if (first.empty()) {
          first = dx;
          first_name = v->name;
          continue;
        }
        EXPECT_EQ(std::memcmp(dx.data(), first.data(), dx.size() * sizeof(double)), 0)
            << v->name << " differs from " << first_name << " on " << to_string(p);
      }
      EXPECT_FALSE(first.empty());
    }
}

// Where no position is a tap of two windows (one window along every axis), every dx element is
// one dy / divisor and the avg variants agree bitwise on any data. The gathers that multiply by
// reciprocal divisors (k3s2, columns) decline those problems and say why; those that run agree bit
// for bit. A 2-wide f64 row under one k3s2p1 window (W one 16-byte pack, the only one-window
// k3s2 problems its domain holds; box3's holds none) made AvgVariants.
// AgreeBitwiseOnDisjointWindows fail now and then, k3s2 an ulp off the others.
TEST(AvgKernels, OneWindowPlanesDivideEverywhere) {
  const auto typed = [](Problem p, DType t) {
    p.dtype = t;
    finalize(p);
    return p;
  };
  // 64 windows of dy 0.1 + 0.37 i: divided by 3 or 9, about a third of them differ by an ulp
  // from the product with the rounded reciprocal, in f32 and in f64.
  const std::pair<const char*, Problem> one_window[] = {
      {"avg.gather.k3s2", typed(avg_problem(4, 16, {2}, 3, 2, 1), DType::f64)},
      {"avg.gather.k3s2", typed(avg_problem(4, 16, {2, 2}, 3, 2, 1), DType::f64)},
      {"avg.gather.columns", typed(avg_problem(4, 16, {3, 3}, 3, 1, 0), DType::f32)},
      {"avg.gather.columns", typed(avg_problem(4, 16, {1, 1}, 3, 1, 1, Divisor::exclude_pad), DType::f64)}};
  for (const auto& [name, p] : one_window) {
    SCOPED_TRACE(to_string(p));
    const Variant* declines = find_variant(name);
    ASSERT_NE(declines, nullptr) << name;
    EXPECT_FALSE(runs(*declines, p));
    EXPECT_NE(why(*declines, p).find("tap of two windows"), std::string::npos) << why(*declines, p);
    std::vector<double> dy(static_cast<size_t>(p.out_elems()));
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = 0.1 + 0.37 * static_cast<double>(i);
    std::vector<double> first;
    std::string first_name;
    int ran = 0;
    for (const Variant* v : avg_variants()) {
      if (!runs(*v, p)) continue;
      ++ran;
      const std::vector<double> dx = backward(*v, p, dy);
      if (first.empty()) {
        first = dx;
        first_name = v->name;
      } else {
        EXPECT_EQ(std::memcmp(dx.data(), first.data(), dx.size() * sizeof(double)), 0)
            << v->name << " differs from " << first_name;
      }
    }
    EXPECT_GE(ran, 2);
  }
}

// An empty batch is valid and writes nothing; the fast paths plan work items per (n, c) and
// once divided by zero here (found by review, replayed with poolgrad replay).
TEST(AvgKernels, EmptyBatchOnEveryFastPath) {
  for (const char* text : {
           "op=avg3d n=0 c=3 in=4x4x8 k=3x3x3 s=1x1x1 d=1x1x1 pb=1x1x1 pe=1x1x1 ceil=0 div=exclude_pad layout=ncdhw dtype=f32",
           "op=avg3d n=0 c=3 in=5x5x8 k=3x3x3 s=2x2x2 d=1x1x1 pb=1x1x1 pe=1x1x1 ceil=1 div=include_pad layout=ncdhw dtype=f32",
           "op=avg3d n=0 c=3 in=4x4x8 k=2x2x2 s=2x2x2 d=1x1x1 pb=0x0x0 pe=0x0x0 ceil=0 div=include_pad layout=ncdhw dtype=f32"}) {
    Problem p;
    std::string error;
    ASSERT_TRUE(parse_problem(text, &p, &error)) << error;
    verify_all(p);
  }
}

TEST(AvgKernels, Int64IndexingBeyondTwoTo31Elements) {
  // 1 x 1 x 48000 x 48000 is 2.3e9 elements: int64 index arithmetic, never allocated here.
  Problem big = avg_problem(1, 1, {48000, 48000}, 3, 1, 1);
  ASSERT_GT(big.in_elems(), int64_t{1} << 31);
  EXPECT_FALSE(avg_fits_int32(big));
  Problem small = avg_problem(64, 128, {56, 56}, 3, 1, 1);
  EXPECT_TRUE(avg_fits_int32(small));
  // Just under 2^31 elements in, but positions times strides past int32 on one axis.
  Problem strided = avg_problem(1, 1, {2, 1000}, 1, 1, 0);
  strided.stride[2] = 1200000000;
  strided.kernel[2] = 1;
  finalize(strided);
  EXPECT_FALSE(avg_fits_int32(strided));

  int index_bytes = 0;
  with_avg_types(big, [&](auto, auto idx) { index_bytes = sizeof(idx); });
  EXPECT_EQ(index_bytes, 8);
  with_avg_types(small, [&](auto, auto idx) { index_bytes = sizeof(idx); });
  EXPECT_EQ(index_bytes, 4);

  // Every variant whose domain admits big either takes it or refuses it for its offsets (or, for
  // avg.gather.planes, for a plane past its shared memory); some take it.
  int take = 0;
  for (const Variant* v : avg_variants()) {
    if (!v->domain.admits(big).ok) continue;
    const Support s = v->supports_problem(big);
    take += s.ok;
    if (!s.ok) {
      EXPECT_TRUE(s.why.find("int32") != std::string::npos || s.why.find("shared-memory") != std::string::npos)
          << v->name << ": " << s.why;
    }
  }
  EXPECT_GT(take, 0);
  Problem big_disjoint = avg_problem(1, 1, {48000, 48000}, 2, 2, 0);
  EXPECT_TRUE(runs(*find_variant("avg.direct"), big_disjoint));
  EXPECT_FALSE(find_variant("avg.direct.exact.cf")->supports_problem(big_disjoint).ok);
}

TEST(AvgKernels, UnsupportedSaysWhy) {
  const Variant* direct = find_variant("avg.direct");
  ASSERT_NE(direct, nullptr);
  const Support s = direct->supports(avg_problem(1, 1, {8, 8}, 3, 1, 1), test::backend().kind());
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.why.find("overlap"), std::string::npos) << s.why;
  const Variant* tiled = find_variant("avg.gather.tiled");
  ASSERT_NE(tiled, nullptr);
  // A one-position tile lays out every window its span reaches: 402 x 402 here, past 48 KiB.
  Problem huge_reach = avg_problem(1, 1, {1000, 1000}, 3, 1, 1);
  huge_reach.dilation[1] = huge_reach.dilation[2] = 300;
  finalize(huge_reach);
  const Support t = tiled->supports(huge_reach, test::backend().kind());
  EXPECT_FALSE(t.ok);
  EXPECT_NE(t.why.find("shared-memory"), std::string::npos) << t.why;
  EXPECT_TRUE(runs(*find_variant("avg.gather"), huge_reach));
}

}  // namespace
}  // namespace pg
