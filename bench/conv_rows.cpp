#include "bench/conv_rows.hpp"

#include <utility>

namespace pg::bench {
namespace {

// x is (N, C, spatial...); K output channels, a cubic kernel, one stride and pad on every axis.
ConvRow row(std::vector<int64_t> x, int64_t k, int64_t groups, int64_t kernel, int64_t stride, int64_t pad, DType dtype,
            Layout layout = Layout::channels_first) {
  ConvProblem p;
  p.layout = layout;
  p.dims = static_cast<int>(x.size()) - 2;
  p.n = x[0];
  p.c = x[1];
  p.k = k;
  p.groups = groups;
  set_window(p, uniform_window({x.begin() + 2, x.end()}, kernel, stride, pad));
  p.dtype = dtype;
  conv_finalize(p);
  std::string name = "conv" + std::to_string(p.dims) + "d_bwd_data (";
  for (size_t i = 0; i < x.size(); ++i) name += (i ? ", " : "") + std::to_string(x[i]);
  name += ") K" + std::to_string(k);
  if (groups > 1) name += " g" + std::to_string(groups);
  name += " k" + std::to_string(kernel) + "s" + std::to_string(stride) + "p" + std::to_string(pad);
  name += dtype == DType::bf16 ? " bfloat16" : " float32";
  if (layout == Layout::channels_last) name += " NHWC";
  return {name, p};
}

}  // namespace

std::vector<ConvRow> conv_rows() {
  std::vector<ConvRow> rows;
  for (DType t : {DType::f32, DType::bf16}) {
    rows.push_back(row({32, 128, 56, 56}, 256, 1, 3, 1, 1, t));
    rows.push_back(row({4, 64, 32, 32, 32}, 64, 1, 3, 1, 1, t));
    rows.push_back(row({32, 256, 28, 28}, 512, 1, 3, 2, 1, t));
    rows.push_back(row({32, 256, 56, 56}, 256, 256, 3, 1, 1, t));
  }
  // Channels-last, the layout bf16 training runs in; and fp32 2D, for conv.winograd's other layout.
  rows.push_back(row({32, 128, 56, 56}, 256, 1, 3, 1, 1, DType::bf16, Layout::channels_last));
  rows.push_back(row({32, 128, 56, 56}, 256, 1, 3, 1, 1, DType::f32, Layout::channels_last));
  rows.push_back(row({32, 256, 56, 56}, 256, 256, 3, 1, 1, DType::bf16, Layout::channels_last));
  // fp32 3x3 stride-1 layers of other widths and sizes (ResNet's stages, a wide early layer),
  // where conv.winograd and conv.gemm may trade places.
  for (const auto& [x, k] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
           {{32, 64, 56, 56}, 64}, {{32, 256, 14, 14}, 256}, {{32, 512, 7, 7}, 512}, {{16, 32, 112, 112}, 32}})
    rows.push_back(row(x, k, 1, 3, 1, 1, DType::f32));
  // fp32 1D, a long sequence (speech and temporal models).
  rows.push_back(row({32, 256, 2048}, 256, 1, 3, 1, 1, DType::f32));
  return rows;
}

}  // namespace pg::bench
