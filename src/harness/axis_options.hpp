// Small pieces the .npy front ends (pooling: src/harness/pool_plan.cpp, conv: src/harness/conv_plan.cpp) share:
// how a shape or a list reads in a message, and PyTorch's one-value-or-one-per-axis arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pg {

enum class Layout : uint8_t;

std::string shape_text(const std::vector<int64_t>& shape);  // "(2, 3, 4)"
std::string list_text(const std::vector<int64_t>& v);       // "2,3,4"

// One value per spatial axis from a PyTorch-style argument: one value applies to every axis.
// Writes the last `dims` of out[kAxes]; nothing when `given` is empty. InvalidInput naming
// `option` when the count is neither 1 nor dims.
void per_axis(const std::string& option, const std::vector<int64_t>& given, int dims, int64_t* out);

// ONNX-order --pads (every begin, then every end) into the last `dims` of begin[kAxes] and
// end[kAxes]; InvalidInput naming --pads when the count is not 2 * dims.
void onnx_pads(const std::vector<int64_t>& pads, int dims, int64_t* begin, int64_t* end);

// The layout a --layout name gives a problem of `dims` spatial axes: NCHW / NHWC whatever the
// axes, and each rank's own names, NCW / NWC (1D) and NCDHW / NDHWC (3D). InvalidInput naming
// --layout and the names it takes otherwise.
Layout layout_named(const std::string& name, int dims);

}  // namespace pg
