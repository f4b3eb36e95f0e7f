#include "fuzz/problem_gen.hpp"

#include <cmath>
#include <vector>

namespace pg::fuzz {

rc::Gen<Problem> problem(GenOptions opt) {
  return rc::gen::exec([opt] {
    Problem p;
    p.op = opt.op;
    p.dims = *rc::gen::inRange(1, 4);
    // Batch 0 is legal and must give an empty result; keep it rare.
    p.n = *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(0)}, {12, rc::gen::inRange<int64_t>(1, 3)}});
    p.c = *rc::gen::inRange<int64_t>(1, 7);
    p.pad_limit = PadLimit::none;
    p.avg3d_input_at_least_kernel = false;
    p.ceil_mode = *rc::gen::arbitrary<bool>();
    const bool asymmetric = *rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    // Avg's common downsampling window (k3 s2 p1 on every axis, channels-first, W a whole number
    // of 16-byte packs of every dtype) has a dedicated variant, avg.gather.k3s2: generate it
    // often enough that its property does not run out of cases.
    const bool downsample = opt.op == Op::avg && !opt.disjoint &&
                            *rc::gen::weightedOneOf<bool>({{2, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    // The overlapping stride-1 window (k3 s1, padding 0 or 1) has the streaming variants
    // (avg/max.gather.stream), tiled 32 x 32: generate it often, with W and H crossing tiles.
    const bool box3 = !downsample && !opt.disjoint &&
                      *rc::gen::arbitrary<bool>();
    if (box3) p.dims = *rc::gen::inRange(2, 4);
    for (int a = kAxes - p.dims; a < kAxes; ++a) {
      if (box3) {
        p.kernel[a] = 3;
        p.stride[a] = 1;
        p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, 2);
        p.pad_end[a] = asymmetric ? *rc::gen::inRange<int64_t>(0, 2) : p.pad_begin[a];
        const int64_t longest = a == kAxes - 1 ? 70 : a == 1 ? 40 : 7;
        p.in[a] = std::max<int64_t>(1, 3 - p.pad_begin[a] - p.pad_end[a]) + *rc::gen::inRange<int64_t>(0, longest);
        continue;
      }
      if (downsample) {
        p.kernel[a] = 3;
        p.stride[a] = 2;
        p.pad_begin[a] = 1;
        p.pad_end[a] = asymmetric ? *rc::gen::inRange<int64_t>(0, 2) : 1;
        p.in[a] = a == kAxes - 1 ? 8 * *rc::gen::inRange<int64_t>(1, 4) : *rc::gen::inRange<int64_t>(2, 12);
        continue;
      }
      p.kernel[a] = *rc::gen::inRange<int64_t>(1, 5);
      p.dilation[a] = *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(2, 4)}});
      const int64_t eff = p.effective_kernel(a);
      p.stride[a] = opt.disjoint ? *rc::gen::inRange<int64_t>(eff, eff + 3) : *rc::gen::inRange<int64_t>(1, 5);
      if (asymmetric) {
        // Up to eff - 1 on either side: windows whose taps all fall in padding become possible.
        p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, eff);
        p.pad_end[a] = *rc::gen::inRange<int64_t>(0, eff);
      } else {
        p.pad_begin[a] = p.pad_end[a] = *rc::gen::inRange<int64_t>(0, p.kernel[a] / 2 + 1);
      }
      const int64_t min_len = std::max<int64_t>(1, eff - p.pad_begin[a] - p.pad_end[a]);
      p.in[a] = min_len + *rc::gen::inRange<int64_t>(0, 8);
    }
    p.layout = downsample || box3 ? Layout::channels_first : *rc::gen::element(Layout::channels_first, Layout::channels_last);
    p.dtype = *rc::gen::weightedOneOf<DType>({{4, rc::gen::just(DType::f32)}, {2, rc::gen::just(DType::f64)},
                                              {1, rc::gen::just(DType::f16)}, {1, rc::gen::just(DType::bf16)}});
    if (p.op == Op::avg) {
      p.divisor = *rc::gen::element(Divisor::include_pad, Divisor::full_kernel, Divisor::exclude_pad);
      p.has_divisor_override = *rc::gen::weightedOneOf<bool>({{5, rc::gen::just(false)}, {1, rc::gen::just(true)}});
      if (p.has_divisor_override)
        p.divisor_override = *rc::gen::element<int64_t>(-5, -2, -1, 1, 2, 3, 7, 9);
    } else {
      p.tie = *rc::gen::element(TieRule::first, TieRule::last);
      p.nan = *rc::gen::element(NanRule::propagate, NanRule::ignore);
      p.index_format = *rc::gen::element(IndexFormat::plane, IndexFormat::global_row, IndexFormat::global_col,
                                         IndexFormat::window);
      p.index_type = p.index_format == IndexFormat::window
                         ? *rc::gen::element(IndexType::u8, IndexType::i32, IndexType::i64)
                         : *rc::gen::element(IndexType::i32, IndexType::i64);
    }
    finalize(p);
    return p;
  });
}

