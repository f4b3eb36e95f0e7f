#include "fuzz/problem_gen.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <vector>

namespace pg {

void showValue(const Problem& p, std::ostream& os) { os << to_string(p); }

void showValue(const DataSpec& d, std::ostream& os) { os << "data=" << data_kind_name(d.kind) << " seed=" << d.seed; }

namespace fuzz {
namespace {

// A length of at least `min_len`, at most `reach` past it, a multiple of `unit`.
int64_t length(int64_t min_len, int64_t reach, int64_t unit) {
  const int64_t lo = (min_len + unit - 1) / unit, hi = std::max(lo, (min_len + reach) / unit);
  return unit * *rc::gen::inRange<int64_t>(lo, hi + 1);
}

// One axis of a listed window: its shape, pads inside the shape's range (one parity when asked).
void listed_axis(Problem& p, int a, const Domain& d, const WindowShape& s, bool asymmetric, int64_t parity) {
  p.kernel[a] = s.kernel;
  p.stride[a] = s.stride;
  std::vector<int64_t> pads;
  for (int64_t v = s.pad_min; v <= s.pad_max; ++v)
    if (parity < 0 || v % s.stride == parity) pads.push_back(v);
  if (pads.empty()) pads.push_back(s.pad_min);  // admits() will say why; the property counts it
  p.pad_begin[a] = pick(pads);
  p.pad_end[a] = d.pads_symmetric || !asymmetric ? p.pad_begin[a] : *rc::gen::inRange(s.pad_min, s.pad_max + 1);
  if (d.whole_windows) p.pad_begin[a] = p.pad_end[a] = 0;
}

// One axis of any window (or a disjoint one, or one of stride 1): kernel 1-4, or one axis in ten
// (the domain's wide_kernel_one_in) a wide undilated kernel of 5-9 (SPP-style windows: with
// stride 1 an element is a tap of more than 4 windows, past avg.gather.tiled's unrolled tap
// loop); dilation up to 3 (when the domain has it), stride up to 4 (1 for a unit-stride domain),
// pads up to the effective kernel on either side (windows wholly in padding; for a unit-stride
// domain mostly "same" pads, out == in), and now and then a kernel-1 axis with padding (legal
// under ONNX; its edge windows hold no tap).
void free_axis(Problem& p, int a, const Domain& d, bool asymmetric) {
  const bool disjoint = d.windows == WindowRule::disjoint;
  const bool k1_padded =
      !d.pads_symmetric && *rc::gen::weightedOneOf<bool>({{7, rc::gen::just(false)}, {1, rc::gen::just(true)}});
  const bool unit_stride = d.windows == WindowRule::unit_stride;
  if (k1_padded) {
    p.kernel[a] = 1;
    p.stride[a] = unit_stride ? 1 : *rc::gen::inRange<int64_t>(1, 3);
    p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, 3);
    p.pad_end[a] = *rc::gen::inRange<int64_t>(p.pad_begin[a] == 0 ? 1 : 0, 3);
    return;
  }
  const bool wide = *rc::gen::weightedOneOf<bool>(
      {{static_cast<size_t>(std::max(d.wide_kernel_one_in, 1) - 1), rc::gen::just(false)}, {1, rc::gen::just(true)}});
  p.kernel[a] = wide ? *rc::gen::inRange<int64_t>(5, 10) : *rc::gen::inRange<int64_t>(1, 5);
  p.dilation[a] = d.dilation && !wide
                      ? *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(2, 4)}})
                      : 1;
  const int64_t eff = p.effective_kernel(a);
  p.stride[a] = disjoint      ? *rc::gen::inRange<int64_t>(eff, eff + 3)
                : unit_stride ? 1
                              : *rc::gen::inRange<int64_t>(1, 5);
  if (asymmetric) {
    p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, eff + 1);
    p.pad_end[a] = *rc::gen::inRange<int64_t>(0, eff + 1);
  } else {
    p.pad_begin[a] = p.pad_end[a] = *rc::gen::inRange<int64_t>(0, p.kernel[a] / 2 + 1);
  }
  // Stride 1: three times in four "same" padding, out == in along the axis (Inception's k3s1p1, the
  // commonest stride-1 window), which drawn pads rarely give on every axis at once.
  if (unit_stride && *rc::gen::weightedOneOf<bool>({{1, rc::gen::just(false)}, {3, rc::gen::just(true)}})) {
    if (asymmetric) {
      p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, eff);
      p.pad_end[a] = eff - 1 - p.pad_begin[a];
    } else if (eff % 2 == 1) {
      p.pad_begin[a] = p.pad_end[a] = (eff - 1) / 2;
    }
  }
}

// The input length of an axis drawn by free_axis() that gives it exactly one window (floor
// sizes): in + pads - effective kernel below the stride. Pads too large for any such length
// are dropped. Half the time the shortest length, where the window covers the most of the axis
// (all of it when no dilation leaves gaps): global pooling.
int64_t single_window_length(Problem& p, int a) {
  const int64_t eff = p.effective_kernel(a);
  if (eff - p.pad_begin[a] - p.pad_end[a] + p.stride[a] - 1 < 1) p.pad_begin[a] = p.pad_end[a] = 0;
  const int64_t lo = std::max<int64_t>(1, eff - p.pad_begin[a] - p.pad_end[a]);
  const int64_t hi = eff - p.pad_begin[a] - p.pad_end[a] + p.stride[a] - 1;
  return *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just(lo)}, {1, rc::gen::inRange<int64_t>(lo, hi + 1)}});
}

}  // namespace

