// The backend a test binary runs on, chosen by --backend=cpu|gpu on its command line.
#pragma once

#include "src/model/backend.hpp"

namespace pg::test {

Backend& backend();

}  // namespace pg::test
