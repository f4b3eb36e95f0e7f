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

// Finalized in place; whether it is valid. Under pad=same or pad=valid, conv_finalize sets the
// pads again, so a pad step may change nothing: complexity() then turns it away.
bool finish(Problem& q) {
  finalize(q);
  return validate(q).empty();
}

bool finish(ConvProblem& q) {
  conv_finalize(q);
  return conv_validate(q).empty();
}

// The candidates of p, in the order they are added: each a copy of p with one change, kept where
// it is valid and simpler than p.
template <class P>
class Candidates {
 public:
  explicit Candidates(const P& p) : p_(p) {}

  template <class Change>
  void add(Change change) {
    P q = p_;
    change(q);
    if (finish(q) && complexity(q) < complexity(p_)) out_.push_back(q);
  }
  // One candidate for each of lower_values(v, least), `set(q, value)` making it.
  template <class Set>
  void lower(int64_t v, int64_t least, Set set) {
    for (const int64_t x : lower_values(v, least)) add([&](P& q) { set(q, x); });
  }

  std::vector<P> take() { return std::move(out_); }

 private:
  const P& p_;
  std::vector<P> out_;
};

// The steps both kinds share: an axis dropped, the batch, the per-axis parameters, the layout and
// the dtype.
template <class P>
void shared_steps(const P& p, Candidates<P>& c) {
  for (int a = kAxes - p.dims; p.dims > 1 && a < kAxes; ++a) c.add([a](P& q) { q = without_axis(q, a); });
  c.lower(p.n, 1, [](P& q, int64_t n) { q.n = n; });
  for (const AxisField<P>& f : axis_fields<P>())
    for (int a = kAxes - p.dims; a < kAxes; ++a)
      c.lower((p.*f.values)[a], f.least, [&](P& q, int64_t v) { (q.*f.values)[a] = v; });
  if (p.layout != Layout::channels_first) c.add([](P& q) { q.layout = Layout::channels_first; });
  if (p.dtype != DType::f32) c.add([](P& q) { q.dtype = DType::f32; });
}

}  // namespace

std::vector<Problem> simpler_problems(const Problem& p) {
  Candidates<Problem> c(p);
  shared_steps(p, c);
  c.lower(p.c, 1, [](Problem& q, int64_t v) { q.c = v; });
  if (p.ceil_mode) c.add([](Problem& q) { q.ceil_mode = false; });
  if (p.has_divisor_override)
    c.add([](Problem& q) {
      q.has_divisor_override = false;
      q.divisor_override = 0;
    });
  return c.take();
}

std::vector<ConvProblem> simpler_conv_problems(const ConvProblem& p) {
  Candidates<ConvProblem> c(p);
  shared_steps(p, c);
  if (p.groups > 1) c.add([](ConvProblem& q) { q.groups = 1; });  // the same channels, one group
  c.lower(p.groups, 1, [&p](ConvProblem& q, int64_t g) {  // fewer groups of the same size
    q.groups = g;
    q.c = g * p.c_per_group();
    q.k = g * p.k_per_group();
  });
  c.lower(p.c_per_group(), 1, [&p](ConvProblem& q, int64_t v) { q.c = p.groups * v; });
  c.lower(p.k_per_group(), 1, [&p](ConvProblem& q, int64_t v) { q.k = p.groups * v; });
  // The pads the mode resolved to, given explicitly.
  if (p.pad_mode != ConvPadMode::explicit_pads) c.add([](ConvProblem& q) { q.pad_mode = ConvPadMode::explicit_pads; });
  return c.take();
}

}  // namespace pg::fuzz
