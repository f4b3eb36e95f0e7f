// The max-pool variants, each once. Adding one is a file in kernels/max/ and a line here.
#pragma once

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

using MaxVariants = VariantList<MaxScatterStored, MaxGatherStored, MaxGatherBlock, MaxGatherStream, MaxScatterRecompute,
                                MaxGatherRecompute, MaxDirectStored, MaxDirectRecompute>;

}  // namespace pg
