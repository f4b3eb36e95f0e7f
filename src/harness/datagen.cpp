#include "src/harness/datagen.hpp"
#include "kernels/common/numeric.hpp"

#include <cmath>
#include <random>

namespace pg {

const char* data_kind_name(DataKind k) {
  switch (k) {
    case DataKind::ints: return "ints";
    case DataKind::special: return "special";
    case DataKind::real: return "real";
    case DataKind::foreign: return "foreign";
  }
  return "?";
}

bool parse_data_kind(const std::string& s, DataKind* k) {
  for (DataKind v : {DataKind::ints, DataKind::special, DataKind::real, DataKind::foreign})
    if (s == data_kind_name(v)) {
      *k = v;
      return true;
    }
  return false;
}

namespace {

// Rounds v to the nearest value of the dtype, so the oracle sees exactly what the kernel reads.
double representable(DType t, double v) {
  double out;
  unsigned char buf[8];
  store_from_double(t, buf, 0, v);
  out = load_as_double(t, buf, 0);
  return out;
}

}  // namespace

HostData make_data(const Problem& p, const DataSpec& spec) {
  // mt19937_64's output sequence is fixed by the standard; the mapping below uses only it,
  // never the library's distributions, whose output differs between implementations.
  std::mt19937_64 rng(spec.seed);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };

  HostData d;
  d.x.resize(static_cast<size_t>(p.in_elems()));
  d.dy.resize(static_cast<size_t>(p.out_elems()));
  const int64_t range = 1 + below(6);  // 1..6: small ranges make many ties
  for (double& v : d.x) {
    if (spec.kind == DataKind::real) {
      v = representable(p.dtype, 2 * unit() - 1);
      continue;
    }
    v = static_cast<double>(below(2 * range + 1) - range);
    if (spec.kind == DataKind::special) {
      const int64_t roll = below(100);
      if (roll < 6) v = NAN;
      else if (roll < 12) v = -INFINITY;
      else if (roll < 14) v = INFINITY;
    }
  }
  for (double& v : d.dy) {
    if (spec.kind == DataKind::real) v = representable(p.dtype, 2 * unit() - 1);
    else v = static_cast<double>(below(17) - 8);
    if (spec.kind == DataKind::special && below(200) == 0) v = below(2) ? INFINITY : NAN;
  }
  return d;
}

bool conv_data_kind_ok(DataKind k) { return k == DataKind::ints || k == DataKind::real; }

ConvHostData make_conv_data(const ConvProblem& p, const DataSpec& spec) {
  std::mt19937_64 rng(spec.seed ^ 0xc0ffee5eedull);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  // ints: x and dy in [-4, 4], w in [-3, 3]: sums stay small enough for f16's 11 bits in the
  // fuzz's sizes, and a zero is common enough that cancellations happen.
  auto fill = [&](std::vector<double>& v, int64_t count, int64_t range) {
    v.resize(static_cast<size_t>(count));
    for (double& e : v)
      e = spec.kind == DataKind::real ? representable(p.dtype, 2 * unit() - 1)
                                      : static_cast<double>(below(2 * range + 1) - range);
  };
  ConvHostData d;
  fill(d.x, p.x_elems(), 4);
  fill(d.w, p.w_elems(), 3);
  fill(d.dy, p.y_elems(), 4);
  return d;
}

void make_foreign(const Problem& p, const DataSpec& spec, std::vector<int64_t>* index) {
  std::mt19937_64 rng(spec.seed ^ 0x9e3779b97f4a7c15ull);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  const bool window = p.index_format == IndexFormat::window;
  const bool global = p.index_format == IndexFormat::global_row || p.index_format == IndexFormat::global_col;
  // Past every position (or every tap number) the format can name, and still inside the type.
  const int64_t past = window ? std::min<int64_t>(p.taps() + 3, 254) : (global ? p.in_elems() : p.in_plane()) + 5;
  std::vector<int64_t>& idx = *index;
  const std::vector<int64_t> original = idx;
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || below(4) != 0) continue;  // no tap in the window: keep its marker
    switch (below(5)) {
      case 0: idx[i] = -3; break;
      case 1: idx[i] = past; break;
      case 2:  // the same position in another (n, c) plane
        if (global && p.n * p.c > 1) idx[i] += idx[i] + p.in_plane() < p.in_elems() ? p.in_plane() : -p.in_plane();
        break;
      case 3:  // low word a tap, high word not 0 (above or below): an int32 truncation would follow it
        if (p.index_type == IndexType::i64) idx[i] += below(2) ? (int64_t{1} << 32) : -(int64_t{1} << 32);
        break;
      case 4: idx[i] = original[(i + 1 + static_cast<size_t>(below(7))) % original.size()]; break;
    }
  }
}

}  // namespace pg
