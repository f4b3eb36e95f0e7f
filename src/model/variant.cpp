#include "src/model/variant.hpp"

namespace pg {

Support Variant::supports(const Problem& p, BackendKind backend) const {
  if (p.op != op) return Support::no(std::string("is a ") + op_name(op) + "-pool variant");
  return checked_support(*this, p, backend);
}

void Variant::launch(Backend& b, const Problem& p, const BwdBuffers& buf) const {
  checked_launch(*this, b, p, buf, to_string(p));
}

}  // namespace pg
