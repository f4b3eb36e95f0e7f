// The one adapter between include/poolgrad/plugin.h and pg::Variant.
#include "src/harness/plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "poolgrad/plugin.h"
#include "src/harness/c_problem.hpp"
#include "src/model/invalid_input.hpp"
#include "src/harness/registry.hpp"

namespace pg {
namespace {

bool name_ok(const char* name, bool dots) {
  if (!name || !*name) return false;
  for (const char* c = name; *c; ++c) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                    *c == '-' || (dots && *c == '.');
    if (!ok) return false;
  }
  return true;
}

// The values of a mask (bit 1 << value), or all of `every` when the mask is 0.
template <class T>
std::vector<T> from_mask(uint32_t mask, const std::vector<T>& every) {
  if (mask == 0) return every;
  std::vector<T> out;
  for (T v : every)
    if (mask & (1u << static_cast<unsigned>(v))) out.push_back(v);
  return out;
}

Domain from_c(const poolgrad_domain& d, const std::string& where) {
  Domain out;
  out.min_dims = d.min_dims ? d.min_dims : 1;
  out.max_dims = d.max_dims ? d.max_dims : 3;
  if (out.min_dims < 1 || out.max_dims > 3 || out.min_dims > out.max_dims)
    throw InvalidInput(where + ": domain dims " + std::to_string(d.min_dims) + ".." + std::to_string(d.max_dims) +
                       " is not a range inside 1..3");
  out.windows = d.disjoint_windows ? WindowRule::disjoint : WindowRule::any;
  out.dtypes = from_mask(d.dtypes, out.dtypes);
  out.layouts = from_mask(d.layouts, out.layouts);
  out.index_formats = from_mask(d.index_formats, out.index_formats);
  out.index_types = from_mask(d.index_types, out.index_types);
  out.ties = from_mask(d.ties, out.ties);
  out.nans = from_mask(d.nans, out.nans);
  out.divisors = from_mask(d.divisors, out.divisors);
  if (out.dtypes.empty() || out.layouts.empty() || out.index_formats.empty() || out.index_types.empty() ||
      out.ties.empty() || out.nans.empty() || out.divisors.empty())
    throw InvalidInput(where + ": a domain mask (dtypes, layouts, index_formats, index_types, ties, nans or divisors) "
                       "names no known value");
  out.pads_symmetric = d.symmetric_pads != 0;
  out.dilation = d.no_dilation == 0;
  out.ceil_mode = d.no_ceil_mode == 0;
  out.divisor_override = d.no_divisor_override == 0;
  return out;
}

Inputs inputs_from_c(int32_t inputs, const std::string& where) {
  switch (inputs) {
    case POOLGRAD_INPUTS_DY: return Inputs::dy_only;
    case POOLGRAD_INPUTS_DY_INDICES: return Inputs::dy_and_indices;
    case POOLGRAD_INPUTS_DY_X: return Inputs::dy_and_x;
  }
  throw InvalidInput(where + ": inputs " + std::to_string(inputs) + " is not a POOLGRAD_INPUTS_* value");
}

using CLaunch = const char* (*)(const poolgrad_problem*, const poolgrad_buffers*);

LaunchFn launch_from_c(CLaunch fn, const std::string& variant) {
  if (!fn) return {};
  return [fn, variant](Backend&, const Problem& p, const BwdBuffers& b) {
    const poolgrad_problem cp = to_c(p);
    const poolgrad_buffers cb{b.x, b.dy, b.indices, b.dx, b.workspace};
    if (const char* error = fn(&cp, &cb)) throw Error("plugin variant " + variant + " failed: " + error);
  };
}

Variant variant_from_c(const poolgrad_variant& c, const std::string& plugin_name, const std::string& path) {
  const std::string where = path + ": variant " + (c.name ? "'" + std::string(c.name) + "'" : "(null name)");
  if (!name_ok(c.name, true)) throw InvalidInput(where + ": a name is letters, digits, '.', '_' and '-'");
  if (c.op != POOLGRAD_OP_MAX && c.op != POOLGRAD_OP_AVG)
    throw InvalidInput(where + ": op " + std::to_string(c.op) + " is not POOLGRAD_OP_MAX or POOLGRAD_OP_AVG");
  Variant v;
  v.name = plugin_name + "." + c.name;
  v.op = Op(c.op);
  v.inputs = inputs_from_c(c.inputs, where);
  if ((v.op == Op::avg) != (v.inputs == Inputs::dy_only))
    throw InvalidInput(where + ": average pooling reads dy only, max pooling dy with indices or x");
  if (!c.launch_cpu && !c.launch_gpu) throw InvalidInput(where + ": neither launch_cpu nor launch_gpu is set");
  v.deterministic = c.deterministic != 0;
  v.gpu_only = !c.launch_cpu;
  v.domain = from_c(c.domain, where);
  v.supports_problem = [fn = c.supports](const Problem& p) {
    if (!fn) return Support::yes();
    const poolgrad_problem cp = to_c(p);
    const char* why = fn(&cp);
    return why ? Support::no(why) : Support::yes();
  };
  v.workspace_bytes = [fn = c.workspace_bytes](const Problem& p) -> size_t {
    if (!fn) return 0;
    const poolgrad_problem cp = to_c(p);
    return fn(&cp);
  };
  v.launch_cpu = launch_from_c(c.launch_cpu, v.name);
  // Without a GPU backend in this build no GPU exists to launch on.
  if (std::string(gpu_runtime_name()) != "none") v.launch_gpu = launch_from_c(c.launch_gpu, v.name);
  v.plugin = path;
  return v;
}

}  // namespace

void load_plugin(const std::string& given) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  const std::lock_guard lock(mutex);
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(given, ec);
  if (ec) throw InvalidInput(given + ": " + ec.message());
  const std::string path = canonical.string();
  if (loaded.count(path)) return;
  // RTLD_NOW: a plugin missing a symbol fails here, not in the middle of a campaign. Never
  // closed: its variants point into it until the process ends.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw InvalidInput(given + ": cannot load: " + dlerror());
  const auto entry = reinterpret_cast<poolgrad_plugin_entry_fn>(dlsym(handle, POOLGRAD_PLUGIN_ENTRY_SYMBOL));
  if (!entry) throw InvalidInput(given + ": no " POOLGRAD_PLUGIN_ENTRY_SYMBOL " symbol: not a poolgrad plugin");
  const poolgrad_plugin* plugin = entry();
  if (!plugin) throw InvalidInput(given + ": " POOLGRAD_PLUGIN_ENTRY_SYMBOL "() returned NULL");
  if (plugin->abi_version != POOLGRAD_PLUGIN_ABI_VERSION)
    throw InvalidInput(given + ": ABI version " + std::to_string(plugin->abi_version) + ", this poolgrad speaks " +
                       std::to_string(POOLGRAD_PLUGIN_ABI_VERSION));
  if (!name_ok(plugin->name, false))
    throw InvalidInput(given + ": plugin name '" + (plugin->name ? plugin->name : "(null)") +
                       "' must be letters, digits, '_' and '-'");
  if (plugin->variant_count == 0 || !plugin->variants) throw InvalidInput(given + ": the plugin lists no variants");
  std::vector<Variant> list;
  for (size_t i = 0; i < plugin->variant_count; ++i) list.push_back(variant_from_c(plugin->variants[i], plugin->name, path));
  try {
    add_variants(std::move(list));
  } catch (const Error& e) {
    throw InvalidInput(given + ": " + e.what());
  }
  loaded.insert(path);
}

void load_plugins(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    try {
      load_plugin(path);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("--plugin ") + e.what());
    }
  }
}

}  // namespace pg
