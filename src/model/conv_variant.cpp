#include "src/model/conv_variant.hpp"

#include <algorithm>
#include <sstream>

namespace pg {
namespace {

template <class T>
bool contains(const std::vector<T>& list, T v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

const char* layout_name(Layout l) { return l == Layout::channels_first ? "channels-first" : "channels-last"; }

}  // namespace

Domain::Verdict ConvDomain::admits(const ConvProblem& p) const {
  auto no = [](std::string why) { return Domain::Verdict{false, std::move(why)}; };
  if (p.dims < min_dims || p.dims > max_dims)
    return no("dims: " + std::to_string(min_dims) + "D to " + std::to_string(max_dims) + "D only");
  if (!contains(layouts, p.layout)) return no(std::string("layout: ") + layout_name(p.layout) + " not handled");
  if (!contains(dtypes, p.dtype)) return no(std::string("dtype: ") + dtype_name(p.dtype) + " not handled");
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
  if (backend == BackendKind::cpu && gpu_only)
    return Support::no("GPU only: needs block cooperation the CPU backend does not model");
  if (backend == BackendKind::gpu && !launch_gpu) return Support::no("not built for the GPU");
  const Domain::Verdict in = domain.admits(p);
  if (!in.ok) return Support::no(in.why);
  return supports_problem(p);
}

void ConvVariant::launch(Backend& b, const ConvProblem& p, const ConvBuffers& buf) const {
  const Support s = supports(p, b.kind());
  if (!s.ok)
    throw Error("variant " + name + " does not support " + conv_to_string(p) + " on " + b.name() + ": " + s.why);
  const ConvLaunchFn& fn = b.kind() == BackendKind::cpu ? launch_cpu : launch_gpu;
  fn(b, p, buf);
}

}  // namespace pg