rc::Gen<Problem> problem(Op op, const Domain& d) {
  // At full size from the first case: RapidCheck grows its size parameter over a run, which
  // would spend most cases on the smallest shapes; shrinking still walks toward them.
  return rc::gen::resize(kFullSize, rc::gen::exec([op, d] {
    Problem p;
    p.op = op;
    p.pad_limit = PadLimit::none;
    p.avg3d_input_at_least_kernel = false;
    const bool listed = d.windows == WindowRule::listed;
    const int lo_dims = listed ? std::max(d.min_dims, kAxes - d.trivial_leading) : d.min_dims;
    p.dims = *rc::gen::inRange(std::min(lo_dims, d.max_dims), d.max_dims + 1);
    // Batch 0 is legal and must give an empty result; keep it rare.
    p.n = *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(0)}, {12, rc::gen::inRange<int64_t>(1, 4)}});
    p.ceil_mode = d.ceil_mode && *rc::gen::arbitrary<bool>();
    p.layout = pick(d.layouts);
    p.dtype = pick(d.dtypes);
    const int64_t pack = 16 / dtype_size(p.dtype);
    const bool packed_c = d.contiguous_packs && p.layout == Layout::channels_last;
    const bool packed_w = d.contiguous_packs && p.layout == Layout::channels_first;
    p.c = packed_c ? length(1, std::max<int64_t>(d.max_channels, pack) - 1, pack)
                   : *rc::gen::inRange<int64_t>(1, d.max_channels + 1);
    const bool asymmetric =
        !d.pads_symmetric && *rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    const WindowShape shape = listed ? pick(d.shapes) : WindowShape{};
    int64_t parity = -1;
    // A 3D problem of a listed domain with copy_leading: D a copy axis half the time.
    const bool copy_d = listed && d.copy_leading && p.dims == 3 && *rc::gen::arbitrary<bool>();
    for (int a = kAxes - p.dims; a < kAxes; ++a) {
      if (a == 0 && copy_d) {
        p.in[0] = length(1, d.reach[0], 1);  // kernel 1, stride 1, no padding: Problem's defaults
        continue;
      }
      if (listed) {
        listed_axis(p, a, d, shape, asymmetric, parity);
        if (d.same_pad_parity) parity = p.pad_begin[a] % shape.stride;
      } else {
        free_axis(p, a, d, asymmetric);
      }
      if (d.windows == WindowRule::single) {
        p.in[a] = single_window_length(p, a);
        continue;
      }
      const int64_t min_len = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
      int64_t unit = d.whole_windows ? p.kernel[a] : 1;
      if (packed_w && a == kAxes - 1) unit = std::lcm(unit, pack);
      p.in[a] = length(min_len, d.reach[a], unit);
    }
    // One window per plane in floor mode by construction; ceil mode may add a second, which
    // PyTorch's start-inside rule does not always take back: then floor sizes.
    if (d.windows == WindowRule::single && p.ceil_mode) {
      Problem ceil = p;
      finalize(ceil);
      for (int a = 0; a < kAxes; ++a) p.ceil_mode = p.ceil_mode && ceil.out[a] == 1;
    }
    if (op == Op::avg) {
      p.divisor = pick(d.divisors);
      p.has_divisor_override =
          d.divisor_override && *rc::gen::weightedOneOf<bool>({{5, rc::gen::just(false)}, {1, rc::gen::just(true)}});
      if (p.has_divisor_override) p.divisor_override = *rc::gen::element<int64_t>(-5, -2, -1, 1, 2, 3, 7, 9);
    } else {
      p.tie = pick(d.ties);
      p.nan = pick(d.nans);
      p.index_format = pick(d.index_formats);
      // u8 holds window-local indices only, of windows under 255 taps (255 marks no tap): a wide
      // kernel (free_axis's 5-9) on every axis passes that, and takes a wider type.
      std::vector<IndexType> types;
      for (IndexType t : d.index_types)
        if (t != IndexType::u8 || (p.index_format == IndexFormat::window && p.taps() < 255)) types.push_back(t);
      p.index_type = types.empty() ? d.index_types.front() : pick(types);
    }
    finalize(p);
    return p;
  }));
}

bool generator_reaches(const Domain& d, const Problem& p) {
  const int64_t pack = 16 / dtype_size(p.dtype);
  const bool packed_c = d.contiguous_packs && p.layout == Layout::channels_last;
  const int64_t max_c = packed_c ? std::max<int64_t>(d.max_channels, pack) / pack * pack : d.max_channels;
  if (p.n > 3 || p.c > max_c) return false;
  if (d.windows == WindowRule::single) return true;  // its lengths follow from the window
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    if (axis_trivial(p, a)) continue;
    const int64_t min_len = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
    const int64_t unit = std::lcm(d.whole_windows ? p.kernel[a] : 1, d.contiguous_packs ? pack : 1);
    if (p.in[a] > min_len + d.reach[a] + unit - 1) return false;
  }
  return true;
}

rc::Gen<DataSpec> data_spec(Inputs inputs) {
  return rc::gen::exec([inputs] {
    DataSpec d;
    d.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
    d.kind = inputs == Inputs::dy_and_indices
                 ? *rc::gen::element(DataKind::ints, DataKind::special, DataKind::real, DataKind::foreign)
                 : *rc::gen::element(DataKind::ints, DataKind::special, DataKind::real);
    return d;
  });
}

}  // namespace fuzz
}  // namespace pg
