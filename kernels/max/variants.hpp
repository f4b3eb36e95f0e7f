// The max-pool variants, each once. Adding one is a file in kernels/max/ and a line here.
#pragma once

#include "kernels/max/max_direct.hpp"
#include "kernels/max/max_direct_rows.hpp"
#include "kernels/max/max_gather_counted.hpp"
#include "kernels/max/max_gather_block_cf.hpp"
#include "kernels/max/max_gather_block_cl.hpp"
#include "kernels/max/max_gather_fixed_cf.hpp"
#include "kernels/max/max_gather_fixed_cl.hpp"
#include "kernels/max/max_gather_fixed_row_cf.hpp"
#include "kernels/max/max_gather_recompute.hpp"
#include "kernels/max/max_gather_rows.hpp"
#include "kernels/max/max_gather_stored.hpp"
#include "kernels/max/max_gather_stored_run.hpp"
#include "kernels/max/max_gather_stream.hpp"
#include "kernels/max/max_gather_taps.hpp"
#include "kernels/max/max_gather_tiled.hpp"
#include "kernels/max/max_scatter.hpp"
#include "kernels/max/max_scatter_tiled.hpp"
#include "kernels/register.hpp"

namespace pg {

using MaxVariants = VariantList<MaxScatterStored,
                                MaxGatherStored,
                                MaxGatherStoredRun,
                                MaxGatherFixedCf,
                                MaxGatherFixedCl,
                                MaxGatherFixedRowCf,
                                MaxGatherBlockCf,
                                MaxGatherBlockCl,
                                MaxGatherStream,
                                MaxGatherTiled,
                                MaxGatherCounted,
                                MaxGatherTaps,
                                MaxGatherRows,
                                MaxScatterTiled,
                                MaxScatterRecompute,
                                MaxGatherRecompute,
                                MaxDirectStored,
                                MaxDirectRecompute,
                                MaxDirectRows>;

}  // namespace pg
