#include "fuzz/conv_coverage.hpp"

#include <algorithm>

#include "kernels/conv/conv_depthwise.hpp"  // depthwise_window
#include "kernels/conv/conv_gemm_tma.hpp"   // plan_conv_gemm_tma

namespace pg::fuzz {
namespace {

const char* layout_tag(Layout l) { return l == Layout::channels_first ? "channels-first" : "channels-last"; }

// The implicit GEMM's rows per phase: more than one 128-row tile and more than one 256-row tile
// (conv.gemm.wgmma's, conv.gemm's narrow one), a C/groups past the 64-wide tile (the 128 x 128
// tile with a partial C tile) and past 128 (a second C tile), and K/groups past one 32-step
// chunk (conv.gemm.tc) and one 64-step chunk (conv.gemm.wgmma): a partial last chunk.
constexpr int64_t kRowTile = 128, kNarrowTile = 64, kTcChunk = 32, kWgChunk = 64;

// conv.winograd's tiles: 4 x 4 dx positions each, and the GEMM's 256-row blocks of tiles (the
// larger of its two row tiles), so "several" holds for either.
constexpr int64_t kWinogradTile = 4, kWinogradRowBlock = 256;

// W's taps per phase (conv.depthwise's paths): a register window of at most 3 taps one dy position
// apart, or the tap-by-tap walk (a dilated W, or more taps).
constexpr const char* kWindowW = "W: at most 3 taps a phase, 1 position apart";
constexpr const char* kWalkedW = "W: dilated or more than 3 taps a phase";

// conv.gemm.tma's boxes of 256 dx positions: more than one, the last past the phase's end along
// some axis (or past the samples); and channels-last dy whose 64-k chunks cross groups, read
// through the tensor's group axis so the chunk's tail arrives as zeros.
constexpr const char* kPartialBox = "several 256-position boxes, partial last";
constexpr const char* kGroupAxis = "A through a group axis (64-k chunks cross groups)";

// Whether every spatial axis has the one window a fixed-window domain (Winograd) takes.
bool fixed_window(const ConvProblem& p, int64_t kernel) {
  for (int a = kAxes - p.dims; a < kAxes; ++a)
    if (p.kernel[a] != kernel || p.stride[a] != 1 || p.dilation[a] != 1) return false;
  return true;
}

}  // namespace

std::vector<std::string> conv_observed_tags(const ConvProblem& p) {
  std::vector<std::string> t = {std::to_string(p.dims) + "D", layout_tag(p.layout), dtype_name(p.dtype)};
  if (p.groups > 1) t.push_back(p.c_per_group() == 1 ? "depthwise" : "groups > 1");
  if (p.pad_mode == ConvPadMode::same) t.push_back("padding=same");
  if (p.pad_mode == ConvPadMode::valid) t.push_back("padding=valid");
  bool gap = false, strided = false, pad_dil = false, asym = false;
  int64_t rows = p.n;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    gap = gap || p.stride[a] > p.effective_kernel(a);
    strided = strided || p.stride[a] > 1;
    pad_dil = pad_dil || (p.dilation[a] > 1 && (p.pad_begin[a] > 0 || p.pad_end[a] > 0));
    asym = asym || p.pad_begin[a] != p.pad_end[a];
    rows *= (p.in[a] + p.stride[a] - 1) / p.stride[a];
  }
  if (gap) t.push_back("stride > dilated kernel");
  if (strided) t.push_back("stride > 1");
  if (pad_dil) t.push_back("padding with dilation");
  if (asym) t.push_back("asymmetric padding");
  if (rows > kRowTile) t.push_back(rows % kRowTile ? "several row tiles, partial last" : "several row tiles");
  if (rows > 2 * kRowTile) t.push_back("several 256-row tiles");
  if (p.c_per_group() > kNarrowTile) t.push_back("C/groups > 64");
  if (p.c_per_group() > 2 * kNarrowTile) t.push_back("C/groups > 128");
  if (p.k_per_group() > kTcChunk) t.push_back("K/groups > 32");
  if (p.k_per_group() > kWgChunk) t.push_back("K/groups > 64");
  t.push_back(depthwise_window(p) > 0 ? kWindowW : kWalkedW);
  const ConvGemmTmaPlan tma = plan_conv_gemm_tma(p);
  bool partial_box = p.n % tma.geo.box_n != 0;
  for (int a = kAxes - p.dims; a < kAxes; ++a)
    partial_box = partial_box || (p.in[a] + p.stride[a] - 1) / p.stride[a] % tma.geo.box[a] != 0;
  if (tma.tc.gemm.grid[0] > 1 && partial_box) t.push_back(kPartialBox);
  if (tma.geo.group_axis) t.push_back(kGroupAxis);
  if (fixed_window(p, 3)) {
    int64_t tiles = p.n;
    bool partial = false;
    for (int a = kAxes - p.dims; a < kAxes; ++a) {
      tiles *= (p.in[a] + kWinogradTile - 1) / kWinogradTile;
      partial = partial || p.in[a] % kWinogradTile != 0;
    }
    if (partial) t.push_back("partial 4-wide tile");
    if (tiles > kWinogradRowBlock) t.push_back("several 256-tile row blocks");
  }
  return t;
}

std::vector<std::string> conv_admitted_tags(const ConvVariant& v) {
  const ConvDomain& d = v.domain;
  std::vector<std::string> t = {"groups > 1", "depthwise", "padding=same", "padding=valid", "asymmetric padding"};
  if (d.only_kernel == 0) {
    for (const char* window : {"stride > dilated kernel", "stride > 1", "padding with dilation", kWindowW, kWalkedW})
      t.push_back(window);
  } else if (d.only_kernel == 3) {
    t.push_back(kWindowW);
    t.push_back("partial 4-wide tile");
    int64_t most_tiles = 3;  // the generator's largest batch
    for (int a = kAxes - d.max_dims; a < kAxes; ++a) most_tiles *= (d.only_kernel + d.reach[a] + kWinogradTile - 1) / kWinogradTile;
    if (most_tiles > 2 * kWinogradRowBlock) t.push_back("several 256-tile row blocks");
  }
  for (int dims = d.min_dims; dims <= d.max_dims; ++dims) t.push_back(std::to_string(dims) + "D");
  for (Layout l : d.layouts) t.push_back(layout_tag(l));
  for (DType x : d.dtypes) t.push_back(dtype_name(x));
  if (d.max_dims >= 2 && (d.reach[1] + 1) * (d.reach[2] + 1) * 3 > 2 * kRowTile)
    t.push_back("several row tiles, partial last");
  if (d.max_dims >= 2 && (d.reach[1] + 1) * (d.reach[2] + 1) * 3 > 4 * kRowTile) t.push_back("several 256-row tiles");
  if (d.max_c_per_group > kNarrowTile) t.push_back("C/groups > 64");
  if (d.max_c_per_group > 2 * kNarrowTile) t.push_back("C/groups > 128");
  if (d.max_k_per_group > kTcChunk) t.push_back("K/groups > 32");
  if (d.max_k_per_group > kWgChunk) t.push_back("K/groups > 64");
  if (d.max_dims >= 2 && (d.reach[1] + 1) * (d.reach[2] + 1) * 3 > 4 * kRowTile) t.push_back(kPartialBox);
  const bool cl = std::find(d.layouts.begin(), d.layouts.end(), Layout::channels_last) != d.layouts.end();
  if (cl && d.min_dims <= 2 && d.max_k_per_group > kWgChunk) t.push_back(kGroupAxis);
  return t;
}

}  // namespace pg::fuzz
