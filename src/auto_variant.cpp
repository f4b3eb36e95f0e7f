#include "src/auto_variant.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "src/builtin_selection.hpp"
#include "src/invalid_input.hpp"
#include "src/selection.hpp"

namespace pg {
namespace {

struct Layer {
  std::string source;
  std::map<std::string, SelectionEntry> by_key;
};

std::string read_text(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(option + " = " + path + " cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Layer make_layer(const std::string& text, const std::string& source) {
  Layer l;
  l.source = source;
  for (SelectionEntry& e : selection_from_json(text, source)) l.by_key[e.key] = std::move(e);
  return l;
}

std::string g_selection_file;

// Read once per process (and again after set_selection_file names another file).
const std::vector<Layer>& layers() {
  static std::vector<Layer> cached;
  static std::optional<std::string> cached_for;
  if (cached_for == g_selection_file) return cached;
  std::vector<Layer> all;
  if (!g_selection_file.empty()) all.push_back(make_layer(read_text(g_selection_file, "--selection"), g_selection_file));
  if (const char* env = std::getenv("POOLGRAD_SELECTION")) {
    std::stringstream paths(env);
    std::string path;
    while (std::getline(paths, path, ':'))
      if (!path.empty()) all.push_back(make_layer(read_text(path, "POOLGRAD_SELECTION"), path));
  }
  all.push_back(make_layer(kBuiltinSelectionJson, std::string("built-in (") + kBuiltinSelectionSource + ")"));
  cached = std::move(all);
  cached_for = g_selection_file;
  return cached;
}

std::string ranking_text(const SelectionEntry& e) {
  std::string s;
  for (const RankedVariant& r : e.ranking) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s%s %.3fx worst, %.3fx mean on %d/%d rows", s.empty() ? "" : ", ",
                  r.variant.c_str(), r.worst_slowdown, r.mean_slowdown, r.rows, e.rows);
    s += buf;
  }
  return s;
}

// The first variant of the entry's ranking that can run p; its refusal reasons go into *why.
const Variant* first_usable(const SelectionEntry& e, const Problem& p, BackendKind backend,
                            const std::function<bool(const Variant&)>& usable, std::string* why) {
  for (const RankedVariant& r : e.ranking) {
    const Variant* v = find_variant(r.variant);
    if (!v) {
      *why += "  " + r.variant + ": not registered in this build\n";
      continue;
    }
    const Support s = v->supports(p, backend);
    if (!s.ok) {
      *why += "  " + r.variant + ": does not support this problem: " + s.why + "\n";
      continue;
    }
    if (usable && !usable(*v)) {
      *why += "  " + r.variant + ": needs inputs this run does not have\n";
      continue;
    }
    return v;
  }
  return nullptr;
}

}  // namespace

void set_selection_file(const std::string& path) {
  g_selection_file = path;
  layers();  // a bad file is reported now, where the option was given
}

AutoChoice choose_auto_variant(const Problem& p, BackendKind backend, const std::function<bool(const Variant&)>& usable) {
  AutoChoice c;
  const std::string key = problem_class(p);
  c.why = "class: " + key + "\n";
  for (const Layer& l : layers()) {
    const auto it = l.by_key.find(key);
    if (it == l.by_key.end()) continue;
    c.why += "selection " + l.source + " ranks: " + ranking_text(it->second) + "\n";
    if ((c.variant = first_usable(it->second, p, backend, usable, &c.why))) {
      c.why += "chosen: " + c.variant->name + " (fastest usable of its class)\n";
      return c;
    }
  }
  c.why += "no selection has a usable variant for this class; looking at the same class in other size buckets\n";
  const std::string any_size = problem_class_any_size(p);
  const std::string own = size_bucket(p);
  // Nearest bucket first: from S or L the middle one, from M the larger one.
  const std::vector<std::string> others = own == "S" ? std::vector<std::string>{"M", "L"}
                                          : own == "M" ? std::vector<std::string>{"L", "S"}
                                                       : std::vector<std::string>{"M", "S"};
  for (const Layer& l : layers())
    for (const std::string& bucket : others) {
      const auto it = l.by_key.find(any_size + " " + bucket);
      if (it == l.by_key.end()) continue;
      c.why += "selection " + l.source + " ranks, size " + bucket + ": " + ranking_text(it->second) + "\n";
      if ((c.variant = first_usable(it->second, p, backend, usable, &c.why))) {
        c.why += "chosen: " + c.variant->name + " (fastest usable of the class at size " + bucket + ")\n";
        return c;
      }
    }
  for (const Variant& v : variants()) {
    if (v.supports(p, backend).ok && (!usable || usable(v))) {
      c.variant = &v;
      c.why += "chosen: " + v.name + " (no measurement of this class: the first registered variant that supports it)\n";
      return c;
    }
  }
  c.why += "no registered variant supports this problem on this backend\n";
  return c;
}

}  // namespace pg
