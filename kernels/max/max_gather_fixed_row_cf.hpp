// max.gather.fixed.row.cf: max.gather.fixed.cf's k3s1 windows with work items of one dx row
// instead of two. A 2-row stride-1 item loads 4 box rows of windows for its 2 rows, a 1-row item
// 3 for its one, but holds fewer registers (nvcc 13, sm_90: f32 48 instead of 62, f16 54 instead
// of 80), so more items are resident. H100, 2026-12-06 (bench/results/2026-12-06_h100_fixed_row.md,
// 2D k3s1p1 planes of about 8M elements): 1.04-1.37x max.gather.fixed.cf on 7x7-42x42 planes
// (but 0.99x on 24x24 f16), 0.88-0.95x from 56x56 and 0.77-0.83x in 3D, so it is its own variant
// and selection picks per shape.
#pragma once

#include "kernels/common/require.hpp"
#include "kernels/max/max_dispatch.hpp"
#include "kernels/max/max_fixed_window.hpp"
#include "kernels/max/max_gather_fixed_cf.hpp"
#include "src/model/problem.hpp"
#include "src/model/variant.hpp"

namespace pg {

struct MaxGatherFixedRowCf : VariantDefaults {
  static constexpr PoolTraits traits{
      .name = "max.gather.fixed.row.cf", .op = Op::max, .inputs = Inputs::dy_and_indices, .deterministic = true};
  static Domain domain() { return fixed_cf_domain({WindowShape{3, 1, 0, 2}}); }

  static Support supports(const Problem& p) { return int32_offsets_only(p); }

  template <class Exec>
  static void launch(const Exec& ex, const Problem& p, const BwdBuffers& b) {
    require_supported<MaxGatherFixedRowCf>(p);
    launch_fixed_cf_items<3, 1, 1>(ex, p, b);
  }
};

}  // namespace pg
