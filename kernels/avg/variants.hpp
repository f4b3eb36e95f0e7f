// The average-pool variants, each once. Adding one is a file in kernels/avg/ and a line here.
#pragma once

#include "kernels/avg/avg_broadcast_plane.hpp"
#include "kernels/avg/avg_direct.hpp"
#include "kernels/avg/avg_direct_exact_cf.hpp"
#include "kernels/avg/avg_direct_exact_cl.hpp"
#include "kernels/avg/avg_gather.hpp"
#include "kernels/avg/avg_gather_box3.hpp"
#include "kernels/avg/avg_gather_columns.hpp"
#include "kernels/avg/avg_gather_flat.hpp"
#include "kernels/avg/avg_gather_k3s2.hpp"
#include "kernels/avg/avg_gather_planes.hpp"
#include "kernels/avg/avg_gather_rows.hpp"
#include "kernels/avg/avg_gather_stream.hpp"
#include "kernels/avg/avg_gather_tiled.hpp"
#include "kernels/avg/avg_scatter_atomic.hpp"
#include "kernels/register.hpp"

namespace pg {

using AvgVariants = VariantList<AvgScatterAtomic, AvgGather, AvgGatherBox3, AvgDirect, AvgDirectExactCl, AvgDirectExactCf,
                                AvgGatherTiled, AvgGatherK3S2, AvgGatherPlanes, AvgGatherStream, AvgBroadcastPlane,
                                AvgGatherColumns, AvgGatherRows, AvgGatherFlat>;

}  // namespace pg
