#include "reference/rounding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pg::ref {
namespace {

// A binary format by its fraction bits, smallest normal exponent and largest exponent.
struct Format {
  int fraction_bits;
  int min_exponent;  // of the smallest normal: 2^min_exponent
  int max_exponent;  // of the largest finite value: (2 - 2^-fraction_bits) * 2^max_exponent
};

double round_to(const Format& f, double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const double mag = std::fabs(v);
  int e = 0;
  std::frexp(mag, &e);  // mag = m * 2^e, m in [0.5, 1): the leading bit is 2^(e - 1)
  const int lead = std::max(e - 1, f.min_exponent);  // subnormals share the smallest normal's spacing
  const int quantum = lead - f.fraction_bits;        // spacing of representable values: 2^quantum
  // mag / 2^quantum < 2^(fraction_bits + 1): its integer and fractional parts are exact doubles.
  const double scaled = std::ldexp(mag, -quantum);
  double units = std::floor(scaled);
  const double rest = scaled - units;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(units, 2) != 0)) units += 1;
  const double rounded = std::ldexp(units, quantum);
  const double max_finite = std::ldexp(2 - std::ldexp(1.0, -f.fraction_bits), f.max_exponent);
  const double out = rounded > max_finite ? std::numeric_limits<double>::infinity() : rounded;
  return std::copysign(out, v);
}

}  // namespace

double round_nearest_even(DType t, double v) {
  switch (t) {
    case DType::f16: return round_to({10, -14, 15}, v);
    case DType::bf16: return round_to({7, -126, 127}, v);
    case DType::f32: return round_to({23, -126, 127}, v);
    case DType::f64: return v;
  }
  return v;
}

}  // namespace pg::ref
