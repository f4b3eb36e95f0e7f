// The max-pool backward variants on the edges random problems reach only by luck: hand-built x
// with ties, NaN and -inf windows, windows entirely in the padding, ceil overhang, gaps, every
// index format and type, both channels-last paths, half types through the f32 workspace, the
// int64 dispatch, and stored indices that name no tap of their window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/backend_main.hpp"
#include "kernels/exports.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_gather_counted.hpp"
#include "kernels/max/max_gather_taps.hpp"
#include "kernels/max/max_gather_tiled.hpp"
#include "kernels/max/max_scatter_tiled.hpp"
#include "kernels/max/max_geometry.hpp"
#include "reference/pool_reference.hpp"
#include "src/harness/registry.hpp"
#include "src/harness/verify.hpp"

namespace pg {
namespace {

// A problem given by its innermost `dims` axes ({W}, {H, W} or {D, H, W}).
Problem make(int dims, int64_t n, int64_t c, std::vector<int64_t> in, std::vector<int64_t> k, std::vector<int64_t> s,
             std::vector<int64_t> pad_begin, std::vector<int64_t> pad_end, std::vector<int64_t> dil = {}) {
  Problem p;
  p.op = Op::max;
  p.dims = dims;
  p.n = n;
  p.c = c;
  p.pad_limit = PadLimit::none;
  set_window(p, {in, k, s, pad_begin, pad_end, dil});
  finalize(p);
  EXPECT_EQ(validate(p), "") << to_string(p);
  return p;
}

// The oracle's answer for hand-made x and dy.
std::shared_ptr<const Expected> expected_for(const Problem& p, std::vector<double> x, std::vector<double> dy) {
  Expected e;
  e.data.x = std::move(x);
  e.data.dy = std::move(dy);
  e.indices = ref::forward(p, e.data.x).index;
  ref::Gradient g = ref::backward_max_indices(p, e.data.dy, e.indices);
  e.dx = std::move(g.dx);
  e.abs_sum = std::move(g.abs_sum);
  e.terms = std::move(g.terms);
  return std::make_shared<const Expected>(std::move(e));
}

std::vector<double> ramp(int64_t n, double start = 1) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i % 13);
  return v;
}

// The variant that must run p: a test names the body it is about and checks that its
// supports() admits the problem, so a drifting domain fails here rather than skipping the body.
void expect_supported(const char* name, const Problem& p) {
  const Variant* v = find_variant(name);
  ASSERT_NE(v, nullptr) << name;
  const Support s = v->supports(p, test::backend().kind());
  EXPECT_TRUE(s.ok) << name << " declined " << to_string(p) << ": " << s.why;
}

// Every max variant whose supports() admits p passes on it, and on exact data every variant's
// dx has the same bits; uncovered or unpicked inputs hold exactly +0. A variant that declines
// says why, and at least one variant of each argmax source (stored indices, x) runs.
void expect_all_pass(const Problem& p, std::shared_ptr<const Expected> e, const DataSpec& spec = {}, bool exact = true) {
  Backend& b = test::backend();
  std::vector<unsigned char> first;
  std::string first_name;
  int ran_stored = 0, ran_recompute = 0;
  for (const Variant& v : variants()) {
    if (!is_own(v) || v.op != Op::max) continue;
    const Support s = v.supports(p, b.kind());
    if (!s.ok) {
      EXPECT_FALSE(s.why.empty()) << v.name << " declined " << to_string(p) << " without a reason";
      continue;
    }
    PreparedRun run(b, v, p, spec, e);
    const Outcome o = run.verify();
    ASSERT_EQ(o.status, Status::pass) << o.message;
    ++(v.inputs == Inputs::dy_and_x ? ran_recompute : ran_stored);
    const std::vector<unsigned char>& got = run.output();
    const int es = dtype_size(p.dtype);
    for (int64_t i = 0; i < p.in_elems(); ++i) {
      if (e->terms[i] != 0) continue;
      std::vector<unsigned char> zero(es, 0);
      ASSERT_EQ(std::memcmp(got.data() + i * es, zero.data(), es), 0)
          << v.name << ": dx offset " << i << " gets no gradient but is not +0; " << to_string(p);
    }
    if (!exact) continue;
    if (first.empty()) {
      first = got;
      first_name = v.name;
    } else {
      EXPECT_EQ(got, first) << v.name << " and " << first_name << " differ on exact data; " << to_string(p);
    }
  }
  EXPECT_GE(ran_stored, 1) << to_string(p);
  EXPECT_GE(ran_recompute, 1) << to_string(p);
}

void expect_all_pass(const Problem& p, uint64_t seed, DataKind kind) {
  const DataSpec spec{seed, kind};
  expect_all_pass(p, std::make_shared<const Expected>(compute_expected(p, spec)), spec, kind == DataKind::ints);
}

TEST(MaxKernels, TiesPickFirstOrLastTap) {
  for (TieRule tie : {TieRule::first, TieRule::last}) {
    Problem p = make(2, 1, 2, {7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1});
    p.tie = tie;
    std::vector<double> x(static_cast<size_t>(p.in_elems()), 4.0);  // every window one big tie
    expect_all_pass(p, expected_for(p, x, ramp(p.out_elems())));
    Problem overlap = make(2, 1, 3, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
    overlap.tie = tie;
    expect_all_pass(overlap, 11, DataKind::ints);
  }
}

TEST(MaxKernels, NanAndMinusInfWindows) {
  // 1D windows of 3 (k3 s3): all NaN, NaN first, NaN middle, NaN last, two NaNs, all -inf,
  // -inf beside a number, a plain one.
  const double nan = NAN, inf = INFINITY;
  const std::vector<double> x = {nan, nan, nan, nan, 1, 2, 3, nan, 1, 3, 2, nan,
                                 nan, 5, nan, -inf, -inf, -inf, -inf, -2, -inf, 1, 7, 7};
  for (NanRule rule : {NanRule::propagate, NanRule::ignore})
    for (TieRule tie : {TieRule::first, TieRule::last}) {
      Problem p = make(1, 1, 1, {24}, {3}, {3}, {0}, {0});
      p.nan = rule;
      p.tie = tie;
      expect_all_pass(p, expected_for(p, x, ramp(p.out_elems())));
    }
  for (NanRule rule : {NanRule::propagate, NanRule::ignore}) {
    Problem p = make(3, 2, 3, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1});
    p.nan = rule;
    expect_all_pass(p, 5, DataKind::special);
  }
}

