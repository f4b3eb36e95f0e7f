#include "fuzz/simplify.hpp"

namespace pg::fuzz {
namespace {

// The values to try for a count at v whose simplest value is `least`: least, halfway, v - 1.
std::vector<int64_t> lower_values(int64_t v, int64_t least) {
  std::vector<int64_t> out;
  if (v <= least) return out;
  out.push_back(least);
  const int64_t half = least + (v - least) / 2;
  if (half > least) out.push_back(half);
  if (v - 1 > half) out.push_back(v - 1);
  return out;
}

// The per-axis parameters both problem kinds share, with the simplest value of each.
template <class P>
struct AxisField {
  int64_t (P::*values)[kAxes];
  int64_t least;
};

template <class P>
std::vector<AxisField<P>> axis_fields() {
  // The window first: a smaller window lets the lengths shrink further.
  return {{&P::kernel, 1}, {&P::dilation, 1}, {&P::stride, 1}, {&P::pad_begin, 0}, {&P::pad_end, 0}, {&P::in, 1}};
}

// p without its used axis a: the axes before it move up one, the first becomes unused.
template <class P>
P without_axis(P p, int a) {
  const int first = kAxes - p.dims;
  for (const AxisField<P>& f : axis_fields<P>()) {
    int64_t* v = p.*f.values;
    for (int b = a; b > first; --b) v[b] = v[b - 1];
    v[first] = f.least;
  }
  --p.dims;
  return p;
}

// What every step lowers: the sum of the counts, the used axes' lengths and window parameters, and
// one for each setting away from its simplest value. `extra`: the kind's own counts and settings.
template <class P>
int64_t complexity(const P& p, int64_t extra) {
  int64_t sum = p.dims + p.n + extra + (p.layout != Layout::channels_first) + (p.dtype != DType::f32);
  for (const AxisField<P>& f : axis_fields<P>())
    for (int a = kAxes - p.dims; a < kAxes; ++a) sum += (p.*f.values)[a];
  return sum;
}

int64_t complexity(const Problem& p) {
  return complexity(p, p.c + p.ceil_mode + p.has_divisor_override);
}

int64_t complexity(const ConvProblem& p) {
  return complexity(p, p.c + p.k + p.groups + (p.pad_mode != ConvPadMode::explicit_pads));
}

// The candidates both kinds share (finalize and validate are the caller's): an axis dropped, the
// batch, the per-axis parameters, the layout and the dtype. `add` keeps those valid and simpler.
template <class P, class Add>
void shared_steps(const P& p, Add add) {
  for (int a = kAxes - p.dims; p.dims > 1 && a < kAxes; ++a) add(without_axis(p, a));
  for (const int64_t n : lower_values(p.n, 1)) {
    P q = p;
    q.n = n;
    add(q);
  }
  for (const AxisField<P>& f : axis_fields<P>())
    for (int a = kAxes - p.dims; a < kAxes; ++a)
      for (const int64_t v : lower_values((p.*f.values)[a], f.least)) {
        P q = p;
        (q.*f.values)[a] = v;
        add(q);
      }
  if (p.layout != Layout::channels_first) {
    P q = p;
    q.layout = Layout::channels_first;
    add(q);
  }
  if (p.dtype != DType::f32) {
    P q = p;
    q.dtype = DType::f32;
    add(q);
  }
}

}  // namespace

std::vector<Problem> simpler_problems(const Problem& p) {
  std::vector<Problem> out;
  auto add = [&](Problem q) {
    finalize(q);
    if (validate(q).empty() && complexity(q) < complexity(p)) out.push_back(q);
  };
  shared_steps(p, add);
  for (const int64_t c : lower_values(p.c, 1)) {
    Problem q = p;
    q.c = c;
    add(q);
  }
  if (p.ceil_mode) {
    Problem q = p;
    q.ceil_mode = false;
    add(q);
  }
  if (p.has_divisor_override) {
    Problem q = p;
    q.has_divisor_override = false;
    q.divisor_override = 0;
    add(q);
  }
  return out;
}

std::vector<ConvProblem> simpler_conv_problems(const ConvProblem& p) {
  std::vector<ConvProblem> out;
  auto add = [&](ConvProblem q) {
    conv_finalize(q);
    // Under pad=same or pad=valid, finalize sets the pads again: a pad step may change nothing.
    if (conv_validate(q).empty() && complexity(q) < complexity(p)) out.push_back(q);
  };
  shared_steps(p, add);
  if (p.groups > 1) {
    ConvProblem merged = p;  // the same channels, one group
    merged.groups = 1;
    add(merged);
  }
  for (const int64_t g : lower_values(p.groups, 1)) {  // fewer groups of the same size
    ConvProblem q = p;
    q.groups = g;
    q.c = g * p.c_per_group();
    q.k = g * p.k_per_group();
    add(q);
  }
  for (const int64_t c : lower_values(p.c_per_group(), 1)) {
    ConvProblem q = p;
    q.c = p.groups * c;
    add(q);
  }
  for (const int64_t k : lower_values(p.k_per_group(), 1)) {
    ConvProblem q = p;
    q.k = p.groups * k;
    add(q);
  }
  if (p.pad_mode != ConvPadMode::explicit_pads) {
    ConvProblem q = p;  // the pads the mode resolved to, given explicitly
    q.pad_mode = ConvPadMode::explicit_pads;
    add(q);
  }
  return out;
}

}  // namespace pg::fuzz
