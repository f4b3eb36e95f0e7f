#include "fuzz/case_file.hpp"

#include <fstream>
#include <sstream>
#include <vector>

namespace pg::fuzz {
namespace {

constexpr const char* kFormat = "poolgrad-case/1";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

nlohmann::json case_json(const CaseFile& c, const std::string& signature, const std::string& report,
                         const std::string& replay) {
  nlohmann::json j = {{"format", kFormat},
          {"target", c.target},
          {"variant", c.variant},
          {"backend", c.backend},
          {"problem", c.problem},
          {"data", {{"kind", data_kind_name(c.data.kind)}, {"seed", c.data.seed}}},
          {"signature", signature},
          {"report", lines_of(report)},
          {"replay", replay}};
  if (!c.plugin.empty()) j["plugin"] = c.plugin;
  return j;
}

bool read_case_file(const std::string& path, CaseFile* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    *error = path + ": not JSON (" + e.what() + ")";
    return false;
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    *error = path + ": not a poolgrad case file (\"format\" is not \"" + kFormat + "\")";
    return false;
  }
  const std::string target = j.value("target", "");
  if (target != "pool" && target != "conv") {
    *error = path + ": \"target\" must be \"pool\" or \"conv\"";
    return false;
  }
  for (const char* field : {"variant", "backend", "problem"})
    if (!j.contains(field) || !j[field].is_string()) {
      *error = path + ": \"" + field + "\" missing or not a string";
      return false;
    }
  const nlohmann::json& data = j.value("data", nlohmann::json());
  if (!data.is_object() || !data.contains("kind") || !data["kind"].is_string() || !data.contains("seed") ||
      !data["seed"].is_number_unsigned()) {
    *error = path + ": \"data\" must hold \"kind\" (a string) and \"seed\" (an unsigned integer)";
    return false;
  }
  out->target = target;
  out->variant = j["variant"];
  out->backend = j["backend"];
  out->problem = j["problem"];
  out->data.seed = data["seed"];
  if (j.contains("plugin") && !j["plugin"].is_string()) {
    *error = path + ": \"plugin\" must be a string (the plugin's path)";
    return false;
  }
  out->plugin = j.value("plugin", "");
  if (!parse_data_kind(data["kind"], &out->data.kind)) {
    *error = path + ": data kind '" + data["kind"].get<std::string>() + "' is not ints, special, real or foreign";
    return false;
  }
  if (target == "conv" && !conv_data_kind_ok(out->data.kind)) {
    *error = path + ": data kind '" + data["kind"].get<std::string>() + "' has no conv data (ints or real)";
    return false;
  }
  return true;
}

}  // namespace pg::fuzz
