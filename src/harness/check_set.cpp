#include "src/harness/check_set.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "src/harness/registry.hpp"

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
  set_window(p, {in, k, s, pad, pad, dil});
  return p;
}

// A length of at least min_len and at most `reach` past it, a multiple of unit.
int64_t length(int64_t min_len, int64_t reach, int64_t unit) {
  return std::max<int64_t>(unit, (min_len + reach) / unit * unit);
}

// Sample i (0, 1, 2) of a variant's domain, built directly like the fuzz builds its cases: the
// largest dims, sizes at the domain's reach (several work items and a partial last one), and
// across the three samples each end of the pad range, both tie/NaN rules, three divisor rules or
// index formats, each layout and several dtypes.
Problem domain_sample(const Variant& v, int i) {
  const Domain& d = v.domain;
  Problem p;
  p.op = v.op;
  p.pad_limit = PadLimit::none;
  p.avg3d_input_at_least_kernel = false;
  const bool listed = d.windows == WindowRule::listed;
  const int lo_dims = listed ? std::max(d.min_dims, kAxes - d.trivial_leading) : d.min_dims;
  p.dims = i == 1 ? std::max(lo_dims, d.max_dims - 1) : d.max_dims;
  p.n = i == 2 ? 1 : 2;
  p.ceil_mode = i != 1 && d.ceil_mode;
  p.layout = d.layouts[i % d.layouts.size()];
  std::vector<DType> dtypes;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    if (std::find(d.dtypes.begin(), d.dtypes.end(), t) != d.dtypes.end()) dtypes.push_back(t);
  p.dtype = dtypes[i % dtypes.size()];
  const int64_t pack = 16 / dtype_size(p.dtype);
  const bool packed_c = d.contiguous_packs && p.layout == Layout::channels_last;
  p.c = packed_c ? pack * (i == 0 ? 3 : 2) : std::min<int64_t>(d.max_channels, i == 0 ? 5 : 3);
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    if (listed) {
      const WindowShape& s = d.shapes[i % d.shapes.size()];
      p.kernel[a] = s.kernel;
      p.stride[a] = s.stride;
      p.pad_begin[a] = i == 1 ? s.pad_min : s.pad_max;
      p.pad_end[a] = i == 2 && !d.pads_symmetric ? s.pad_min : p.pad_begin[a];
      if (d.whole_windows) p.pad_begin[a] = p.pad_end[a] = 0;
    } else if (d.windows == WindowRule::disjoint) {
      p.kernel[a] = 2 + (i == 1);
      p.stride[a] = p.kernel[a] + (i == 2);
      p.pad_begin[a] = i == 0 ? 0 : 1;
      p.pad_end[a] = i == 2 && !d.pads_symmetric ? 0 : p.pad_begin[a];
    } else if (d.windows == WindowRule::unit_stride) {
      // A 3-wide window with its halo, a dilated 5-wide one with uneven pads, a 2-wide one.
      const int64_t k[] = {3, 5, 2}, dil[] = {1, 2, 1}, pb[] = {1, 2, 0}, pe[] = {1, 3, 1};
      p.kernel[a] = k[i];
      p.stride[a] = 1;
      p.dilation[a] = d.dilation ? dil[i] : 1;
      p.pad_begin[a] = d.pads_symmetric ? std::min(pb[i], k[i] / 2) : pb[i];
      p.pad_end[a] = d.pads_symmetric ? p.pad_begin[a] : pe[i];
    } else if (d.windows == WindowRule::single) {
      // Global pooling (a 7-wide window over 7 inputs), a dilated window with padding, and a
      // window that leaves the input's last position uncovered.
      const int64_t k[] = {7, 3, 4}, s[] = {7, 1, 5}, dil[] = {1, 2, 1}, pb[] = {0, 1, 1}, pe[] = {0, 1, 0};
      p.kernel[a] = k[i];
      p.stride[a] = s[i];
      p.dilation[a] = d.dilation ? dil[i] : 1;
      p.pad_begin[a] = pb[i];
      p.pad_end[a] = d.pads_symmetric ? pb[i] : pe[i];
      p.in[a] = p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a] + (i == 2);
      continue;
    } else {
      const int64_t k[] = {3, 2, 1}, s[] = {2, 1, 2}, dil[] = {1, 2, 1}, pb[] = {1, 1, 1}, pe[] = {1, 1, 0};
      p.kernel[a] = k[i];
      p.stride[a] = s[i];
      p.dilation[a] = d.dilation ? dil[i] : 1;
      // Symmetric: at most half the kernel, so that every window holds a tap.
      p.pad_begin[a] = d.pads_symmetric ? std::min(pb[i], k[i] / 2) : pb[i];
      p.pad_end[a] = d.pads_symmetric ? p.pad_begin[a] : pe[i];
    }
    const int64_t min_len = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
    int64_t unit = d.whole_windows ? p.kernel[a] : 1;
    if (d.contiguous_packs && p.layout == Layout::channels_first && a == kAxes - 1) unit = std::lcm(unit, pack);
    p.in[a] = length(min_len, d.reach[a] - (i == 2), unit);
  }
  if (p.op == Op::avg) {
    std::vector<Divisor> divisors;
    for (Divisor x : {Divisor::include_pad, Divisor::exclude_pad, Divisor::full_kernel})
      if (std::find(d.divisors.begin(), d.divisors.end(), x) != d.divisors.end()) divisors.push_back(x);
    p.divisor = divisors[i % divisors.size()];
    p.has_divisor_override = i == 2 && d.divisor_override;
    p.divisor_override = 3;
  } else {
    const TieRule tie = i == 1 ? TieRule::last : TieRule::first;
    const NanRule nan = i == 1 ? NanRule::ignore : NanRule::propagate;
    p.tie = std::find(d.ties.begin(), d.ties.end(), tie) != d.ties.end() ? tie : d.ties.front();
    p.nan = std::find(d.nans.begin(), d.nans.end(), nan) != d.nans.end() ? nan : d.nans.front();
    p.index_format = d.index_formats[i % d.index_formats.size()];
    std::vector<IndexType> types;
    for (IndexType t : d.index_types)
      if (t != IndexType::u8 || p.index_format == IndexFormat::window) types.push_back(t);
    p.index_type = types.empty() ? d.index_types.front() : types[i % types.size()];
  }
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
  // Three cases from inside every variant's own domain, so each fast path is checked on shapes it
  // really runs, whatever the edge cases above happen to hit.
  for (const Variant& v : variants())
    for (int i = 0; i < 3; ++i)
      add(v.name + " domain sample " + std::to_string(i + 1), domain_sample(v, i),
          i == 0 ? DataKind::ints : i == 1 ? DataKind::special : DataKind::real);
  return cases;
}

}  // namespace pg
