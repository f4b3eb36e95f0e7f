#include "src/cli/parse_options.hpp"

#include "src/model/invalid_input.hpp"
#include "src/model/parse_number.hpp"

namespace pg {

int64_t parse_int_option(const std::string& text, const std::string& option) {
  std::string why;
  const std::optional<int64_t> v = parse_int64(text, &why);
  if (!v) throw InvalidInput(option + " = '" + text + "' " + why);
  return *v;
}

int64_t parse_count_option(const std::string& text, const std::string& option) {
  const int64_t v = parse_int_option(text, option);
  if (v < 0) throw InvalidInput(option + " = '" + text + "' must be >= 0");
  return v;
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::string why;
  std::optional<std::vector<int64_t>> v = parse_int64_list(text, ',', &why);
  if (!v) throw InvalidInput(option + " = '" + text + "': " + why);
  return std::move(*v);
}

}  // namespace pg
