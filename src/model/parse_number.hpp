// Strict decimal integers and lists of them, for CLI options and problem strings alike.
//
// Accepted: an optional '-' and then decimal digits, nothing else. Refused, with a reason: an
// empty text, '+', spaces, hex or octal prefixes ("0x2" is refused; "010" reads as ten), any
// trailing character, a value outside int64 (never clamped), and in a list an empty element
// ("2,,2", ",2", "2,"). A minus sign is accepted so that a negative padding or stride reaches
// the problem's validation, whose message names the rule it breaks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg {

// The value, or nullopt with *why saying what is wrong with `text` (no option name in it).
std::optional<int64_t> parse_int64(std::string_view text, std::string* why);

// Elements separated by `separator`; nullopt with *why naming the bad element.
std::optional<std::vector<int64_t>> parse_int64_list(std::string_view text, char separator, std::string* why);

}  // namespace pg
