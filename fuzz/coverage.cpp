#include "fuzz/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pg::fuzz {
namespace {

const char* layout_tag(Layout l) { return l == Layout::channels_first ? "channels-first" : "channels-last"; }

std::string index_tag(IndexFormat f, IndexType t) {
  return std::string("index ") + index_format_name(f) + "/" + index_type_name(t);
}

int64_t offset(const Problem& p, int64_t n, int64_t c, const int64_t* s) {
  if (p.layout == Layout::channels_first)
    return (((n * p.c + c) * p.in[0] + s[0]) * p.in[1] + s[1]) * p.in[2] + s[2];
  return (((n * p.in[0] + s[0]) * p.in[1] + s[1]) * p.in[2] + s[2]) * p.c + c;
}

struct WindowFacts {
  bool tie = false, nan = false, all_neg_inf = false;
};

// The data-dependent edges of max pooling: ties, NaN, a window of only -inf.
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
                  if (inside) vals.push_back(x[offset(p, n, c, s)]);
                }
            if (vals.empty()) continue;
            double best = -INFINITY;
            size_t neg_inf = 0, at_best = 0;
            for (double v : vals) {
              f.nan = f.nan || std::isnan(v);
              neg_inf += v == -INFINITY;
              best = v > best ? v : best;
            }
            for (double v : vals) at_best += v == best;
            f.all_neg_inf = f.all_neg_inf || neg_inf == vals.size();
            f.tie = f.tie || at_best > 1;
          }
  return f;
}

// Some window along axis a has no tap inside the input (all its taps in padding).
bool window_without_tap(const Problem& p, int a) {
  for (int64_t o = 0; o < p.out[a]; ++o) {
    bool any = false;
    for (int64_t k = 0; k < p.kernel[a] && !any; ++k) {
      const int64_t s = o * p.stride[a] - p.pad_begin[a] + k * p.dilation[a];
      any = s >= 0 && s < p.in[a];
    }
    if (!any) return true;
  }
  return false;
}

// One window per plane (output size 1 on every axis) whose taps are every input position.
bool plane_window_whole(const Problem& p) {
  for (int a = 0; a < kAxes; ++a) {
    if (p.out[a] != 1) return false;
    int64_t inside = 0;  // taps are distinct positions: all of them inside iff in of them are
    for (int64_t k = 0; k < p.kernel[a]; ++k) {
      const int64_t s = -p.pad_begin[a] + k * p.dilation[a];
      inside += s >= 0 && s < p.in[a];
    }
    if (inside != p.in[a]) return false;
  }
  return true;
}

bool listed_overhang_possible(const Domain& d) {
  if (d.whole_windows) return false;
  for (const WindowShape& s : d.shapes)
    if (s.stride > 1) return true;
  return false;
}

}  // namespace

std::vector<std::string> observed_tags(const Problem& p, const DataSpec& spec, Inputs inputs,
                                       const std::vector<double>* x) {
  std::vector<std::string> t = {std::to_string(p.dims) + "D", layout_tag(p.layout), dtype_name(p.dtype)};
  bool overhang = false, pad_dil = false, k1_pad = false, asym = false, no_tap = false;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    const int64_t last_end = (p.out[a] - 1) * p.stride[a] - p.pad_begin[a] + p.effective_kernel(a);
    overhang = overhang || last_end > p.in[a] + p.pad_end[a];
    pad_dil = pad_dil || (p.dilation[a] > 1 && (p.pad_begin[a] > 0 || p.pad_end[a] > 0));
    k1_pad = k1_pad || (p.kernel[a] == 1 && (p.pad_begin[a] > 0 || p.pad_end[a] > 0));
    asym = asym || p.pad_begin[a] != p.pad_end[a];
    no_tap = no_tap || window_without_tap(p, a);
  }
  if (p.ceil_mode && overhang) t.push_back("ceil overhang");
  if (p.dims == 3 && p.in[0] > 1 && axis_copy(p, 0)) t.push_back("D a copy axis (kernel 1, stride 1)");
  if (pad_dil) t.push_back("padding with dilation");
  if (k1_pad) t.push_back("kernel-1 axis with padding");
  if (asym) t.push_back("asymmetric padding");
  if (no_tap && p.n > 0) t.push_back("window with no tap inside the input");
  t.push_back(p.windows_disjoint() ? "disjoint windows" : "overlapping windows");
  if (p.n == 0) t.push_back("empty batch");
  if (p.out[0] == 1 && p.out[1] == 1 && p.out[2] == 1) {
    t.push_back(plane_window_whole(p) ? "one window per plane, covering it" : "one window per plane, with gaps");
    if (p.in_elems() % (16 / dtype_size(p.dtype)) == 0) t.push_back("dx a whole number of 16-byte packs");
  }
  if (p.layout == Layout::channels_last && p.c % (16 / dtype_size(p.dtype)) != 0)
    t.push_back("channels-last, C not a whole number of packs");
  if (p.op == Op::avg) {
    t.push_back(p.has_divisor_override ? std::string("divisor_override") : std::string(divisor_name(p.divisor)));
    return t;
  }
  t.push_back(p.tie == TieRule::first ? "tie=first" : "tie=last");
  t.push_back(p.nan == NanRule::propagate ? "nan=propagate" : "nan=ignore");
  if (inputs == Inputs::dy_and_indices) t.push_back(index_tag(p.index_format, p.index_type));
  if (spec.kind == DataKind::foreign) t.push_back("foreign indices");
  const WindowFacts f = window_facts(p, x ? *x : make_data(p, spec).x);
  if (f.tie) t.push_back("tie in a window");
  if (f.nan) t.push_back("NaN in a window");
  if (f.all_neg_inf) t.push_back("all -inf window");
  return t;
}

