// A conv backward-data variant on one kind of backend as a campaign Target: cases are drawn by
// the same generators as the variant's fuzz_conv properties (fuzz/conv_problem_gen.hpp: problems
// inside its ConvDomain, ints or real data), verified by conv_run_and_verify, shrunk with
// RapidCheck's own shrinks, tagged by fuzz/conv_coverage.hpp.
#pragma once

#include <memory>

#include "fuzz/target.hpp"
#include "src/harness/conv_registry.hpp"

namespace pg::fuzz {

// `v` must outlive the target (registry variants live for the whole process).
std::shared_ptr<const Target> conv_target(const ConvVariant& v, BackendKind kind);

}  // namespace pg::fuzz
