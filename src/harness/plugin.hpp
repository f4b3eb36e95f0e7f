// Plugins: variants from a shared library through the C entry point of include/poolgrad/plugin.h,
// adapted onto pg::Variant and added to the registry as PLUGIN.VARIANT. From then on they are
// variants like poolgrad's own: check, fuzz, bench, select and replay see no difference.
#pragma once

#include <string>
#include <vector>

namespace pg {

// Opens the library at `path`, checks its ABI version, names and callbacks, and registers its
// variants. Loading the same file again does nothing. Throws InvalidInput, registering nothing,
// with one line that starts with the path: it cannot be opened, has no entry point, speaks
// another ABI version, or describes a variant poolgrad cannot take. Call before any variant is
// looked up (src/harness/registry.hpp add_variants).
void load_plugin(const std::string& path);

// Every path in order; the message of a failure starts "--plugin PATH: ".
void load_plugins(const std::vector<std::string>& paths);

}  // namespace pg
