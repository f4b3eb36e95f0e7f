// The registration list: every kernel variant, once. Adding a variant is one file in
// kernels/ and one line here; tests, fuzzing, `poolgrad check` and the benchmark pick it up.
#pragma once

#include "kernels/avg/avg_direct.hpp"
#include "kernels/avg/avg_gather.hpp"
#include "kernels/avg/avg_gather_k3s2.hpp"
#include "kernels/avg/avg_gather_stream.hpp"
#include "kernels/avg/avg_gather_tiled.hpp"
#include "kernels/avg/avg_scatter_atomic.hpp"
#include "kernels/max/max_direct_recompute.hpp"
#include "kernels/max/max_direct_stored.hpp"
#include "kernels/max/max_gather_block.hpp"
#include "kernels/max/max_gather_recompute.hpp"
#include "kernels/max/max_gather_stored.hpp"
#include "kernels/max/max_gather_stream.hpp"
#include "kernels/max/max_scatter_recompute.hpp"
#include "kernels/max/max_scatter_stored.hpp"
#include "kernels/register.hpp"

namespace pg {

using AllVariants = VariantList<MaxScatterStored, MaxGatherStored, MaxGatherBlock, MaxGatherStream, MaxScatterRecompute, MaxGatherRecompute,
                               MaxDirectStored, MaxDirectRecompute, AvgScatterAtomic, AvgGather, AvgDirect, AvgGatherTiled,
                               AvgGatherK3S2, AvgGatherStream>;

}  // namespace pg
