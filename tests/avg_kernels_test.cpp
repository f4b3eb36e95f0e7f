// Average-pool backward variants on the edge cases where frameworks disagree or kernels break:
// divisor conventions on the ceil overhang, negative divisor_override, padding with dilation,
// gaps, channels-last with C off the vector width, half types, tiles larger than one block's,
// bitwise agreement between variants on exact data, and the int32/int64 dispatch. Every case
// goes through run_and_verify against the oracle on the backend the binary was started with;
// the hand-computed cases also check the numbers themselves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tests/backend_main.hpp"
#include "kernels/avg/avg_geometry.hpp"
#include "src/registry.hpp"
#include "src/verify.hpp"
#include "kernels/common/numeric.hpp"

namespace pg {
namespace {

// An avg problem from its trailing spatial axes ({W}, {H, W} or {D, H, W}); window parameters
// apply to every given axis.
Problem avg_problem(int64_t n, int64_t c, std::initializer_list<int64_t> in, int64_t k, int64_t s, int64_t pad,
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
    if (v.op == Op::avg) out.push_back(&v);
  return out;
}

// Runs every avg variant that supports p on the test backend; each must pass. Returns how
// many ran, so a case can insist that someone did.
int verify_all(const Problem& p, DataKind kind = DataKind::ints, uint64_t seed = 1) {
  const std::string invalid = validate(p);
  EXPECT_EQ(invalid, "") << to_string(p);
  if (!invalid.empty()) return 0;
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
  return ran;
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

TEST(AvgKernels, CeilOverhangDivisorPerConvention) {
  // L=5, k=2, s=2, ceil: windows [0,1] [2,3] [4,5); the last one holds one input tap.
  // PyTorch (include_pad, clamped to input + pad) divides it by 1, full-kernel frameworks by 2.
  const std::vector<double> dy = {2, 4, 8};
  for (auto [rule, last] : {std::pair{Divisor::include_pad, 8.0}, {Divisor::full_kernel, 4.0}, {Divisor::exclude_pad, 8.0}}) {
    Problem p = avg_problem(1, 1, {5}, 2, 2, 0, rule);
    p.ceil_mode = true;
    finalize(p);
    ASSERT_EQ(p.out[2], 3);
    EXPECT_GE(verify_all(p), 3);
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
      EXPECT_GE(verify_all(p, DataKind::real), 3) << to_string(p);
    }
  }
}

TEST(AvgKernels, NegativeDivisorOverride) {
  Problem p = avg_problem(1, 2, {6, 7}, 3, 2, 1);
  p.has_divisor_override = true;
  p.divisor_override = -3;
  EXPECT_GE(verify_all(p), 3);
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
    EXPECT_GE(verify_all(p), 3) << to_string(p);
  }
  Problem q = avg_problem(1, 1, {7, 6, 9}, 3, 2, 1, Divisor::exclude_pad);
  q.dilation[0] = 3;
  q.pad_begin[2] = 2;
  q.pad_limit = PadLimit::none;
  q.ceil_mode = true;
  finalize(q);
  EXPECT_GE(verify_all(q, DataKind::real), 3) << to_string(q);
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
    EXPECT_GE(verify_all(p), 3) << to_string(p);
  }
}

TEST(AvgKernels, GapsAreExactZero) {
  // k2 s3: every third position along each axis is covered by no window.
  for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
    Problem p = avg_problem(1, 3, {10, 10}, 2, 3, 0);
    p.layout = layout;
    EXPECT_GE(verify_all(p), 3);
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
      EXPECT_GE(verify_all(p, DataKind::real), 2) << to_string(p);
      Problem q = avg_problem(1, c, {6, 6}, 2, 2, 0);
      q.layout = Layout::channels_last;
      q.dtype = t;
      EXPECT_GE(verify_all(q, DataKind::real), 3) << to_string(q);
    }
}

