// The max-pool backward variants on the edges random problems reach only by luck: hand-built x
// with ties, NaN and -inf windows, windows entirely in the padding, ceil overhang, gaps, every
// index format and type, both channels-last paths, half types through the f32 workspace, the
// int64 dispatch, and stored indices that name no tap of their window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/backend_main.hpp"
#include "kernels/common/exec.hpp"
#include "kernels/max/max_direct_recompute.hpp"
#include "kernels/max/max_direct_stored.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_gather_recompute.hpp"
#include "kernels/max/max_gather_stored.hpp"
#include "kernels/max/max_gather_stream.hpp"
#include "kernels/max/max_scatter_recompute.hpp"
#include "kernels/max/max_scatter_stored.hpp"
#include "kernels/common/plane_stream.hpp"
#include "reference/pool_reference.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"

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
  auto put = [&](int64_t* dst, const std::vector<int64_t>& v) {
    for (size_t i = 0; i < v.size(); ++i) dst[kAxes - dims + i] = v[i];
  };
  put(p.in, in);
  put(p.kernel, k);
  put(p.stride, s);
  put(p.pad_begin, pad_begin);
  put(p.pad_end, pad_end);
  put(p.dilation, dil);
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

bool is_direct(const Variant& v) { return v.name.find(".direct.") != std::string::npos; }

// Variants built for one window shape may decline the others; nothing else may decline.
bool may_decline(const Variant& v, const Problem& p) {
  if (is_direct(v)) return !p.windows_disjoint();
  std::string why;
  if (v.name == "max.gather.stream") return !stream_applies(p, &why) || p.index_format == IndexFormat::global_col;
  return false;
}

// Every max variant passes on p (direct ones may decline overlapping windows, nothing else may
// decline), and on exact data every variant's dx has the same bits; uncovered or unpicked
// inputs hold exactly +0.
void expect_all_pass(const Problem& p, std::shared_ptr<const Expected> e, const DataSpec& spec = {}, bool exact = true) {
  Backend& b = test::backend();
  std::vector<unsigned char> first;
  std::string first_name;
  int ran = 0;
  for (const Variant& v : variants()) {
    if (v.op != Op::max) continue;
    const Support s = v.supports(p, b.kind());
    if (!s.ok) {
      EXPECT_TRUE(may_decline(v, p)) << v.name << " declined " << to_string(p) << ": " << s.why;
      continue;
    }
    PreparedRun run(b, v, p, spec, e);
    const Outcome o = run.verify();
    ASSERT_EQ(o.status, Status::pass) << o.message;
    ++ran;
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
  EXPECT_GE(ran, 4) << to_string(p);
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
  for (const Variant& v : variants()) {
    if (v.op != Op::max) continue;
    EXPECT_TRUE(v.supports(huge, BackendKind::cpu).ok || may_decline(v, huge)) << v.name;
    EXPECT_TRUE(v.supports(huge_box, BackendKind::cpu).ok || may_decline(v, huge_box)) << v.name;
  }
  // Huge dilation keeps the element counts small but the window coordinates not.
  Problem dilated = make(1, 1, 1, {3}, {2}, {1}, {1}, {int64_t{1} << 31}, {int64_t{1} << 31});
  EXPECT_FALSE(uses_int32(dilated, IndexWidth::fit));
  const Problem small = make(2, 1, 1, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  EXPECT_TRUE(uses_int32(small, IndexWidth::fit));
  EXPECT_FALSE(uses_int32(small, IndexWidth::wide));
}

// The CPU backend's launch with int64 arithmetic forced, under the variant's own name.
template <class V>
Variant forced_wide() {
  Variant v = *find_variant(V::name);
  v.launch_cpu = [](Backend&, const Problem& p, const BwdBuffers& b) { V::launch_with(CpuExec{}, p, b, IndexWidth::wide); };
  return v;
}

TEST(MaxKernels, Int64PathMatchesOnSmallProblems) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "forcing int64 arithmetic is a CPU-backend knob";
  Backend& b = test::backend();
  const std::vector<Variant> wide = {forced_wide<MaxScatterStored>(), forced_wide<MaxGatherStored>(),
                                     forced_wide<MaxScatterRecompute>(), forced_wide<MaxGatherRecompute>(),
                                     forced_wide<MaxDirectStored>(), forced_wide<MaxDirectRecompute>(),
                                     forced_wide<MaxGatherStream>()};
  for (Problem p : {make(3, 2, 3, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1}),
                    make(2, 2, 4, {8, 6}, {2, 2}, {2, 2}, {0, 0}, {0, 0}),
                    make(3, 2, 3, {4, 35, 9}, {3, 3, 3}, {1, 1, 1}, {1, 0, 1}, {0, 1, 1})})
    for (Layout layout : {Layout::channels_first, Layout::channels_last})
      for (IndexFormat f : {IndexFormat::global_col, IndexFormat::window}) {
        p.layout = layout;
        p.index_format = f;
        for (const Variant& v : wide) {
          const Outcome o = run_and_verify(b, v, p, DataSpec{3, DataKind::special});
          if (o.status == Status::unsupported) EXPECT_TRUE(may_decline(v, p)) << o.message;
          else EXPECT_EQ(o.status, Status::pass) << o.message;
        }
      }
}

