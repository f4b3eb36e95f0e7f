#include "src/harness/conv_check_set.hpp"

#include <algorithm>

#include "src/harness/conv_registry.hpp"

namespace pg {
namespace {

// Spatial values given as {D, H, W} tails: a 2D case passes two values per list.
ConvProblem make(int dims, int64_t n, int64_t c, int64_t k, int64_t groups, std::initializer_list<int64_t> in,
                 std::initializer_list<int64_t> kernel, std::initializer_list<int64_t> stride,
                 std::initializer_list<int64_t> pad, std::initializer_list<int64_t> dilation = {}) {
  ConvProblem p;
  p.dims = dims;
  p.n = n;
  p.c = c;
  p.k = k;
  p.groups = groups;
  set_window(p, {in, kernel, stride, pad, pad, dilation});
  return p;
}

// Sample i (0, 1, 2) of a variant's domain: the largest dims at the domain's reach (several
// tiles and a partial last one), and across the three samples each layout, several dtypes,
// stride 1 and 2, dilation (where the domain's window allows), groups and channel counts at the
// domain's maximum.
ConvProblem domain_sample(const ConvVariant& v, int i) {
  const ConvDomain& d = v.domain;
  ConvProblem p;
  p.dims = i == 1 ? std::max(d.min_dims, d.max_dims - 1) : d.max_dims;
  p.n = i == 2 ? 1 : 2;
  p.layout = d.layouts[i % d.layouts.size()];
  std::vector<DType> dtypes;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    if (std::find(d.dtypes.begin(), d.dtypes.end(), t) != d.dtypes.end()) dtypes.push_back(t);
  p.dtype = dtypes[i % dtypes.size()];
  p.groups = i == 0 ? 2 : 1;
  p.c = p.groups * (i == 2 ? 1 : d.max_c_per_group);
  p.k = p.groups * (i == 1 ? 1 : d.max_k_per_group);
  const int64_t kernel[] = {3, 2, 3}, stride[] = {1, 2, 2}, dilation[] = {1, 2, 1}, pb[] = {1, 1, 0}, pe[] = {1, 0, 2};
  // A domain of one window (Winograd) keeps it; the pads still differ across the samples.
  const bool fixed = d.only_kernel > 0;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    p.kernel[a] = fixed ? d.only_kernel : kernel[i];
    p.stride[a] = fixed ? 1 : stride[i];
    p.dilation[a] = fixed ? 1 : dilation[i];
    p.pad_begin[a] = pb[i];
    p.pad_end[a] = pe[i];
    const int64_t span = p.dilation[a] * (p.kernel[a] - 1) + 1;
    p.in[a] = std::max<int64_t>(1, span - pb[i] - pe[i]) + d.reach[a] - (i == 2);
  }
  return p;
}

}  // namespace

std::vector<ConvCheckCase> conv_check_set() {
  std::vector<ConvCheckCase> cases;
  auto add = [&](std::string label, ConvProblem p, DataKind kind = DataKind::ints) {
    conv_finalize(p);
    cases.push_back({std::move(label), p, DataSpec{cases.size() + 1, kind}});
  };
  add("conv2d k3s1p1", make(2, 2, 4, 6, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}));
  add("conv2d k3s2p1", make(2, 2, 3, 5, 1, {11, 10}, {3, 3}, {2, 2}, {1, 1}));
  add("conv1d stride beyond the kernel (untouched rows)", make(1, 2, 3, 4, 1, {10}, {2}, {3}, {0}));
  add("conv2d dilation 2 + padding 2", make(2, 1, 2, 3, 1, {9, 8}, {3, 3}, {1, 1}, {2, 2}, {2, 2}));
  add("conv2d groups 2", make(2, 2, 4, 6, 2, {7, 6}, {3, 3}, {1, 1}, {1, 1}));
  add("conv2d depthwise C=K=G=5", make(2, 2, 5, 5, 5, {8, 7}, {3, 3}, {1, 1}, {1, 1}));
  ConvProblem asym = make(2, 1, 3, 4, 1, {6, 7}, {3, 3}, {2, 1}, {0, 0});
  asym.pad_begin[1] = 1;
  asym.pad_end[2] = 2;
  add("conv2d asymmetric pads", asym);
  ConvProblem same = make(2, 1, 2, 3, 1, {7, 6}, {4, 2}, {1, 1}, {0, 0}, {1, 3});
  same.pad_mode = ConvPadMode::same;
  add("conv2d padding=same, even kernel, dilation", same);
  add("conv3d anisotropic", make(3, 1, 3, 4, 1, {5, 6, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 2, 1}));
  ConvProblem cl = make(2, 2, 5, 7, 1, {7, 9}, {3, 3}, {2, 2}, {1, 1});
  cl.layout = Layout::channels_last;
  add("conv2d channels-last C=5 K=7", cl);
  ConvProblem cl3 = make(3, 1, 6, 3, 3, {4, 5, 6}, {2, 3, 2}, {1, 2, 2}, {1, 1, 0});
  cl3.layout = Layout::channels_last;
  add("conv3d channels-last groups 3", cl3);
  for (DType t : {DType::f16, DType::bf16, DType::f64}) {
    ConvProblem q = make(2, 1, 3, 4, 1, {8, 8}, {3, 3}, {2, 2}, {1, 1});
    q.dtype = t;
    add(std::string("conv2d k3s2p1 ") + dtype_name(t), q, DataKind::real);
  }
  add("conv1d valid k5", make(1, 3, 2, 2, 1, {12}, {5}, {1}, {0}));
  add("conv2d empty batch N=0", make(2, 0, 3, 4, 1, {6, 5}, {3, 3}, {1, 1}, {1, 1}));
  for (const ConvVariant& v : conv_variants())
    for (int i = 0; i < 3; ++i)
      add(v.name + " domain sample " + std::to_string(i + 1), domain_sample(v, i), i == 1 ? DataKind::real : DataKind::ints);
  return cases;
}

}  // namespace pg
