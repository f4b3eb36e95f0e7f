#include "reference/pool_reference.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>
#include <sstream>


namespace pg::ref {
namespace {

int64_t offset(const Problem& p, const int64_t* len, int64_t n, int64_t c, const int64_t* s) {
  if (p.layout == Layout::channels_first)
    return (((n * p.c + c) * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2];
  return (((n * len[0] + s[0]) * len[1] + s[1]) * len[2] + s[2]) * p.c + c;
}

struct Tap {
  int64_t pos[kAxes];
  int64_t number;  // row-major position inside the window
};

// The tap numbers [*first, *last] of output position o's window along axis a that lie inside
// the input (empty when *first > *last). Computed, not searched: a kernel of 2^40 with matching
// padding on a 4-element input has 4 inside taps, and the loops below visit only those.
void axis_inside(const Problem& p, int a, int64_t o, int64_t* first, int64_t* last) {
  const int64_t start = o * p.stride[a] - p.pad_begin[a];
  const int64_t d = p.dilation[a];
  *first = start >= 0 ? 0 : (-start + d - 1) / d;
  *last = start > p.in[a] - 1 ? -1 : std::min(p.kernel[a] - 1, (p.in[a] - 1 - start) / d);
}

// The taps of output position o's window that lie inside the input, in row-major order. The
// vector is this thread's, reused by its next call (a window's taps are used before the next
// window's are asked for): one allocation per window made the oracle's 2^30-window problems
// spend most of their time in malloc.
const std::vector<Tap>& inside_taps(const Problem& p, const int64_t* o) {
  int64_t first[kAxes], last[kAxes];
  for (int a = 0; a < kAxes; ++a) axis_inside(p, a, o[a], &first[a], &last[a]);
  thread_local std::vector<Tap> taps;
  taps.clear();
  for (int64_t k0 = first[0]; k0 <= last[0]; ++k0)
    for (int64_t k1 = first[1]; k1 <= last[1]; ++k1)
      for (int64_t k2 = first[2]; k2 <= last[2]; ++k2) {
        const int64_t k[kAxes] = {k0, k1, k2};
        Tap t;
        for (int a = 0; a < kAxes; ++a) t.pos[a] = o[a] * p.stride[a] - p.pad_begin[a] + k[a] * p.dilation[a];
        t.number = (k0 * p.kernel[1] + k1) * p.kernel[2] + k2;
        taps.push_back(t);
      }
  return taps;
}

int64_t encode_index(const Problem& p, int64_t n, int64_t c, const Tap& t) {
  const int64_t plane = p.in[0] * p.in[1] * p.in[2];
  switch (p.index_format) {
    case IndexFormat::plane:
      return (t.pos[0] * p.in[1] + t.pos[1]) * p.in[2] + t.pos[2];
    case IndexFormat::global_row:
      return (n * p.c + c) * plane + (t.pos[0] * p.in[1] + t.pos[1]) * p.in[2] + t.pos[2];
    case IndexFormat::global_col:
      return (n * p.c + c) * plane + t.pos[0] + t.pos[1] * p.in[0] + t.pos[2] * p.in[0] * p.in[1];
    case IndexFormat::window:
      return t.number;
  }
  return kNoTap;
}

// Calls f(n, c, o, output_offset) for every output element, in parallel where that cannot
// change an answer. The work is split into units that never touch one element from two threads:
// whole (n, c) planes (a plane's windows read and write only that plane), and, when there are
// fewer planes than threads, slices of a plane along its outermost axis if windows do not
// overlap along it (each input element then belongs to one slice's windows). Every element's
// terms are added in the order one thread would add them, so the answer does not depend on the
// thread count. An exception is rethrown from the lowest-numbered unit that raised one, so the
// error reported is the same on every run.
template <class F>
void for_each_output(const Problem& p, F f) {
  const int64_t planes = p.n * p.c;
  const int outer = kAxes - p.dims;
  // Threads pay off from about a million elements; below that one thread keeps tests cheap.
  constexpr int64_t kElementsPerThread = int64_t{1} << 20;
  const int64_t work = p.in_elems() + p.out_elems();
  const int64_t threads = std::min<int64_t>(static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency())),
                                            work / kElementsPerThread);
  const bool slice = planes < threads && p.stride[outer] >= p.effective_kernel(outer);
  const int64_t slices = slice ? std::min(threads, p.out[outer]) : 1;
  auto run = [&](int64_t unit_begin, int64_t unit_end) {
    for (int64_t unit = unit_begin; unit < unit_end; ++unit) {
      const int64_t nc = unit / slices, part = unit % slices;
      const int64_t n = nc / p.c, c = nc % p.c;
      int64_t lo[kAxes] = {0, 0, 0}, hi[kAxes] = {p.out[0], p.out[1], p.out[2]};
      lo[outer] = p.out[outer] * part / slices;
      hi[outer] = p.out[outer] * (part + 1) / slices;
      for (int64_t o0 = lo[0]; o0 < hi[0]; ++o0)
        for (int64_t o1 = lo[1]; o1 < hi[1]; ++o1)
          for (int64_t o2 = lo[2]; o2 < hi[2]; ++o2) {
            const int64_t o[kAxes] = {o0, o1, o2};
            f(n, c, o, offset(p, p.out, n, c, o));
          }
    }
  };
  const int64_t units = planes * slices;
  const int64_t workers = std::min(threads, units);
  if (workers <= 1) {
    run(0, units);
    return;
  }
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < workers; ++t)
    pool.emplace_back([&, t] {
      try {
        run(units * t / workers, units * (t + 1) / workers);
      } catch (...) {
        errors[static_cast<size_t>(t)] = std::current_exception();
      }
    });
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Position in `taps` of the window's maximum under the problem's tie and NaN rules; -1 when
// the window has no tap inside the input. The first tap starts as the maximum and a later tap
// replaces it when it wins: NaN under propagate (so the last NaN wins, as in PyTorch), any
// number over a NaN under ignore (so an all-NaN window keeps its first tap), else by the tie
// rule. Comparing against the first tap instead of a -inf seed makes an all -inf window
// select a real tap.
int64_t select_max(const Problem& p, const std::vector<Tap>& taps, const std::vector<double>& x,
                   int64_t n, int64_t c) {
  if (taps.empty()) return -1;
  auto value = [&](size_t i) { return x[offset(p, p.in, n, c, taps[i].pos)]; };
  size_t best = 0;
  for (size_t i = 1; i < taps.size(); ++i) {
    const double v = value(i), m = value(best);
    bool wins;
    if (std::isnan(v)) wins = p.nan == NanRule::propagate;
    else if (std::isnan(m)) wins = p.nan == NanRule::ignore;
    else wins = p.tie == TieRule::first ? v > m : v >= m;
    if (wins) best = i;
  }
  return static_cast<int64_t>(best);
}

Gradient empty_gradient(const Problem& p) {
  const auto n = static_cast<size_t>(p.in_elems());
  return Gradient{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0), std::vector<int64_t>(n, 0)};
}