std::vector<std::string> admitted_tags(const Variant& v) {
  const Domain& d = v.domain;
  const bool listed = d.windows == WindowRule::listed;
  std::vector<std::string> t = {"empty batch"};
  const int lo_dims = listed ? std::max(d.min_dims, kAxes - d.trivial_leading) : d.min_dims;
  for (int dims = lo_dims; dims <= d.max_dims; ++dims) t.push_back(std::to_string(dims) + "D");
  for (Layout l : d.layouts) t.push_back(layout_tag(l));
  for (DType x : d.dtypes) t.push_back(dtype_name(x));
  // One window per plane never overhangs: a second would start before its end.
  // Nor does a stride-1 window: ceil and floor sizes agree.
  if (d.ceil_mode && d.windows != WindowRule::single && d.windows != WindowRule::unit_stride &&
      (!listed || listed_overhang_possible(d)))
    t.push_back("ceil overhang");
  if (listed && d.copy_leading && d.max_dims == 3) t.push_back("D a copy axis (kernel 1, stride 1)");
  if (!listed) {
    if (d.dilation) t.push_back("padding with dilation");
    if (!d.pads_symmetric) {
      t.push_back("kernel-1 axis with padding");
      t.push_back("asymmetric padding");
    }
    // Without dilation or a padded kernel-1 axis, only symmetric pads of at most half the kernel
    // are drawn: every window then holds a tap.
    if (d.dilation || !d.pads_symmetric) t.push_back("window with no tap inside the input");
  }
  const bool listed_overlap =
      std::any_of(d.shapes.begin(), d.shapes.end(), [](const WindowShape& s) { return s.stride < s.kernel; });
  if (d.windows == WindowRule::any || d.windows == WindowRule::unit_stride || (listed && listed_overlap))
    t.push_back("overlapping windows");
  // C = 1 is never a whole number of packs (2 to 8 elements), so any channels-last domain without
  // packed C reaches this.
  if (!d.contiguous_packs && std::find(d.layouts.begin(), d.layouts.end(), Layout::channels_last) != d.layouts.end())
    t.push_back("channels-last, C not a whole number of packs");
  if (d.windows == WindowRule::single) {
    t.push_back("one window per plane, covering it");
    t.push_back("one window per plane, with gaps");
    t.push_back("dx a whole number of 16-byte packs");
  }
  if (v.op == Op::avg) {
    for (Divisor x : d.divisors) t.push_back(divisor_name(x));
    if (d.divisor_override) t.push_back("divisor_override");
    return t;
  }
  for (TieRule x : d.ties) t.push_back(x == TieRule::first ? "tie=first" : "tie=last");
  for (NanRule x : d.nans) t.push_back(x == NanRule::propagate ? "nan=propagate" : "nan=ignore");
  for (const char* s : {"tie in a window", "NaN in a window"}) t.push_back(s);
  if (v.inputs == Inputs::dy_and_indices) t.push_back("foreign indices");
  if (v.inputs == Inputs::dy_and_indices)
    for (IndexFormat f : d.index_formats)
      for (IndexType x : d.index_types)
        if (x != IndexType::u8 || f == IndexFormat::window) t.push_back(index_tag(f, x));
  return t;
}

void Coverage::add(const std::vector<std::string>& tags) {
  ++cases_;
  for (const std::string& t : tags) ++counts_[t];
}

std::string Coverage::table() const {
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const auto& [tag, n] : counts_) rows.push_back({n, tag});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::ostringstream o;
  o.precision(3);
  for (const auto& [n, tag] : rows) o << "    " << tag << ": " << n << " (" << 100.0 * n / std::max<int64_t>(1, cases_) << "%)\n";
  return o.str();
}

std::vector<std::string> Coverage::missing(const std::vector<std::string>& expected) const {
  std::vector<std::string> out;
  for (const std::string& t : expected)
    if (!counts_.count(t)) out.push_back(t);
  return out;
}

}  // namespace pg::fuzz