TEST(MaxKernels, WindowsEntirelyInPaddingRouteNothing) {
  // L=5, k=2, dilation 6, pads 3/3, stride 1: windows start at -3..1 with taps 6 apart, so the
  // windows at -1, 0 (partly) and 1 see at most one input and the one at -1 sees none.
  Problem one = make(1, 1, 2, {5}, {2}, {1}, {3}, {3}, {6});
  expect_all_pass(one, 3, DataKind::ints);
  // Asymmetric pads with dilation in 2D, plus ceil mode.
  Problem two = make(2, 2, 3, {6, 7}, {2, 3}, {2, 1}, {3, 0}, {1, 4}, {4, 2});
  expect_all_pass(two, 4, DataKind::ints);
  two.ceil_mode = true;
  finalize(two);
  expect_all_pass(two, 5, DataKind::ints);
}

TEST(MaxKernels, CeilOverhangWindows) {
  Problem l5 = make(1, 2, 3, {5}, {2}, {2}, {0}, {0});
  l5.ceil_mode = true;
  finalize(l5);
  ASSERT_EQ(l5.out[2], 3);
  expect_all_pass(l5, 1, DataKind::ints);
  Problem k3 = make(2, 1, 4, {13, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  k3.ceil_mode = true;
  finalize(k3);
  expect_all_pass(k3, 2, DataKind::ints);
}

TEST(MaxKernels, GapsAndTailsGetExactZero) {
  // Stride above the kernel leaves gaps; 10 = 3*3 + 1 leaves a tail no window reaches.
  expect_all_pass(make(2, 1, 3, {10, 10}, {2, 2}, {3, 3}, {0, 0}, {0, 0}), 1, DataKind::ints);
  expect_all_pass(make(3, 1, 2, {7, 5, 10}, {1, 2, 2}, {2, 3, 4}, {0, 1, 0}, {0, 0, 1}), 2, DataKind::ints);
  // Dilated taps with holes between them, windows still disjoint.
  expect_all_pass(make(1, 2, 2, {20}, {3}, {6}, {1}, {0}, {2}), 3, DataKind::ints);
}

TEST(MaxKernels, EveryIndexFormatAndType) {
  for (Layout layout : {Layout::channels_first, Layout::channels_last})
    for (IndexFormat f : {IndexFormat::plane, IndexFormat::global_row, IndexFormat::global_col, IndexFormat::window})
      for (IndexType t : {IndexType::i64, IndexType::i32, IndexType::u8}) {
        if (t == IndexType::u8 && f != IndexFormat::window) continue;
        for (bool disjoint : {false, true}) {
          Problem p = disjoint ? make(3, 2, 4, {4, 6, 8}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0})
                               : make(3, 2, 4, {5, 6, 8}, {3, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 1, 1}, {1, 2, 1});
          p.layout = layout;
          p.index_format = f;
          p.index_type = t;
          SCOPED_TRACE(to_string(p));
          expect_all_pass(p, 7, DataKind::ints);
        }
      }
}

TEST(MaxKernels, ChannelsLastScalarAndVectorPaths) {
  for (DType t : {DType::f32, DType::f16, DType::f64})
    for (int64_t c : {1, 3, 5, 8, 16, 24}) {  // vector widths are 4, 8 and 2 channels
      for (Problem p : {make(2, 2, c, {7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
                        make(2, 2, c, {8, 6}, {2, 2}, {2, 2}, {0, 0}, {0, 0})}) {
        p.layout = Layout::channels_last;
        p.dtype = t;
        SCOPED_TRACE(to_string(p));
        expect_all_pass(p, static_cast<uint64_t>(c), DataKind::ints);
      }
    }
}

TEST(MaxKernels, HalfTypesAccumulateInF32) {
  // Stride 1 and k3: up to 9 windows add into one dx element through the f32 workspace.
  for (DType t : {DType::f16, DType::bf16})
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      Problem p = make(2, 1, 8, {9, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
      p.dtype = t;
      p.layout = layout;
      SCOPED_TRACE(to_string(p));
      expect_all_pass(p, 9, DataKind::real);
      // Equal x everywhere under tie-last: the bottom-right input collects up to 9 real terms.
      p.tie = TieRule::last;
      const std::vector<double> x(static_cast<size_t>(p.in_elems()), 1.0);
      std::vector<double> dy(static_cast<size_t>(p.out_elems()));
      // Steps the dtype holds exactly: 1/512 for f16, 1/128 for bf16 (8 significant bits).
      const double step = t == DType::bf16 ? 1.0 / 128 : 1.0 / 512;
      for (size_t i = 0; i < dy.size(); ++i) dy[i] = 1.0 + step * static_cast<double>(i % 7);
      expect_all_pass(p, expected_for(p, x, dy), DataSpec{}, false);
    }
}

TEST(MaxKernels, RunsAlongWOfEveryLength) {
  // Channels-first gather works on runs of 16 bytes along W: widths around the run length,
  // with and without a partial last run.
  for (DType t : {DType::f32, DType::f16})
    for (int64_t w : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17}) {
      Problem p = make(2, 1, 3, {5, w}, {3, std::min<int64_t>(3, w + 2)}, {2, 1}, {1, 1}, {1, 1});
      p.dtype = t;
      SCOPED_TRACE(to_string(p));
      expect_all_pass(p, static_cast<uint64_t>(w), DataKind::ints);
    }
}

TEST(MaxKernels, HugeProblemsTakeTheInt64Path) {
  Problem huge = make(2, 1, 1, {46341, 46341}, {2, 2}, {2, 2}, {0, 0}, {0, 0});  // 2^31 + 9 inputs
  ASSERT_GT(huge.in_elems(), int64_t{1} << 31);
  EXPECT_FALSE(uses_int32(huge, IndexWidth::fit));
  Problem huge_box = make(2, 1, 1, {46341, 46341}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  // Both argmax sources have an int64 body; the int32-only ones decline by size.
  for (const Problem& p : {huge, huge_box}) {
    int stored = 0, recompute = 0;
    for (const Variant& v : variants()) {
      if (!is_own(v) || v.op != Op::max) continue;
      const Support s = v.supports(p, BackendKind::cpu);
      if (s.ok) ++(v.inputs == Inputs::dy_and_x ? recompute : stored);
      else EXPECT_FALSE(s.why.empty()) << v.name;
    }
    EXPECT_GE(stored, 1) << to_string(p);
    EXPECT_GE(recompute, 1) << to_string(p);
  }
  for (const char* name : {"max.gather.fixed.cf", "max.gather.fixed.row.cf", "max.gather.fixed.cl", "max.gather.block.cf",
                           "max.gather.block.cl"}) {
    const Support s = find_variant(name)->supports_problem(huge);
    EXPECT_FALSE(s.ok) << name;
    EXPECT_NE(s.why.find("int32"), std::string::npos) << name << ": " << s.why;
  }
  // Huge dilation keeps the element counts small but the window coordinates not.
  Problem dilated = make(1, 1, 1, {3}, {2}, {1}, {1}, {int64_t{1} << 31}, {int64_t{1} << 31});
  EXPECT_FALSE(uses_int32(dilated, IndexWidth::fit));
  const Problem small = make(2, 1, 1, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  EXPECT_TRUE(uses_int32(small, IndexWidth::fit));
  EXPECT_FALSE(uses_int32(small, IndexWidth::wide));
}

TEST(MaxKernels, Int64PathMatchesOnSmallProblems) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "forcing int64 arithmetic is a CPU-backend knob";
  Backend& b = test::backend();
  // The kernel library's CPU launches with int64 arithmetic forced, under each variant's own name.
  const std::vector<Variant> wide = cpu_max_variants_int64();
  std::vector<std::string> names;
  for (const Variant& v : wide) names.push_back(v.name);
  std::sort(names.begin(), names.end());
  const std::vector<std::string> expected = {
      "max.direct.recompute", "max.direct.rows",       "max.direct.stored", "max.gather.counted",
      "max.gather.recompute", "max.gather.rows",      "max.gather.stored",     "max.gather.stored.run", "max.gather.stream", "max.gather.taps",
      "max.gather.tiled",
      "max.scatter.recompute", "max.scatter.stored", "max.scatter.tiled"};
  ASSERT_EQ(names, expected) << "every max variant with an int64 path is listed";
  for (Problem p : {make(3, 2, 3, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1}),
                    make(2, 2, 4, {8, 6}, {2, 2}, {2, 2}, {0, 0}, {0, 0}),
                    make(3, 2, 3, {4, 35, 9}, {3, 3, 3}, {1, 1, 1}, {1, 0, 1}, {0, 1, 1}),
                    make(1, 2, 3, {29}, {3}, {1}, {1}, {1}, {4})})
    for (Layout layout : {Layout::channels_first, Layout::channels_last})
      for (IndexFormat f : {IndexFormat::plane, IndexFormat::global_col, IndexFormat::window}) {
        p.layout = layout;
        p.index_format = f;
        for (const Variant& v : wide) {
          const Outcome o = run_and_verify(b, v, p, DataSpec{3, DataKind::special});
          if (o.status == Status::unsupported) EXPECT_FALSE(v.supports(p, b.kind()).ok) << o.message;
          else EXPECT_EQ(o.status, Status::pass) << o.message;
        }
      }
}

TEST(MaxKernels, FixedWindowFastPath) {
  // max.gather.fixed.cf and .cl compile k3s2, k2s2 and k3s1 windows without dilation in (and
  // max.gather.fixed.row.cf channels-first k3s1): 2D and 3D, ceil overhang, widths with and
  // without a short last run, odd and even H, plane and global_row indices, both layouts
  // (channels-last with C a multiple of the vector width).
  struct Window {
    int64_t k, s, pad;
  };
  for (DType t : {DType::f32, DType::f16})
    for (Window win : {Window{3, 2, 1}, Window{2, 2, 0}, Window{3, 1, 1}, Window{3, 2, 0}})
      for (int64_t w : {4, 7, 8, 13, 16})
        for (bool ceil : {false, true})
          for (int dims : {2, 3})
            for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
              // Odd and even H: work items cover two rows, the last one may hold only one.
              const int64_t h = 5 + w % 2;
              Problem p = dims == 2 ? make(2, 2, 3, {h, w}, {win.k, win.k}, {win.s, win.s}, {win.pad, win.pad},
                                           {win.pad, win.pad})
                                    : make(3, 1, 2, {5, h - 1, w}, {win.k, win.k, win.k}, {win.s, win.s, win.s},
                                           {win.pad, win.pad, win.pad}, {win.pad, win.pad, win.pad});
              p.dtype = t;
              p.layout = layout;
              if (layout == Layout::channels_last) p.c = 8;
              p.ceil_mode = ceil;
              p.index_format = w % 2 ? IndexFormat::global_row : IndexFormat::plane;
              p.tie = w % 4 == 0 ? TieRule::last : TieRule::first;
              finalize(p);
              SCOPED_TRACE(to_string(p));
              expect_supported(layout == Layout::channels_last ? "max.gather.fixed.cl" : "max.gather.fixed.cf", p);
              if (layout == Layout::channels_first && win.s == 1) expect_supported("max.gather.fixed.row.cf", p);
              expect_all_pass(p, static_cast<uint64_t>(w + dims), DataKind::ints);
            }
}

TEST(MaxKernels, K3S2Blocks) {
  // The k3s2 block items: max.gather.block.cl's channels-last strips of positions for V
  // channels, and max.gather.block.cf's channels-first 3D runs on two D slices. Several images,
  // channel groups and D slices, odd and even D, H and W (an item's last slice, row or pair may
  // lie past the tensor), channels-last widths of one short strip and of a full strip plus a
  // short one, pads 0, 1 and 2 (both parities, the first window slot before the output or not),
  // floor and ceil (overhang), plane and global_row indices.
  for (DType t : {DType::f32, DType::f16})
    for (Layout layout : {Layout::channels_first, Layout::channels_last})
      for (int64_t pad : {0, 1, 2})
        for (bool ceil : {false, true})
          for (int dims : {2, 3})
            for (int64_t w : {5, 6, 13}) {
              Problem p = dims == 2 ? make(2, 3, 24, {w + 1, w}, {3, 3}, {2, 2}, {pad, pad}, {pad, pad})
                                    : make(3, 2, 16, {w - 1, w + 1, w}, {3, 3, 3}, {2, 2, 2}, {pad, pad, pad},
                                           {pad, pad, pad});
              p.dtype = t;
              p.layout = layout;
              p.ceil_mode = ceil;
              p.index_format = w % 2 ? IndexFormat::global_row : IndexFormat::plane;
              finalize(p);
              SCOPED_TRACE(to_string(p));
              if (layout == Layout::channels_last) expect_supported("max.gather.block.cl", p);
              else if (dims == 3) expect_supported("max.gather.block.cf", p);
              expect_all_pass(p, static_cast<uint64_t>(w + dims + pad), DataKind::ints);
            }
  // Pads of mixed parity across axes are not the block items' (the others run them).
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    Problem p = make(3, 1, 8, {7, 9, 10}, {3, 3, 3}, {2, 2, 2}, {1, 0, 1}, {0, 1, 1});
    p.layout = layout;
    finalize(p);
    SCOPED_TRACE(to_string(p));
    for (const char* name : {"max.gather.block.cf", "max.gather.block.cl"})
      EXPECT_FALSE(find_variant(name)->supports(p, test::backend().kind()).ok) << name;
    expect_all_pass(p, 5, DataKind::ints);
  }
}

TEST(MaxKernels, StreamTilesAndChunks) {
  // max.gather.stream (k3 s1, padding 0 or 1): several 32 x 32 tiles with partial ones at the
  // H and W edges, D cut into chunks of one plane, of two (C = 300) and not at all (C = 1100),
  // asymmetric padding, plane / global_row / window indices of every type, ties both ways.
  // Blocks fitted to their tile (all but the last two cases) and, for the 3D walks of 24 x 30
  // and 31 x 32 tiles, the fixed layouts of pitch 30 and 34 (StreamGeom::fixed_pitch).
  const Variant* stream = find_variant("max.gather.stream");
  ASSERT_NE(stream, nullptr);
  struct Case {
    int64_t c;
    std::vector<int64_t> in;
  };
  int n = 0;
  for (Case k : {Case{1, {7, 40, 70}}, Case{300, {5, 6, 9}}, Case{1100, {3, 4, 5}}, Case{2, {33, 65}}, Case{1, {3, 60, 70}}, Case{1, {3, 64, 62}}})
    for (int64_t pe : {0, 1}) {
      const int dims = static_cast<int>(k.in.size());
      std::vector<int64_t> three(dims, 3), one(dims, 1), begin(dims, 1), end(dims, 1);
      for (int i = 0; i < dims; ++i) end[i] = i % 2 ? pe : 1 - pe;
      begin[dims - 1] = pe;
      Problem p = make(dims, 1, k.c, k.in, three, one, begin, end);
      static constexpr IndexFormat kFormats[] = {IndexFormat::plane, IndexFormat::global_row, IndexFormat::window};
      p.index_format = kFormats[n % 3];
      p.index_type = n % 2 ? IndexType::i32 : p.index_format == IndexFormat::window ? IndexType::u8 : IndexType::i64;
      p.tie = n % 2 ? TieRule::last : TieRule::first;
      ++n;
      finalize(p);
      SCOPED_TRACE(to_string(p));
      const Support s = stream->supports(p, test::backend().kind());
      ASSERT_TRUE(s.ok) << s.why;
      expect_all_pass(p, static_cast<uint64_t>(n), DataKind::ints);
    }
}

// Variants `first` and `second` both run p (their supports() admit it), pass against the oracle
// and agree bit for bit: deterministic max variants all sum in row-major window order.
void expect_pair_agrees(const char* first, const char* second, const Problem& p, const DataSpec& spec,
                        const std::shared_ptr<const Expected>& e) {
  Backend& b = test::backend();
  const Variant* one = find_variant(first);
  const Variant* two = find_variant(second);
  ASSERT_NE(one, nullptr) << first;
  ASSERT_NE(two, nullptr) << second;
  ASSERT_TRUE(one->supports(p, b.kind()).ok) << first;
  ASSERT_TRUE(two->supports(p, b.kind()).ok) << second;
  PreparedRun run_one(b, *one, p, spec, e), run_two(b, *two, p, spec, e);
  const Outcome o1 = run_one.verify();
  ASSERT_EQ(o1.status, Status::pass) << o1.message;
  const Outcome o2 = run_two.verify();
  ASSERT_EQ(o2.status, Status::pass) << o2.message;
  EXPECT_EQ(run_one.output(), run_two.output()) << first << " and " << second << " differ";
}

void expect_counted_and_tiled_agree(const Problem& p, const DataSpec& spec, const std::shared_ptr<const Expected>& e) {
  expect_pair_agrees("max.gather.counted", "max.gather.tiled", p, spec, e);
}

// max.gather.counted's three kinds of position, on real data where positions are named by no
// window, by one and by several (each kind checked present in the oracle's term counts): SPP-like
// k5 s1, a dilated k3, a 3D k3, channels-last, several tiles and planes per tile on the CPU budget.
// Its dx passes and equals max.gather.tiled's bit for bit.
TEST(MaxKernels, CountedPositionsNamedByNoneOneOrSeveral) {
  std::vector<Problem> problems = {make(2, 2, 3, {19, 19}, {5, 5}, {1, 1}, {2, 2}, {2, 2}),
                                   make(2, 1, 2, {21, 17}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {2, 2}),
                                   make(3, 1, 2, {5, 9, 11}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
                                   make(1, 2, 3, {300}, {13}, {1}, {6}, {6})};
  Problem cl = make(2, 2, 20, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  cl.layout = Layout::channels_last;
  problems.push_back(cl);
  for (Problem p : problems) {
    SCOPED_TRACE(to_string(p));
    const DataSpec spec{11, DataKind::real};
    const auto e = std::make_shared<const Expected>(compute_expected(p, spec));
    int64_t kinds[3] = {0, 0, 0};
    for (int64_t t : e->terms) ++kinds[std::min<int64_t>(t, 2)];
    EXPECT_GT(kinds[0], 0);
    EXPECT_GT(kinds[1], 0);
    EXPECT_GT(kinds[2], 0);
    expect_counted_and_tiled_agree(p, spec, e);
  }
}

// max.scatter.tiled's warps that combine the adds of lanes naming one position (on NVIDIA GPUs;
// the CPU backend adds per window): windows along W that hold each position five deep or more,
// read as one run (19x19 planes) and as boxes of a plane cut into tiles on either budget (160x160),
// 1D, and a stride of 2 under a k11; on real data and on small integers (ties: long runs of
// windows naming one position).
TEST(MaxKernels, ScatterTiledCombinesLanesNamingOnePosition) {
  Backend& b = test::backend();
  const Variant* v = find_variant("max.scatter.tiled");
  ASSERT_NE(v, nullptr);
  for (const Problem& p : {make(2, 2, 3, {19, 19}, {5, 5}, {1, 1}, {2, 2}, {2, 2}),
                           make(2, 1, 2, {160, 160}, {9, 9}, {1, 1}, {4, 4}, {4, 4}),
                           make(1, 2, 3, {301}, {13}, {1}, {6}, {6}),
                           make(2, 1, 3, {23, 45}, {3, 11}, {1, 2}, {1, 5}, {1, 5})}) {
    SCOPED_TRACE(to_string(p));
    ASSERT_TRUE(combines_along_w(p));
    expect_supported("max.scatter.tiled", p);
    for (const DataKind kind : {DataKind::real, DataKind::ints}) {
      const Outcome o = run_and_verify(b, *v, p, DataSpec{7, kind});
      EXPECT_EQ(o.status, Status::pass) << o.message;
    }
  }
}

// max.scatter.tiled and max.gather.counted read their channels-first window runs in quads of four
// windows (scatter.tiled writes its tiles in quads of positions too), one access a quad where dy,
// the indices and dx are aligned for it (window_quad_access), element by element where they are
// not. With every buffer one element past its alignment, on integer data, dx is the oracle's
// exactly, for 64- and 32-bit indices.
TEST(MaxKernels, TiledQuadsOnUnalignedBuffers) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "drives the kernel directly on the host";
  using PlanFor = bool (*)(const Problem&, size_t, const MaxTileBudget&, MaxTileShape*);
  const std::pair<const char*, PlanFor> variants[] = {{"max.scatter.tiled", plan_max_scatter_tiled},
                                                      {"max.gather.counted", plan_max_counted}};
  for (const auto& [name, plan_for] : variants) {
    const Variant* v = find_variant(name);
    ASSERT_NE(v, nullptr);
    for (const IndexType t : {IndexType::i64, IndexType::i32}) {
      Problem p = make(2, 2, 3, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
      p.index_type = t;
      SCOPED_TRACE(std::string(name) + " " + to_string(p));
      MaxTileShape plan;
      ASSERT_TRUE(plan_for(p, 4, kMaxTiledCpuBudget, &plan));
      ASSERT_TRUE(plan.window_run);
      const Expected e = compute_expected(p, DataSpec{3, DataKind::ints});
      const size_t out = static_cast<size_t>(p.out_elems()), in = static_cast<size_t>(p.in_elems());
      std::vector<float> dy(1 + out), dx(1 + in, std::nanf(""));
      std::vector<int64_t> i64(1 + out);
      std::vector<int32_t> i32(1 + out);
      for (size_t i = 0; i < out; ++i) {
        dy[1 + i] = static_cast<float>(e.data.dy[i]);
        i64[1 + i] = e.indices[i];
        i32[1 + i] = static_cast<int32_t>(e.indices[i]);
      }
      BwdBuffers b;
      b.dy = dy.data() + 1;
      b.indices = t == IndexType::i64 ? static_cast<const void*>(i64.data() + 1) : static_cast<const void*>(i32.data() + 1);
      b.dx = dx.data() + 1;
      ASSERT_FALSE(window_quad_access(p, b));
      v->launch_cpu(test::backend(), p, b);
      int nonzero = 0;
      for (size_t i = 0; i < in; ++i) {
        ASSERT_EQ(static_cast<double>(dx[1 + i]), e.dx[i]) << "dx[" << i << "]";
        nonzero += e.dx[i] != 0;
      }
      EXPECT_GT(nonzero, 0);
      EXPECT_TRUE(std::isnan(dx[0])) << "a write before dx";
    }
  }
}

// max.gather.taps on planes too large for one tile on the GPU's budget as well as the CPU's: slabs
// along H (an 80x80 plane, and a dilated 90x90 one), along D (3D) and along W (a 1D row of 9,000),
// each with a partial last slab on one of the two budgets. On real data (positions named by
// several windows) its dx passes and equals max.gather.counted's bit for bit (the same
// row-major window order); each problem is checked to be cut into slabs.
TEST(MaxKernels, TapsSlabsOfLargePlanes) {
  const MaxTapsBudget& budget = test::backend().kind() == BackendKind::cpu ? kMaxTapsCpuBudget : kMaxTapsGpuBudget;
  for (const Problem& p : {make(2, 1, 3, {80, 80}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
                           make(2, 2, 1, {90, 90}, {3, 3}, {1, 1}, {1, 0}, {2, 1}, {2, 2}),
                           make(3, 1, 2, {7, 30, 30}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
                           make(1, 2, 2, {9000}, {5}, {1}, {2}, {2})}) {
    SCOPED_TRACE(to_string(p));
    MaxTapsPlan plan;
    ASSERT_TRUE(plan_max_taps(p, 4, budget, &plan));
    EXPECT_GT(plan.slabs, 1);
    const DataSpec spec{5, DataKind::real};
    expect_pair_agrees("max.gather.taps", "max.gather.counted", p, spec,
                       std::make_shared<const Expected>(compute_expected(p, spec)));
  }
}

// Calls check(p) for each problem p of `problems`, made channels-last, with every index format
// and type (u8 in the window format only), the problem traced.
template <class Check>
void for_each_channels_last_encoding(std::initializer_list<Problem> problems, Check&& check) {
  for (Problem p : problems)
    for (IndexFormat f : {IndexFormat::plane, IndexFormat::global_row, IndexFormat::window})
      for (IndexType t : {IndexType::i64, IndexType::i32, IndexType::u8}) {
        if (t == IndexType::u8 && f != IndexFormat::window) continue;
        p.layout = Layout::channels_last;
        p.index_format = f;
        p.index_type = t;
        SCOPED_TRACE(to_string(p));
        check(p);
      }
}

// Channels-last planes small enough to be one tile: max.gather.tiled and max.gather.counted read
// their windows as one run of (window, lane) and write dx as one run of (position, lane)
// (max_tile_walk.hpp), with a partial last lane tile on the CPU budget, in every index type and
// on both decodes (plane indices of undilated windows, and the rest). Both pass and agree bit for
// bit; each problem is checked to take the run, so a drifting plan fails here.
TEST(MaxKernels, ChannelsLastWholePlanesRunAsOne) {
  const bool gpu = test::backend().kind() == BackendKind::gpu;
  const MaxTileBudget& budget = gpu ? kMaxTiledGpuBudget : kMaxTiledCpuBudget;
  for_each_channels_last_encoding(
      {make(1, 2, 5, {12}, {5}, {1}, {2}, {2}), make(2, 3, 3, {5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
       make(2, 2, 5, {6, 5}, {3, 2}, {1, 1}, {1, 0}, {1, 1}, {1, 2})},
      [&](const Problem& p) {
        MaxTileShape plan;
        ASSERT_TRUE(plan_max_counted(p, 4, budget, &plan));
        EXPECT_TRUE(plan.window_run);
        if (!gpu) {
          EXPECT_NE(p.c % plan.lanes, 0) << plan.lanes << " lanes";
        }
        MaxTilePlan tiled_plan;
        ASSERT_TRUE(plan_max_tiles(p, 4, budget, &tiled_plan));
        EXPECT_TRUE(tiled_plan.window_run);
        const DataSpec spec{5, DataKind::real};
        expect_counted_and_tiled_agree(p, spec, std::make_shared<const Expected>(compute_expected(p, spec)));
      });
}

// Channels-last 1D and 2D runs whose lane tile divides C: max.gather.tiled reads each window's
// lanes in packs (max_tile_walk.hpp, walk_lane_packs_as), of 2 on the CPU budget (two lanes a
// tile) and of 4 on the GPU's, in every index type and on both decodes. Each problem is checked to
// take the packs; tiled passes and agrees bit for bit with max.gather.counted, which reads one
// lane at a time.
TEST(MaxKernels, ChannelsLastRunsReadLanePacks) {
  const bool gpu = test::backend().kind() == BackendKind::gpu;
  const MaxTileBudget& budget = gpu ? kMaxTiledGpuBudget : kMaxTiledCpuBudget;
  for_each_channels_last_encoding(
      {make(1, 3, 8, {12}, {5}, {1}, {2}, {2}), make(2, 3, 4, {5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}),
       make(2, 2, 8, {6, 5}, {3, 2}, {1, 1}, {1, 0}, {1, 1}, {1, 2})},
      [&](const Problem& p) {
        MaxTilePlan plan;
        ASSERT_TRUE(plan_max_tiles(p, 4, budget, &plan));
        EXPECT_TRUE(plan.window_run);
        EXPECT_EQ(max_tile_lane_pack(p, plan, BwdBuffers{}), gpu ? 4 : 2) << plan.lanes << " lanes";
        const DataSpec spec{5, DataKind::real};
        expect_counted_and_tiled_agree(p, spec, std::make_shared<const Expected>(compute_expected(p, spec)));
      });
}

// Indices no window of the oracle produces: negative, past the plane, another plane's, an
// in-bounds position that is not a tap of its window, and one whose low 32 bits name a tap but
// whose high word is not 0 (an int32 truncation would follow it). Every stored-index variant
// that supports the problem skips them all: dx stays all zero and nothing outside dx is written.
TEST(MaxKernels, ForeignIndicesAreSkipped) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "drives the kernels directly on the host";
  Backend& b = test::backend();
  constexpr int64_t kHigh = int64_t{1} << 32;
  auto expect_skipped = [&](const Problem& p, const std::vector<int64_t>& idx) {
    ASSERT_EQ(static_cast<int64_t>(idx.size()), p.out_elems());
    const int64_t band = 16;  // 64 bytes: dx keeps the 16-byte alignment of its allocation
    const std::vector<float> dy(static_cast<size_t>(p.out_elems()), 1.0f);
    int ran = 0;
    for (const Variant& v : variants()) {
      if (!is_own(v) || v.op != Op::max || v.inputs != Inputs::dy_and_indices || !v.supports(p, b.kind()).ok) continue;
      ASSERT_EQ(v.workspace_bytes(p), 0u) << v.name << ": f32 needs no workspace";
      std::vector<float> dx(static_cast<size_t>(p.in_elems() + 2 * band), 7.0f);
      BwdBuffers buf;
      buf.dy = dy.data();
      buf.indices = idx.data();
      buf.dx = dx.data() + band;
      v.launch(b, p, buf);
      ++ran;
      for (int64_t i = 0; i < band; ++i) {
        EXPECT_EQ(dx[i], 7.0f) << v.name;
        EXPECT_EQ(dx[dx.size() - 1 - i], 7.0f) << v.name;
      }
      for (int64_t i = 0; i < p.in_elems(); ++i) EXPECT_EQ(dx[band + i], 0.0f) << v.name << ": offset " << i;
    }
    EXPECT_GE(ran, 2) << to_string(p);
  };
  Problem p = make(2, 1, 2, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  p.index_format = IndexFormat::global_row;
  // Plane 0's windows cover {0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15};
  // plane 1's global indices are 16 more.
  expect_skipped(p, {-5, 1000, 16 + 0, 5, kHigh + 16, 3 * 16, 2, 15});
  // k3s2p1, every window's stored index its own top-left in-bounds tap plus 2^32: in 2D and 3D,
  // channels-first and channels-last (the fixed, block, run and generic items all see it).
  for (int dims : {2, 3})
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      Problem q = dims == 2 ? make(2, 2, 4, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1})
                            : make(3, 1, 4, {5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1});
      q.layout = layout;
      SCOPED_TRACE(to_string(q));
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < q.out_elems(); ++i) {
        const int64_t pos = layout == Layout::channels_last ? i / q.c : i % q.out_plane();
        int64_t o[kAxes] = {0, 0, pos % q.out[2]};
        o[1] = pos / q.out[2] % q.out[1];
        o[0] = pos / q.out[2] / q.out[1] % q.out[0];
        int64_t lin = 0;
        for (int a = 0; a < kAxes; ++a) lin = lin * q.in[a] + std::max<int64_t>(0, o[a] * 2 - q.pad_begin[a]);
        idx.push_back(kHigh + lin);
      }
      expect_skipped(q, idx);
    }
  // Stride 1 with padding, every plane-format index one past its plane: the windows whose span
  // reaches past the last row at column 0 must not take it for the tap there (the run walk's
  // range check, named_in_run in max_tile_walk.hpp; the fuzz's foreign indices lie further out).
  const Problem run = make(2, 1, 3, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  expect_skipped(run, std::vector<int64_t>(static_cast<size_t>(run.out_elems()), run.in_plane()));
}

// Each split-off body has its own name and exact domain: a problem inside it is supported, one
// a single parameter outside is not, and the reason names that parameter.
TEST(MaxKernels, EachVariantAdmitsItsDomainAndNamesWhatIsOutside) {
  struct Case {
    const char* variant;
    Problem inside;
    void (*step_out)(Problem&);
    const char* why;  // a word the reason must contain
  };
  Problem cf2 = make(2, 2, 3, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  Problem cl2 = cf2;
  cl2.layout = Layout::channels_last;
  cl2.c = 8;
  Problem cf3 = make(3, 1, 2, {5, 6, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1});
  Problem box = make(2, 1, 2, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1});
  Problem disjoint = make(2, 1, 2, {8, 6}, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  Problem row = make(1, 2, 3, {29}, {4}, {4}, {1}, {1}, {1});
  const std::vector<Case> cases = {
      {"max.gather.stored.run", cf2, [](Problem& p) { p.index_format = IndexFormat::global_col; }, "index_format"},
      {"max.gather.stored.run", cf2, [](Problem& p) { p.layout = Layout::channels_last; }, "layout"},
      {"max.gather.fixed.cf", cf2, [](Problem& p) { p.dtype = DType::f64; }, "dtype"},
      {"max.gather.fixed.cf", cf2, [](Problem& p) { p.index_type = IndexType::i32; }, "index_type"},
      {"max.gather.fixed.cf", cf2, [](Problem& p) { p.dilation[2] = 2; }, "window"},
      {"max.gather.fixed.row.cf", box, [](Problem& p) { p.stride[1] = p.stride[2] = 2; }, "window"},
      {"max.gather.fixed.row.cf", box, [](Problem& p) { p.layout = Layout::channels_last; }, "layout"},
      {"max.gather.fixed.cl", cl2, [](Problem& p) { p.c = 6; }, "C"},
      {"max.gather.fixed.cl", cl2, [](Problem& p) { p.stride[1] = 1; }, "window"},
      // D of kernel 1 is admitted as a copy axis (stride 1, no padding), not with stride 2.
      {"max.gather.block.cf", cf3, [](Problem& p) { p.kernel[0] = 1, p.stride[0] = 2, p.pad_begin[0] = p.pad_end[0] = 0; }, "window"},
      {"max.gather.block.cf", cf3, [](Problem& p) { p.kernel[0] = 1, p.stride[0] = 1, p.pad_begin[0] = p.pad_end[0] = 1; }, "window"},
      {"max.gather.block.cf", cf3, [](Problem& p) { p.pad_begin[0] = 0; }, "padding"},
      {"max.gather.block.cl", cl2, [](Problem& p) { p.kernel[1] = 2; }, "window"},
      {"max.gather.block.cl", cl2, [](Problem& p) { p.pad_begin[1] = p.pad_end[1] = 2; }, "padding"},
      {"max.gather.stream", box, [](Problem& p) { p.index_format = IndexFormat::global_col; }, "index_format"},
      {"max.gather.stream", box, [](Problem& p) { p.pad_begin[2] = p.pad_end[2] = 2; }, "window"},
      {"max.direct.stored", disjoint, [](Problem& p) { p.stride[2] = 1; }, "overlap"},
      {"max.direct.recompute", disjoint, [](Problem& p) { p.kernel[1] = 3; }, "overlap"},
      {"max.direct.rows", row, [](Problem& p) { p.stride[2] = 3; }, "overlap"},
      {"max.direct.rows", row, [](Problem& p) { p.layout = Layout::channels_last; }, "layout"},
  };
  Problem copy_d = cf3;  // I3D's 1x3x3: D a copy axis
  copy_d.kernel[0] = 1, copy_d.stride[0] = 1, copy_d.pad_begin[0] = copy_d.pad_end[0] = 0;
  finalize(copy_d);
  expect_supported("max.gather.block.cf", copy_d);
  Problem copy_d_cl = copy_d;
  copy_d_cl.layout = Layout::channels_last;
  copy_d_cl.c = 8;
  expect_supported("max.gather.block.cl", copy_d_cl);
  for (const Case& c : cases) {
    const Variant* v = find_variant(c.variant);
    ASSERT_NE(v, nullptr) << c.variant;
    expect_supported(c.variant, c.inside);
    Problem out = c.inside;
    c.step_out(out);
    finalize(out);
    ASSERT_EQ(validate(out), "") << to_string(out);
    const Support s = v->supports(out, test::backend().kind());
    EXPECT_FALSE(s.ok) << c.variant << " admits " << to_string(out);
    EXPECT_NE(s.why.find(c.why), std::string::npos) << c.variant << ": '" << s.why << "' should name " << c.why;
    EXPECT_EQ(s.why.find('\n'), std::string::npos) << c.variant << ": " << s.why;
  }
}

// launch() runs its own body or throws naming the variant: a direct call on a problem outside
// the domain, or with a buffer a packed item cannot take, launches nothing.
TEST(MaxKernels, LaunchThrowsInsteadOfFallingBack) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "drives the kernels directly on the host";
  Problem p = make(2, 1, 8, {6, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  p.layout = Layout::channels_last;
  alignas(16) static float dy[1 + 9 * 8], dx[1 + 36 * 8];
  alignas(16) static int64_t idx[9 * 8];
  BwdBuffers b;
  b.dy = dy;
  b.indices = idx;
  b.dx = dx + 1;  // 4 bytes past a 16-byte boundary
  const auto message = [](auto launch) -> std::string {
    try {
      launch();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  // The registered CPU launches call the variants' launch() directly, with no supports() before it.
  Backend& backend = test::backend();
  for (const char* name : {"max.gather.fixed.cl", "max.gather.stored.run"}) ASSERT_NE(find_variant(name), nullptr) << name;
  const auto launch = [&](const char* name, const Problem& q) { find_variant(name)->launch_cpu(backend, q, b); };
  const std::string unaligned = message([&] { launch("max.gather.fixed.cl", p); });
  EXPECT_NE(unaligned.find("max.gather.fixed.cl"), std::string::npos) << unaligned;
  EXPECT_NE(unaligned.find("dx is not 16-byte aligned"), std::string::npos) << unaligned;
  b.dx = dx;
  Problem f64 = p;
  f64.dtype = DType::f64;
  const std::string outside = message([&] { launch("max.gather.fixed.cl", f64); });
  EXPECT_NE(outside.find("max.gather.fixed.cl"), std::string::npos) << outside;
  EXPECT_NE(outside.find("dtype"), std::string::npos) << outside;
  const std::string cl_run = message([&] { launch("max.gather.stored.run", p); });
  EXPECT_NE(cl_run.find("max.gather.stored.run"), std::string::npos) << cl_run;
}

// Index encoding and loading keep 64-bit values: no tensor is allocated, only the geometry of
// one with n * c * plane > 2^32 and a host array of two stored indices past 2^31.
TEST(MaxKernels, IndicesPast2To31StayExact) {
  Problem p = make(3, 2, 3, {1024, 1024, 1024}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {0, 0, 0});
  ASSERT_GT(p.in_elems(), int64_t{1} << 32);
  ASSERT_FALSE(uses_int32(p, IndexWidth::fit));
  MaxGeom<int64_t> g = make_max_geom<int64_t>(p, 1);
  const int64_t q[kAxes] = {1023, 1022, 1021};
  const int64_t lin = (1023 * 1024 + 1022) * 1024 + 1021, nc = 5, plane = int64_t{1} << 30;
  g.format = IndexFormat::global_row;
  EXPECT_EQ(encode_position(g, q, lin, nc), nc * plane + lin);
  g.format = IndexFormat::global_col;
  EXPECT_EQ(encode_position(g, q, lin, nc), nc * plane + 1023 + 1022 * 1024 + int64_t{1021} * 1024 * 1024);
  g.format = IndexFormat::plane;
  EXPECT_EQ(encode_position(g, q, lin, nc), lin);
  const int64_t stored[2] = {(int64_t{1} << 31) + 5, (int64_t{1} << 32) + 7};
  int64_t got = 0;
  load_indices<1>(stored, IndexType::i64, int64_t{0}, &got);
  EXPECT_EQ(got, stored[0]);
  load_indices<1>(stored, IndexType::i64, int32_t{1}, &got);
  EXPECT_EQ(got, stored[1]);
}

}  // namespace
}  // namespace pg
