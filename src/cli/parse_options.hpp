// Option values as the CLI reads them: strict integers and comma lists (src/model/parse_number.hpp
// has the rules), every refusal an InvalidInput that names the option and quotes the text, so
// `poolgrad CMD` prints one line and exits 2. CLI11 hands these over as strings: its own number
// parsing accepts '+2', '0x2' and ' 2'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pg {

int64_t parse_int_option(const std::string& text, const std::string& option);
// A value that must not be negative (a seed, a case count).
int64_t parse_count_option(const std::string& text, const std::string& option);
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& option);

}  // namespace pg
