/* A plugin from another poolgrad: its ABI version is not this one's, and poolgrad must refuse it
 * before reading anything past abi_version (tests/plugin_test.cpp). */
#include <poolgrad/plugin.h>

static const poolgrad_plugin kPlugin = {.abi_version = POOLGRAD_PLUGIN_ABI_VERSION + 98, .name = "future"};

POOLGRAD_PLUGIN_EXPORT const poolgrad_plugin* poolgrad_plugin_entry(void) { return &kPlugin; }
