#include "src/model/problem_text.hpp"

#include <optional>
#include <sstream>
#include <vector>

#include "src/model/parse_number.hpp"
#include "src/model/problem.hpp"  // kAxes

namespace pg {

const char* axis_name(int a) {
  static const char* names[] = {"D", "H", "W"};
  return names[a];
}

std::string bad_axis(const char* param, int a, int64_t value, const std::string& rule) {
  std::ostringstream e;
  e << param << " " << axis_name(a) << " = " << value << " " << rule;
  return e.str();
}

bool split_key_values(const std::string& text, std::map<std::string, std::string>* kv, std::string* error) {
  std::istringstream ss(text);
  std::string tok;
  while (ss >> tok) {
    const size_t eq = tok.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "problem: token '" + tok + "' is not key=value";
      return false;
    }
    if (!kv->emplace(tok.substr(0, eq), tok.substr(eq + 1)).second) {
      *error = "problem: key '" + tok.substr(0, eq) + "' is given twice";
      return false;
    }
  }
  return true;
}

bool parse_integer(const std::string& v, int64_t* out, std::string* error, const std::string& key) {
  std::string why;
  const std::optional<int64_t> value = parse_int64(v, &why);
  if (!value) {
    *error = "problem: " + key + " = '" + v + "' " + why;
    return false;
  }
  *out = *value;
  return true;
}

bool parse_axes(const std::string& v, int dims, int64_t* out, std::string* error, const std::string& key) {
  std::string why;
  const std::optional<std::vector<int64_t>> vals = parse_int64_list(v, 'x', &why);
  if (!vals) {
    *error = "problem: " + key + " = '" + v + "': " + why + " (a list of integers like 3x3)";
    return false;
  }
  if (static_cast<int>(vals->size()) != dims) {
    *error = "problem: " + key + " = '" + v + "' has " + std::to_string(vals->size()) + " values for a " +
             std::to_string(dims) + "D problem";
    return false;
  }
  for (int i = 0; i < dims; ++i) out[kAxes - dims + i] = (*vals)[i];
  return true;
}

bool parse_flag(const std::string& v, bool* out, std::string* error, const std::string& key) {
  if (v != "0" && v != "1") {
    *error = "problem: " + key + " = '" + v + "' must be 0 or 1";
    return false;
  }
  *out = v == "1";
  return true;
}

}  // namespace pg