void add_term(Gradient& g, int64_t at, double term) {
  g.dx[at] += term;
  g.abs_sum[at] += std::fabs(term);
  g.terms[at] += 1;
}

}  // namespace

int64_t avg_divisor(const Problem& p, const int64_t* o) {
  switch (p.divisor) {
    case Divisor::full_kernel:
      return p.kernel[0] * p.kernel[1] * p.kernel[2];
    case Divisor::exclude_pad: {
      int64_t count = 1;
      for (int a = 0; a < kAxes; ++a) {
        int64_t first, last;
        axis_inside(p, a, o[a], &first, &last);
        count *= std::max<int64_t>(last - first + 1, 0);
      }
      return count;
    }
    case Divisor::include_pad: {
      // PyTorch: the window clamped to input + padding, so taps in the ceil-mode overhang
      // beyond the end padding do not count.
      int64_t count = 1;
      for (int a = 0; a < kAxes; ++a) {
        // Taps k with start + k * dilation < in + pad_end; start >= -pad_begin always.
        const int64_t start = o[a] * p.stride[a] - p.pad_begin[a];
        const int64_t room = p.in[a] + p.pad_end[a] - 1 - start;
        count *= room < 0 ? 0 : std::min(p.kernel[a], room / p.dilation[a] + 1);
      }
      return count;
    }
  }
  return 0;
}

