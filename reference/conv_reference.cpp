#include "reference/conv_reference.hpp"

#include <algorithm>
#include <cmath>

// Forward and backward-data are two separate readings of the definition: forward gathers each
// y element from the taps inside the input, backward gathers each dx element from the (tap,
// output) pairs that reach it. Neither is derived from the other, so the adjoint identity
// between them (tests/conv_reference_properties_test.cpp) checks both.
namespace pg::ref {
namespace {

// Element offset of (n, channel, spatial position) in a tensor of `channels` channels and
// spatial sizes `len`, in the problem's layout.
int64_t offset(const ConvProblem& p, int64_t channels, const int64_t* len, int64_t n, int64_t ch, const int64_t* s) {
  if (p.layout == Layout::channels_first) return (((n * channels + ch) * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2];
  return (((n * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2]) * channels + ch;
}

// Weight (k, c within the group, tap): PyTorch's memory order for the layout.
int64_t weight_offset(const ConvProblem& p, int64_t k, int64_t cg, const int64_t* t) {
  const int64_t cpg = p.c_per_group();
  if (p.layout == Layout::channels_first)
    return (((k * cpg + cg) * p.kernel[0] + t[0]) * p.kernel[1] + t[1]) * p.kernel[2] + t[2];
  return (((k * p.kernel[0] + t[0]) * p.kernel[1] + t[1]) * p.kernel[2] + t[2]) * cpg + cg;
}

// One axis: tap `t` of output `o` reads input position `i` = o*stride - pad_begin + t*dilation.
struct Link {
  int64_t t, o, i;
};

// For each output position of axis a, its taps inside the input. Tap ranges are computed, not
// found by scanning the window, so a huge padding or dilation costs nothing.
std::vector<std::vector<Link>> links_by_output(const ConvProblem& p, int a) {
  std::vector<std::vector<Link>> by_o(static_cast<size_t>(p.out[a]));
  for (int64_t o = 0; o < p.out[a]; ++o) {
    const int64_t start = o * p.stride[a] - p.pad_begin[a], d = p.dilation[a];
    const int64_t first = start >= 0 ? 0 : (-start + d - 1) / d;  // first t with start + t*d >= 0
    const int64_t room = p.in[a] - 1 - start;
    const int64_t last = room < 0 ? -1 : std::min(p.kernel[a] - 1, room / d);  // last t inside
    for (int64_t t = first; t <= last; ++t) by_o[o].push_back({t, o, start + t * d});
  }
  return by_o;
}

// For each input position of axis a, the (tap, output) pairs that read it: o*stride = i +
// pad_begin - t*dilation with 0 <= o < out. The taps are bounded from both ends first.
std::vector<std::vector<Link>> links_by_input(const ConvProblem& p, int a) {
  std::vector<std::vector<Link>> by_i(static_cast<size_t>(p.in[a]));
  const int64_t s = p.stride[a], d = p.dilation[a];
  for (int64_t i = 0; i < p.in[a]; ++i) {
    const int64_t shifted = i + p.pad_begin[a];  // = o*s + t*d
    const int64_t over = shifted - (p.out[a] - 1) * s;  // t*d must be at least this
    const int64_t first = over <= 0 ? 0 : (over + d - 1) / d;
    const int64_t last = std::min(p.kernel[a] - 1, shifted / d);
    for (int64_t t = first; t <= last; ++t)
      if ((shifted - t * d) % s == 0) by_i[i].push_back({t, (shifted - t * d) / s, i});
  }
  return by_i;
}

}  // namespace

std::vector<double> conv_forward(const ConvProblem& p, const std::vector<double>& x, const std::vector<double>& w) {
  std::vector<double> y(static_cast<size_t>(p.y_elems()), 0.0);
  const auto l0 = links_by_output(p, 0), l1 = links_by_output(p, 1), l2 = links_by_output(p, 2);
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t o0 = 0; o0 < p.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < p.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < p.out[2]; ++o2) {
            const int64_t o[kAxes] = {o0, o1, o2};
            double sum = 0;
            for (int64_t cg = 0; cg < cpg; ++cg)
              for (const Link& a : l0[o0])
                for (const Link& b : l1[o1])
                  for (const Link& c : l2[o2]) {
                    const int64_t t[kAxes] = {a.t, b.t, c.t}, i[kAxes] = {a.i, b.i, c.i};
                    sum += x[offset(p, p.c, p.in, n, k / kpg * cpg + cg, i)] * w[weight_offset(p, k, cg, t)];
                  }
            y[offset(p, p.k, p.out, n, k, o)] = sum;
          }
  return y;
}

ConvGradient conv_backward_data(const ConvProblem& p, const std::vector<double>& dy, const std::vector<double>& w) {
  const auto elems = static_cast<size_t>(p.x_elems());
  ConvGradient g{std::vector<double>(elems, 0.0), std::vector<double>(elems, 0.0), std::vector<int64_t>(elems, 0)};
  const std::vector<std::vector<Link>> links[kAxes] = {links_by_input(p, 0), links_by_input(p, 1), links_by_input(p, 2)};
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  // dy's and w's offsets are sums of one part per index (offset() and weight_offset() expanded):
  // dy = n*K*outs + k*k_step + sum o[a]*o_step[a], w = k*cpg*taps + cg*cg_step + sum t[a]*t_step[a].
  // Each link carries its axis's two parts, so the innermost loop only adds.
  const bool first = p.layout == Layout::channels_first;
  const int64_t outs = p.out[0] * p.out[1] * p.out[2], taps = p.kernel[0] * p.kernel[1] * p.kernel[2];
  const int64_t o_unit = first ? 1 : p.k, t_unit = first ? 1 : cpg;
  const int64_t o_step[kAxes] = {p.out[1] * p.out[2] * o_unit, p.out[2] * o_unit, o_unit};
  const int64_t t_step[kAxes] = {p.kernel[1] * p.kernel[2] * t_unit, p.kernel[2] * t_unit, t_unit};
  const int64_t k_step = first ? outs : 1, cg_step = first ? taps : 1;
  struct Parts {
    int64_t dy, w;
  };
  std::vector<std::vector<Parts>> parts[kAxes];
  for (int a = 0; a < kAxes; ++a)
    for (const std::vector<Link>& at_i : links[a]) {
      parts[a].emplace_back();
      for (const Link& l : at_i) parts[a].back().push_back({l.o * o_step[a], l.t * t_step[a]});
    }
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t i0 = 0; i0 < p.in[0]; ++i0)
        for (int64_t i1 = 0; i1 < p.in[1]; ++i1)
          for (int64_t i2 = 0; i2 < p.in[2]; ++i2) {
            const int64_t i[kAxes] = {i0, i1, i2};
            const int64_t at = offset(p, p.c, p.in, n, c, i);
            const int64_t group = c / cpg;
            // Summed in locals, stored once; terms in the order k, tap along D, H, W.
            double sum = 0, abs_sum = 0;
            int64_t terms = 0;
            for (int64_t k = group * kpg; k < (group + 1) * kpg; ++k) {
              const int64_t dy_k = n * p.k * outs + k * k_step, w_k = k * cpg * taps + (c % cpg) * cg_step;
              for (const Parts& a : parts[0][i0])
                for (const Parts& b : parts[1][i1])
                  for (const Parts& e : parts[2][i2]) {
                    const double term = dy[dy_k + a.dy + b.dy + e.dy] * w[w_k + a.w + b.w + e.w];
                    sum += term;
                    abs_sum += std::fabs(term);
                    ++terms;
                  }
            }
            g.dx[at] = sum;
            g.abs_sum[at] = abs_sum;
            g.terms[at] = terms;
          }
  return g;
}

}  // namespace pg::ref
