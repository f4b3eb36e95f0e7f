#include "fuzz/conv_problem_gen.hpp"

#include "fuzz/problem_gen.hpp"  // pick, kFullSize

#include <algorithm>
#include <ostream>
#include <vector>

namespace pg {

void showValue(const ConvProblem& p, std::ostream& os) { os << conv_to_string(p); }

namespace fuzz {
namespace {

// One axis: kernel 1-4, dilation up to 3, stride up to 4 (beyond the dilated kernel when `gap`),
// or the domain's one kernel with stride 1 and dilation 1; pads symmetric up to half the kernel
// or asymmetric up to the dilated kernel on either side.
void axis(ConvProblem& p, int a, const ConvDomain& d, bool gap, bool asymmetric) {
  if (d.only_kernel > 0) {
    p.kernel[a] = d.only_kernel;
    p.dilation[a] = p.stride[a] = 1;
  } else {
    p.kernel[a] = *rc::gen::inRange<int64_t>(1, 5);
    p.dilation[a] = *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(2, 4)}});
  }
  const int64_t eff = p.effective_kernel(a);
  if (d.only_kernel == 0)
    p.stride[a] = gap ? *rc::gen::inRange<int64_t>(eff + 1, eff + 3)
                      : *rc::gen::weightedOneOf<int64_t>({{3, rc::gen::inRange<int64_t>(1, 3)}, {1, rc::gen::inRange<int64_t>(3, 5)}});
  if (asymmetric) {
    p.pad_begin[a] = *rc::gen::inRange<int64_t>(0, eff + 1);
    p.pad_end[a] = *rc::gen::inRange<int64_t>(0, eff + 1);
  } else {
    p.pad_begin[a] = p.pad_end[a] = *rc::gen::inRange<int64_t>(0, p.kernel[a] / 2 + 1);
  }
}

// Channels per group, 1 to `most`. A domain that reaches far (conv.gemm's 70, to cross its
// 64-wide tile now and then) draws from the whole range a sixth of the time and up to 8
// otherwise: the oracle's cost grows with C x K per group, and uniform draws up to 70 x 20 made
// each conv.gemm case cost 10 ms of oracle (H100 host, 2026-11-25) while small groups exercise
// the same tails and partial stages (C past 64 still comes in about 1 conv.gemm case of 70).
rc::Gen<int64_t> per_group(int64_t most) {
  constexpr int64_t kSmall = 8;
  if (most <= kSmall) return rc::gen::inRange<int64_t>(1, most + 1);
  return rc::gen::weightedOneOf<int64_t>({{5, rc::gen::inRange<int64_t>(1, kSmall + 1)}, {1, rc::gen::inRange<int64_t>(1, most + 1)}});
}

}  // namespace

rc::Gen<ConvProblem> conv_problem(const ConvDomain& d, ConvShapeRule rule) {
  return rc::gen::resize(kFullSize, rc::gen::exec([d, rule] {
    ConvProblem p;
    p.dims = *rc::gen::inRange(d.min_dims, d.max_dims + 1);
    // N = 0 is legal (PyTorch takes an empty batch): dx is empty, and nothing may be launched or read.
    p.n = *rc::gen::weightedOneOf<int64_t>({{1, rc::gen::just<int64_t>(0)}, {12, rc::gen::inRange<int64_t>(1, 4)}});
    p.layout = pick(d.layouts);
    p.dtype = pick(d.dtypes);
    // Groups: one (half the cases), a few, or depthwise (one input channel per group).
    const int kind = rule == ConvShapeRule::grouped ? *rc::gen::inRange(1, 3) : *rc::gen::weightedOneOf<int>(
        {{5, rc::gen::just(0)}, {3, rc::gen::just(1)}, {2, rc::gen::just(2)}});
    p.groups = kind == 0 ? 1 : *rc::gen::inRange<int64_t>(2, kind == 2 ? 7 : 4);
    const int64_t cg = kind == 2 ? 1 : *per_group(d.max_c_per_group);
    const int64_t kg = *per_group(kind == 2 ? 3 : d.max_k_per_group);
    p.c = p.groups * cg;
    p.k = p.groups * kg;
    const int first = kAxes - p.dims;
    const int gap_axis = rule == ConvShapeRule::gaps ? *rc::gen::inRange(first, kAxes) : -1;
    const bool asymmetric = *rc::gen::weightedOneOf<bool>({{3, rc::gen::just(false)}, {1, rc::gen::just(true)}});
    for (int a = first; a < kAxes; ++a) axis(p, a, d, a == gap_axis, asymmetric);
    // PyTorch's padding modes, now and then: "same" needs stride 1 on every axis.
    const int mode = rule == ConvShapeRule::gaps ? 0 : *rc::gen::weightedOneOf<int>(
        {{10, rc::gen::just(0)}, {1, rc::gen::just(1)}, {1, rc::gen::just(2)}});
    if (mode == 1) {
      p.pad_mode = ConvPadMode::same;
      for (int a = first; a < kAxes; ++a) p.stride[a] = 1;
    } else if (mode == 2) {
      p.pad_mode = ConvPadMode::valid;
    }
    conv_finalize(p);
    for (int a = first; a < kAxes; ++a) {
      const int64_t min_len = std::max<int64_t>(1, p.effective_kernel(a) - p.pad_begin[a] - p.pad_end[a]);
      p.in[a] = min_len + *rc::gen::inRange<int64_t>(0, d.reach[a] + 1);
    }
    conv_finalize(p);
    return p;
  }));
}

bool conv_generator_reaches(const ConvDomain& d, const ConvProblem& p) {
  const bool depthwise = p.groups > 1 && p.c_per_group() == 1;
  if (p.n > 3 || p.groups > 6 || p.c_per_group() > d.max_c_per_group ||
      p.k_per_group() > std::max<int64_t>(d.max_k_per_group, depthwise ? 3 : 0))
    return false;
  if (!d.admits(p).ok) return false;
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    // The padding modes set the pads after the length is drawn: measured against no padding.
    const int64_t pads = p.pad_mode == ConvPadMode::explicit_pads ? p.pad_begin[a] + p.pad_end[a] : 0;
    if (p.in[a] > std::max<int64_t>(1, p.effective_kernel(a) - pads) + d.reach[a]) return false;
  }
  return true;
}

rc::Gen<DataSpec> conv_data_spec() {
  return rc::gen::exec([] {
    DataSpec d;
    d.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
    d.kind = *rc::gen::element(DataKind::ints, DataKind::real);
    return d;
  });
}

}  // namespace fuzz
}  // namespace pg
