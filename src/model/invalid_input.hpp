// Input the user can fix (a bad parameter, a malformed or mismatched .npy file): the CLI
// prints the one-line message and exits 2, where any other failure exits 1.
#pragma once

#include "src/model/backend.hpp"

namespace pg {

struct InvalidInput : Error {
  using Error::Error;
};

}  // namespace pg
