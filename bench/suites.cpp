#include "bench/rows.hpp"

namespace pg::bench {

const std::vector<std::string>& suite_names() {
  static const std::vector<std::string> names{"baseline", "networks"};
  return names;
}

std::vector<Row> suite_rows(const std::string& suite) {
  if (suite == "baseline") return baseline_rows();
  if (suite == "networks") return networks_rows();
  return {};
}

}  // namespace pg::bench