rc::Gen<DataSpec> data_spec() {
  return rc::gen::exec([] {
    DataSpec d;
    d.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
    d.kind = *rc::gen::element(DataKind::ints, DataKind::special, DataKind::real);
    return d;
  });
}

namespace {

int64_t offset(const Problem& p, const int64_t* len, int64_t n, int64_t c, const int64_t* s) {
  if (p.layout == Layout::channels_first)
    return (((n * p.c + c) * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2];
  return (((n * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2]) * p.c + c;
}

struct WindowFacts {
  bool tie = false, nan = false, all_neg_inf = false, no_tap = false;
};

// Looks at every window's in-bounds taps for the data-dependent edges.
WindowFacts window_facts(const Problem& p, const std::vector<double>& x) {
  WindowFacts f;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
            const int64_t o[kAxes] = {o0, o1, o2};
            std::vector<double> vals;
            for (int64_t k0 = 0; k0 < p.kernel[0]; ++k0)
              for (int64_t k1 = 0; k1 < p.kernel[1]; ++k1)
                for (int64_t k2 = 0; k2 < p.kernel[2]; ++k2) {
                  const int64_t k[kAxes] = {k0, k1, k2};
                  int64_t s[kAxes];
                  bool inside = true;
                  for (int a = 0; a < kAxes; ++a) {
                    s[a] = o[a] * p.stride[a] - p.pad_begin[a] + k[a] * p.dilation[a];
                    inside = inside && s[a] >= 0 && s[a] < p.in[a];
                  }
                  if (inside) vals.push_back(x[offset(p, p.in, n, c, s)]);
                }
            if (vals.empty()) { f.no_tap = true; continue; }
            double best = -INFINITY;
            int neg_inf = 0;
            for (double v : vals) {
              f.nan = f.nan || std::isnan(v);
              neg_inf += v == -INFINITY;
              if (v > best) best = v;
            }
            f.all_neg_inf = f.all_neg_inf || neg_inf == static_cast<int>(vals.size());
            int at_best = 0;
            for (double v : vals) at_best += v == best;
            f.tie = f.tie || at_best > 1;
          }
  return f;
}

}  // namespace

void classify(const Problem& p, const DataSpec& spec) {
  bool overhang = false, pad_dil = false, gaps = false;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t last_end = (p.out[a] - 1) * p.stride[a] - p.pad_begin[a] + p.effective_kernel(a);
    overhang = overhang || last_end > p.in[a] + p.pad_end[a];
    pad_dil = pad_dil || (p.dilation[a] > 1 && (p.pad_begin[a] > 0 || p.pad_end[a] > 0));
    gaps = gaps || p.stride[a] > p.effective_kernel(a);
  }
  RC_CLASSIFY(p.ceil_mode && overhang, "ceil overhang");
  RC_CLASSIFY(pad_dil, "padding with dilation");
  RC_CLASSIFY(!p.windows_disjoint(), "overlapping windows");
  RC_CLASSIFY(gaps, "gaps (uncovered inputs)");
  RC_CLASSIFY(p.layout == Layout::channels_last && p.c % 4 != 0, "channels-last, C not a multiple of 4");
  RC_CLASSIFY(p.n == 0, "empty batch");
  RC_TAG(std::to_string(p.dims) + "D", dtype_name(p.dtype));
  if (p.op == Op::avg) {
    RC_TAG(p.has_divisor_override ? std::string("divisor_override") : std::string(divisor_name(p.divisor)));
  } else {
    RC_TAG(std::string("index ") + index_format_name(p.index_format) + "/" + index_type_name(p.index_type));
    const WindowFacts f = window_facts(p, make_data(p, spec).x);
    RC_CLASSIFY(f.tie, "tie in a window");
    RC_CLASSIFY(f.nan, "NaN in a window");
    RC_CLASSIFY(f.all_neg_inf, "all -inf window");
    RC_CLASSIFY(f.no_tap, "window with no tap inside the input");
  }
}

}  // namespace pg::fuzz
