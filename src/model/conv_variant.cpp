#include "src/model/conv_variant.hpp"

#include <algorithm>
#include <sstream>

namespace pg {
Domain::Verdict ConvDomain::admits(const ConvProblem& p) const {
  auto no = [](std::string why) { return Domain::Verdict{false, std::move(why)}; };
  if (p.dims < min_dims || p.dims > max_dims)
    return no("dims: " + std::to_string(min_dims) + "D to " + std::to_string(max_dims) + "D only");
  if (only_kernel > 0)
    for (int a = kAxes - p.dims; a < kAxes; ++a)
      if (p.kernel[a] != only_kernel || p.stride[a] != 1 || p.dilation[a] != 1)
        return no("window: kernel " + std::to_string(only_kernel) + ", stride 1 and dilation 1 on every axis only");
  if (!in_list(layouts, p.layout)) return no(std::string("layout: ") + layout_name(p.layout) + " not handled");
  if (!in_list(dtypes, p.dtype)) return no(std::string("dtype: ") + dtype_name(p.dtype) + " not handled");
  return {};
}

std::string ConvDomain::describe() const {
  std::ostringstream o;
  o << min_dims << "D";
  if (max_dims != min_dims) o << "-" << max_dims << "D";
  if (only_kernel > 0) o << "; kernel " << only_kernel << " stride 1 dilation 1, any padding and groups; ";
  else o << "; any window and groups; ";
  for (size_t i = 0; i < layouts.size(); ++i) o << (i ? "," : "") << layout_name(layouts[i]);
  o << "; ";
  for (size_t i = 0; i < dtypes.size(); ++i) o << (i ? "," : "") << dtype_name(dtypes[i]);
  return o.str();
}

Support ConvVariant::supports(const ConvProblem& p, BackendKind backend) const {
  return checked_support(*this, p, backend);
}

void ConvVariant::launch(Backend& b, const ConvProblem& p, const ConvBuffers& buf) const {
  checked_launch(*this, b, p, buf, conv_to_string(p));
}

}  // namespace pg
