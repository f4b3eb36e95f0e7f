#include "src/harness/npy_values.hpp"

#include "kernels/common/numeric.hpp"

namespace pg {

std::vector<double> npy_values(const NpyArray& a) {
  const DType t = npy_float_dtype(a.header.type);
  std::vector<double> v(static_cast<size_t>(a.header.elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load_as_double(t, a.data.data(), static_cast<int64_t>(i));
  return v;
}

NpyArray npy_from_values(DType t, const std::vector<int64_t>& shape, const std::vector<double>& v) {
  NpyArray a;
  a.header.type = npy_type_of(t);
  a.header.shape = shape;
  a.data.resize(v.size() * dtype_size(t));
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t, a.data.data(), static_cast<int64_t>(i), v[i]);
  return a;
}

}  // namespace pg
