/* A shared library that is not a poolgrad plugin: it has no poolgrad_plugin_entry
 * (tests/plugin_test.cpp). */
__attribute__((visibility("default"))) int not_a_plugin(void) { return 1; }