Forward forward(const Problem& p, const std::vector<double>& x) {
  Forward f;
  f.y.assign(static_cast<size_t>(p.out_elems()), 0.0);
  if (p.op == Op::max) f.index.assign(f.y.size(), kNoTap);
  for_each_output(p, [&](int64_t n, int64_t c, const int64_t* o, int64_t out_at) {
    const std::vector<Tap>& taps = inside_taps(p, o);
    if (p.op == Op::max) {
      const int64_t best = select_max(p, taps, x, n, c);
      if (best < 0) {
        f.y[out_at] = -INFINITY;
        return;
      }
      f.y[out_at] = x[offset(p, p.in, n, c, taps[best].pos)];
      f.index[out_at] = encode_index(p, n, c, taps[best]);
    } else {
      if (taps.empty()) return;  // y stays 0
      double sum = 0;
      for (const Tap& t : taps) sum += x[offset(p, p.in, n, c, t.pos)];
      const int64_t divisor = p.has_divisor_override ? p.divisor_override : avg_divisor(p, o);
      f.y[out_at] = sum / static_cast<double>(divisor);
    }
  });
  return f;
}

Gradient backward_avg(const Problem& p, const std::vector<double>& dy) {
  Gradient g = empty_gradient(p);
  for_each_output(p, [&](int64_t n, int64_t c, const int64_t* o, int64_t out_at) {
    const std::vector<Tap>& taps = inside_taps(p, o);
    if (taps.empty()) return;
    const int64_t divisor = p.has_divisor_override ? p.divisor_override : avg_divisor(p, o);
    const double term = dy[out_at] / static_cast<double>(divisor);
    for (const Tap& t : taps) add_term(g, offset(p, p.in, n, c, t.pos), term);
  });
  return g;
}

Gradient backward_max_indices(const Problem& p, const std::vector<double>& dy,
                              const std::vector<int64_t>& index, ForeignIndex foreign) {
  Gradient g = empty_gradient(p);
  for_each_output(p, [&](int64_t n, int64_t c, const int64_t* o, int64_t out_at) {
    const std::vector<Tap>& taps = inside_taps(p, o);
    const int64_t stored = index[out_at];
    if (taps.empty() && stored == kNoTap) return;
    for (const Tap& t : taps) {
      if (encode_index(p, n, c, t) == stored) {
        add_term(g, offset(p, p.in, n, c, t.pos), dy[out_at]);
        return;
      }
    }
    if (foreign == ForeignIndex::skip) return;
    std::ostringstream e;
    e << "index " << stored << " at output (n=" << n << ", c=" << c << ", pos=" << o[0] << ","
      << o[1] << "," << o[2] << ") is not a tap of its window inside the input";
    throw BadIndex(e.str(), out_at);
  });
  return g;
}

Gradient backward_max_recompute(const Problem& p, const std::vector<double>& x,
                                const std::vector<double>& dy) {
  Gradient g = empty_gradient(p);
  for_each_output(p, [&](int64_t n, int64_t c, const int64_t* o, int64_t out_at) {
    const std::vector<Tap>& taps = inside_taps(p, o);
    const int64_t best = select_max(p, taps, x, n, c);
    if (best >= 0) add_term(g, offset(p, p.in, n, c, taps[best].pos), dy[out_at]);
  });
  return g;
}

}  // namespace pg::ref