TEST(AvgKernels, HalfTypesAccumulateInF32) {
  for (DType t : {DType::f16, DType::bf16}) {
    // W = 16 takes the packed path (8 halves), W = 13 the scalar one.
    for (int64_t w : {16, 13}) {
      Problem overlap = avg_problem(2, 3, {7, w}, 3, 1, 1);
      overlap.dtype = t;
      EXPECT_GE(verify_all(overlap, DataKind::real), 3) << to_string(overlap);
      Problem disjoint = avg_problem(1, 2, {4, 6, w}, 2, 2, 0);
      disjoint.dtype = t;
      EXPECT_EQ(verify_all(disjoint, DataKind::real), 4) << to_string(disjoint);
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
    for (DType t : {DType::f32, DType::f64}) {
      Problem p = avg_problem(1, 2, c.in, c.k, c.s, c.pad, c.rule);
      p.ceil_mode = c.ceil;
      p.dtype = t;
      finalize(p);
      EXPECT_GE(verify_all(p, DataKind::real), 3) << to_string(p);
    }
}

TEST(AvgKernels, HotPaths) {
  // The specialized paths: k3 s1 p1 box sums in avg.gather (2D and 3D, D cut into runs, W at
  // and above the pack width, every divisor convention and an override) and the exact-tiling
  // broadcast of avg.direct (k2 s2 p0 on even sizes, both layouts, kernel 2 x 1 x 2 too).
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (auto in : {std::vector<int64_t>{5, 7, 16}, {3, 3, 8}, {4, 3, 4}, {9, 24}, {2, 8}}) {
        Problem p = in.size() == 3 ? avg_problem(2, 3, {in[0], in[1], in[2]}, 3, 1, 1, rule)
                                   : avg_problem(2, 3, {in[0], in[1]}, 3, 1, 1, rule);
        p.dtype = t;
        EXPECT_GE(verify_all(p, DataKind::real), 3) << to_string(p);
      }
    // D in runs of one plane (few items per plane), in one run (2^18 items per plane, f32: see
    // kAvgBox3WantItems) and in a run of three planes and a last of two (2^17 items per plane).
    Problem deep = avg_problem(1, 1, {600, 3, 8}, 3, 1, 1, Divisor::exclude_pad);
    deep.dtype = t;
    EXPECT_GE(verify_all(deep, DataKind::real), 3) << to_string(deep);
    if (t == DType::f32) {
      for (int64_t h : {512, 256}) {
        Problem wide = avg_problem(1, 1, {5, h, 2048}, 3, 1, 1, Divisor::exclude_pad);
        EXPECT_GE(verify_all(wide, DataKind::real), 3) << to_string(wide);
      }
    }
    Problem over = avg_problem(1, 2, {4, 5, 8}, 3, 1, 1);
    over.dtype = t;
    over.has_divisor_override = true;
    over.divisor_override = -7;
    EXPECT_GE(verify_all(over, DataKind::real), 3) << to_string(over);
    for (Layout layout : {Layout::channels_first, Layout::channels_last}) {
      const int everyone = layout == Layout::channels_first ? 4 : 3;  // avg.gather.tiled: channels-first
      Problem q = avg_problem(2, 8, {4, 6, 16}, 2, 2, 0);
      q.layout = layout;
      q.dtype = t;
      EXPECT_EQ(verify_all(q, DataKind::real), everyone) << to_string(q);
      Problem r = avg_problem(1, 16, {6, 16}, 2, 2, 0, Divisor::exclude_pad);
      r.layout = layout;
      r.dtype = t;
      r.kernel[1] = r.stride[1] = 1;
      finalize(r);
      EXPECT_EQ(verify_all(r, DataKind::real), everyone) << to_string(r);
      r.has_divisor_override = true;
      r.divisor_override = 3;
      EXPECT_EQ(verify_all(r, DataKind::real), everyone) << to_string(r);
    }
  }
}

TEST(AvgKernels, StreamTilesAndChunks) {
  // avg.gather.stream (k3 s1, padding 0 or 1): several 32 x 32 tiles with partial ones at the
  // H and W edges, D cut into chunks of one plane (few planes), of two (C = 300) and not at all
  // (C = 1100: enough tiles to fill the GPU), asymmetric padding, every divisor convention.
  const Variant* stream = find_variant("avg.gather.stream");
  ASSERT_NE(stream, nullptr);
  struct Case {
    int64_t c;
    std::vector<int64_t> in;
  };
  for (Case k : {Case{1, {7, 40, 70}}, Case{300, {5, 6, 9}}, Case{1100, {3, 4, 5}}, Case{2, {33, 65}}})
    for (Divisor rule : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad})
      for (int64_t pe : {0, 1}) {
        Problem p = k.in.size() == 3 ? avg_problem(1, k.c, {k.in[0], k.in[1], k.in[2]}, 3, 1, 1, rule)
                                     : avg_problem(1, k.c, {k.in[0], k.in[1]}, 3, 1, 1, rule);
        for (int a = kAxes - p.dims; a < kAxes; ++a) p.pad_end[a] = (a % 2) ? pe : 1 - pe;
        p.pad_begin[kAxes - 1] = pe;
        finalize(p);
        ASSERT_TRUE(runs(*stream, p)) << to_string(p) << ": " << stream->supports_problem(p).why;
        EXPECT_GE(verify_all(p, DataKind::real), 3) << to_string(p);
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
        EXPECT_GE(verify_all(p, DataKind::real), 4) << to_string(p);
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
  // scatter, the gathers and the direct store must produce the same bits.
  for (Layout layout : {Layout::channels_first, Layout::channels_last})
    for (auto [k, s] : {std::pair<int64_t, int64_t>{3, 1}, {3, 2}, {2, 2}}) {
      Problem p = avg_problem(2, 4, {5, 9, 12}, k, s, k == 2 ? 0 : 1);
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
    EXPECT_GT(verify_all(p), 0) << text;
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

  for (const char* name : {"avg.scatter.atomic", "avg.gather", "avg.gather.tiled", "avg.gather.stream"}) {
    const Variant* v = find_variant(name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_TRUE(v->supports_problem(big).ok) << name << ": " << v->supports_problem(big).why;
  }
  Problem big_disjoint = avg_problem(1, 1, {48000, 48000}, 2, 2, 0);
  EXPECT_TRUE(find_variant("avg.direct")->supports_problem(big_disjoint).ok);
  EXPECT_FALSE(find_variant("avg.direct")->supports_problem(big).ok);
}

TEST(AvgKernels, UnsupportedSaysWhy) {
  const Variant* direct = find_variant("avg.direct");
  ASSERT_NE(direct, nullptr);
  const Support s = direct->supports_problem(avg_problem(1, 1, {8, 8}, 3, 1, 1));
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.why.find("overlap"), std::string::npos) << s.why;
  const Variant* tiled = find_variant("avg.gather.tiled");
  ASSERT_NE(tiled, nullptr);
  Problem huge_reach = avg_problem(1, 1, {400, 400}, 3, 1, 1);
  huge_reach.dilation[1] = huge_reach.dilation[2] = 150;
  finalize(huge_reach);
  EXPECT_FALSE(tiled->supports_problem(huge_reach).ok);
  EXPECT_TRUE(find_variant("avg.gather")->supports_problem(huge_reach).ok);
}

}  // namespace
}  // namespace pg
