// What a variant's launch checks before its body runs (max and avg alike). The registry asks supports() first;
// these make a direct call (a test, a tool) on a problem or buffer the body cannot take throw
// pg::Error naming the variant, instead of running a different body or reading out of bounds.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "src/model/backend.hpp"
#include "src/model/domain.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"
#include "kernels/common/pack.hpp"

namespace pg {

template <class V>
void require_supported(const Problem& p) {
  const Domain::Verdict in = V::domain().admits(p);
  const Support s = in.ok ? V::supports(p) : Support::no(in.why);
  if (!s.ok) throw Error(std::string(V::traits.name) + " does not run " + to_string(p) + ": " + s.why);
}

// Bodies that move 16-byte packs of every buffer they name; the harness allocates them so.
inline void require_aligned16(const char* variant, std::initializer_list<std::pair<const char*, const void*>> buffers) {
  for (const auto& [what, ptr] : buffers)
    if (!aligned16(ptr)) throw Error(std::string(variant) + ": " + what + " is not 16-byte aligned");
}

}  // namespace pg
