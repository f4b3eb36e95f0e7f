// Failures that are neither bad input (src/model/invalid_input.hpp) nor a runtime error: the CLI maps
// each to its own exit code (src/cli/exit_codes.hpp).
#pragma once

#include "src/model/backend.hpp"

namespace pg {

// A valid request that cannot be served here: a variant that does not support the problem, a
// backend this build or machine lacks.
struct CannotRun : Error {
  using Error::Error;
};

// A kernel disagreed with the oracle where the job was to hand back its output; the message
// is the failure report.
struct Mismatch : Error {
  using Error::Error;
};

}  // namespace pg
