#include "src/model/conv_variant.hpp"

#include <algorithm>
#include <sstream>

namespace pg {
Domain::Verdict ConvDomain::admits(const ConvProblem& p) const {
  auto no = [](std::string why) { return Domain::Verdict{false, std::move(why)}; };
  if (p.dims < min_dims || p.dims > max_dims)
    return no("dims: " + std::to_string(min_dims) + "D to " + std::to_string(max_dims) + "D only");
  if (!in_list(layouts, p.layout)) return no(std::string("layout: ") + layout_name(p.layout) + " not handled");
  if (!in_list(dtypes, p.dtype)) return no(std::string("dtype: ") + dtype_name(p.dtype) + " not handled");
  return {};
}

std::string ConvDomain::describe() const {
  std::ostringstream o;
  o << min_dims << "D";
  if (max_dims != min_dims) o << "-" << max_dims << "D";
  o << "; any window and groups; ";
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