TEST(MaxKernels, FixedWindowFastPath) {
  // max.gather.stored compiles k3s2, k2s2 and k3s1 windows without dilation in: 2D and 3D,
  // ceil overhang, widths with and without a short last run, odd and even H, plane and
  // global_row indices, both layouts (channels-last takes its own path when C is a multiple of
  // the vector width).
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
              expect_all_pass(p, static_cast<uint64_t>(w + dims), DataKind::ints);
            }
}

TEST(MaxKernels, K3S2Blocks) {
  // max.gather.block's k3s2 items: channels-last strips of positions for V channels, and
  // channels-first 3D runs on two D slices. Several images, channel groups and D slices, odd and
  // even D, H and W (an item's last slice, row or pair may lie past the tensor), channels-last
  // widths of one short strip and of a full strip plus a short one, pads 0, 1 and 2 (both
  // parities, the first window slot before the output or not), floor and ceil (overhang), plane
  // and global_row indices.
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
              expect_all_pass(p, static_cast<uint64_t>(w + dims + pad), DataKind::ints);
            }
  // Pads of mixed parity across axes are left to max.gather.stored.
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    Problem p = make(3, 1, 8, {7, 9, 10}, {3, 3, 3}, {2, 2, 2}, {1, 0, 1}, {0, 1, 1});
    p.layout = layout;
    finalize(p);
    SCOPED_TRACE(to_string(p));
    expect_all_pass(p, 5, DataKind::ints);
  }
}

TEST(MaxKernels, StreamTilesAndChunks) {
  // max.gather.stream (k3 s1, padding 0 or 1): several 32 x 32 tiles with partial ones at the
  // H and W edges, D cut into chunks of one plane, of two (C = 300) and not at all (C = 1100),
  // asymmetric padding, plane / global_row / window indices of every type, ties both ways.
  const Variant* stream = find_variant("max.gather.stream");
  ASSERT_NE(stream, nullptr);
  struct Case {
    int64_t c;
    std::vector<int64_t> in;
  };
  int n = 0;
  for (Case k : {Case{1, {7, 40, 70}}, Case{300, {5, 6, 9}}, Case{1100, {3, 4, 5}}, Case{2, {33, 65}}})
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
      ASSERT_TRUE(stream->supports_problem(p).ok) << stream->supports_problem(p).why;
      expect_all_pass(p, static_cast<uint64_t>(n), DataKind::ints);
    }
}

// Indices no window of the oracle produces: negative, past the plane, another plane's, and an
// in-bounds position that is not a tap of its window. Each is skipped: dx stays all zero and
// nothing outside dx is written.
TEST(MaxKernels, ForeignIndicesAreSkipped) {
  if (test::backend().kind() != BackendKind::cpu) GTEST_SKIP() << "drives the kernels directly on the host";
  Problem p = make(2, 1, 2, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {0, 0});
  p.index_format = IndexFormat::global_row;
  const int64_t band = 16;
  std::vector<float> dy(static_cast<size_t>(p.out_elems()), 1.0f);
  // Plane 0's windows cover {0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15};
  // plane 1's global indices are 16 more.
  std::vector<int64_t> idx = {-5, 1000, 16 + 0, 5, -1, 3 * 16, 2, 15};
  ASSERT_EQ(static_cast<int64_t>(idx.size()), p.out_elems());
  auto run = [&](auto launch) {
    std::vector<float> dx(static_cast<size_t>(p.in_elems() + 2 * band), 7.0f);
    BwdBuffers b;
    b.dy = dy.data();
    b.indices = idx.data();
    b.dx = dx.data() + band;
    launch(b);
    for (int64_t i = 0; i < band; ++i) {
      EXPECT_EQ(dx[i], 7.0f);
      EXPECT_EQ(dx[dx.size() - 1 - i], 7.0f);
    }
    for (int64_t i = 0; i < p.in_elems(); ++i) EXPECT_EQ(dx[band + i], 0.0f) << "offset " << i;
  };
  run([&](const BwdBuffers& b) { MaxScatterStored::launch(CpuExec{}, p, b); });
  run([&](const BwdBuffers& b) { MaxGatherStored::launch(CpuExec{}, p, b); });
  run([&](const BwdBuffers& b) { MaxDirectStored::launch(CpuExec{}, p, b); });
}

}  // namespace
}  // namespace pg
