// A pooling variant on one kind of backend as a campaign Target: cases are drawn by the same
// generators as the variant's RapidCheck property (fuzz/problem_gen.hpp: problems inside its
// domain, and their data), verified by run_and_verify, shrunk with RapidCheck's own shrinks.
#pragma once

#include <memory>

#include "fuzz/target.hpp"
#include "src/harness/registry.hpp"

namespace pg::fuzz {

// `v` must outlive the target (registry variants live for the whole process).
std::shared_ptr<const Target> pool_target(const Variant& v, BackendKind kind);

}  // namespace pg::fuzz
