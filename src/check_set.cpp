#include "src/check_set.hpp"

#include <stdexcept>

namespace pg {
namespace {

// dims given as {D, H, W} tails: a 2D case passes two values.
Problem make(Op op, int dims, int64_t n, int64_t c, std::initializer_list<int64_t> in,
             std::initializer_list<int64_t> k, std::initializer_list<int64_t> s,
             std::initializer_list<int64_t> pad, std::initializer_list<int64_t> dil = {}) {
  Problem p;
  p.op = op;
  p.dims = dims;
  p.n = n;
  p.c = c;
  auto put = [&](int64_t* dst, std::initializer_list<int64_t> v) {
    if (v.size() == 0) return;
    int a = kAxes - dims;
    for (int64_t x : v) dst[a++] = x;
  };
  put(p.in, in);
  put(p.kernel, k);
  put(p.stride, s);
  put(p.pad_begin, pad);
  put(p.pad_end, pad);
  put(p.dilation, dil);
  return p;
}

}  // namespace

std::vector<CheckCase> check_set() {
  std::vector<CheckCase> cases;
  auto add = [&](std::string label, Problem p, DataKind kind = DataKind::ints) {
    finalize(p);
    cases.push_back({std::move(label), p, DataSpec{cases.size() + 1, kind}});
  };
  for (Op op : {Op::max, Op::avg}) {
    const std::string o = op_name(op);
    add(o + "2d k3s2p1", make(op, 2, 2, 3, {9, 11}, {3, 3}, {2, 2}, {1, 1}));
    add(o + "2d k2s2 disjoint", make(op, 2, 2, 5, {8, 6}, {2, 2}, {2, 2}, {0, 0}));
    add(o + "2d k3s1p1 overlap", make(op, 2, 1, 4, {7, 7}, {3, 3}, {1, 1}, {1, 1}), DataKind::special);
    add(o + "2d gaps s>k", make(op, 2, 1, 3, {10, 10}, {2, 2}, {3, 3}, {0, 0}));
    Problem ceil = make(op, 1, 2, 3, {5}, {2}, {2}, {0});
    ceil.ceil_mode = true;
    add(o + "1d ceil overhang L5k2s2", ceil);
    Problem inside = make(op, 1, 1, 2, {1}, {2}, {2}, {1});
    inside.ceil_mode = true;
    add(o + "1d start-inside L1k2s2p1", inside);
    Problem three = make(op, 3, 1, 3, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1});
    three.ceil_mode = true;
    add(o + "3d anisotropic ceil", three, DataKind::special);
    Problem dil = make(op, 2, 1, 2, {9, 8}, {3, 2}, {1, 2}, {1, 1}, {2, 3});
    add(o + "2d dilation+padding", dil);
    Problem cl = make(op, 2, 2, 5, {7, 9}, {3, 3}, {2, 2}, {1, 1});
    cl.layout = Layout::channels_last;
    add(o + "2d channels-last C=5", cl);
    Problem cl3 = make(op, 3, 1, 3, {4, 5, 6}, {2, 3, 2}, {1, 2, 2}, {1, 1, 0});
    cl3.layout = Layout::channels_last;
    add(o + "3d channels-last", cl3, DataKind::special);
    Problem asym = make(op, 2, 1, 2, {6, 7}, {3, 3}, {2, 2}, {0, 0});
    asym.pad_begin[1] = 2; asym.pad_end[2] = 1; asym.pad_limit = PadLimit::none;
    add(o + "2d asymmetric pads", asym);
    for (DType t : {DType::f16, DType::bf16, DType::f64}) {
      Problem q = make(op, 2, 1, 3, {8, 8}, {3, 3}, {2, 2}, {1, 1});
      q.dtype = t;
      add(o + "2d k3s2p1 " + dtype_name(t), q, DataKind::real);
    }
  }
  // Average-pool divisor conventions on the ceil overhang, where frameworks disagree.
  for (Divisor d : {Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad}) {
    Problem p = make(Op::avg, 1, 1, 2, {9}, {7}, {3}, {3});
    p.ceil_mode = true;
    p.divisor = d;
    add(std::string("avg1d L9k7s3p3 ceil ") + divisor_name(d), p, DataKind::real);
  }
  Problem ovr = make(Op::avg, 2, 1, 2, {6, 6}, {3, 3}, {2, 2}, {1, 1});
  ovr.has_divisor_override = true;
  ovr.divisor_override = -3;
  add("avg2d divisor_override -3", ovr);
  // Max-pool index formats and tie/NaN rules.
  struct Fmt { IndexFormat f; IndexType t; };
  for (Fmt f : {Fmt{IndexFormat::global_row, IndexType::i64}, Fmt{IndexFormat::global_col, IndexType::i64},
                Fmt{IndexFormat::plane, IndexType::i32}, Fmt{IndexFormat::window, IndexType::u8}}) {
    Problem p = make(Op::max, 3, 2, 2, {4, 5, 6}, {2, 3, 2}, {2, 1, 2}, {1, 1, 1});
    p.index_format = f.f;
    p.index_type = f.t;
    add(std::string("max3d index ") + index_format_name(f.f) + "/" + index_type_name(f.t), p, DataKind::special);
  }
  Problem last = make(Op::max, 2, 1, 3, {7, 7}, {3, 3}, {1, 1}, {1, 1});
  last.tie = TieRule::last;
  last.nan = NanRule::ignore;
  add("max2d tie=last nan=ignore", last, DataKind::special);
  return cases;
}

}  // namespace pg
