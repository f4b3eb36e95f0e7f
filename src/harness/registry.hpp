// The variant registry: every pooling backward variant poolgrad runs, joined by name from the
// backends' kernel units (kernels/exports.hpp), then the vendor families (cuDNN) and the
// plugins (src/harness/plugin.hpp) that add theirs through add_variants(). What one variant is:
// src/model/variant.hpp.
#pragma once

#include <string>
#include <vector>

#include "src/model/variant.hpp"

namespace pg {

const std::vector<Variant>& variants();
const Variant* find_variant(const std::string& name);  // nullptr when unknown
// Why a variant family is not registered, one line each ("cudnn.*: libcudnn not found ..."), for
// `poolgrad variants`.
const std::vector<std::string>& absent_families();
// Appends to variants(). References into the list may move: add before looking any variant up
// (the CLI loads every --plugin first). Throws Error when a name is taken.
void add_variants(std::vector<Variant> more);

// cuDNN's pooling backward (src/harness/cudnn_pool.cpp, CUDA builds), when a GPU and libcudnn are found at
// run time; otherwise none, with *why_absent set (src/harness/cudnn_absent.cpp in other builds).
std::vector<Variant> cudnn_variants(std::string* why_absent);

}  // namespace pg
