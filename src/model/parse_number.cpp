#include "src/model/parse_number.hpp"

namespace pg {

std::optional<int64_t> parse_int64(std::string_view text, std::string* why) {
  if (text.empty()) {
    *why = "is empty";
    return std::nullopt;
  }
  const bool negative = text[0] == '-';
  const std::string_view digits = negative ? text.substr(1) : text;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    *why = "is not a decimal integer (digits with an optional leading '-', no '+', spaces or hex)";
    return std::nullopt;
  }
  // Accumulated negatively: INT64_MIN has no positive counterpart.
  int64_t value = 0;
  for (const char ch : digits) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_sub_overflow(value, ch - '0', &value)) {
      *why = "is out of range for a 64-bit integer";
      return std::nullopt;
    }
  }
  if (!negative && __builtin_mul_overflow(value, -1, &value)) {
    *why = "is out of range for a 64-bit integer";
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<int64_t>> parse_int64_list(std::string_view text, char separator, std::string* why) {
  std::vector<int64_t> values;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    const std::string_view item = text.substr(start, end == std::string_view::npos ? end : end - start);
    std::string item_why;
    const std::optional<int64_t> v = parse_int64(item, &item_why);
    if (!v) {
      *why = "element " + std::to_string(values.size() + 1) + " ('" + std::string(item) + "') " + item_why;
      return std::nullopt;
    }
    values.push_back(*v);
    if (end == std::string_view::npos) return values;
    start = end + 1;
  }
}

}  // namespace pg
