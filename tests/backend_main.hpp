// The backend a test binary runs on, chosen by --backend=cpu|gpu on its command line.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "src/model/backend.hpp"

namespace pg::test {

Backend& backend();

// A variant's name as a gtest parameter name, where '.' and '-' are not allowed.
inline std::string variant_param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s)
    if (ch == '.' || ch == '-') ch = '_';
  return s;
}

}  // namespace pg::test
