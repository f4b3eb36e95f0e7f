// Where the tiled variants' tiles lie. The tensor is seen as [outer][D][H][W][lanes] (channels-
// first: outer = N * C and one lane; channels-last: outer = N and lanes = C) and cut into tiles of
// `planes` outer planes, `lanes` lanes and tile[a] positions along each axis. Tile ids run lane
// tiles fastest (neighbouring blocks share the cache lines of a position's channels), then W, H,
// D, then groups of planes.
#pragma once

#include <cstdint>

#include "kernels/common/divider.hpp"
#include "kernels/common/pool_geometry.hpp"
#include "src/model/problem.hpp"

namespace pg {

template <class Idx>
struct TileGrid {
  Idx outer, lanes_total;  // N * C and 1 (channels-first), or N and C (channels-last)
  Divider<Idx> tiles_along[kAxes], lane_tiles;

  // Tile tile_id's first lane (*c0) and first position (i0), and its group of planes.
  PG_HD Idx locate(Idx tile_id, int lanes, const int* tile, Idx* c0, Idx* i0) const {
    Idx rest = tile_id;
    *c0 = lane_tiles.mod(rest) * lanes;
    rest = lane_tiles.div(rest);
    for (int a = kAxes - 1; a >= 0; --a) {
      i0[a] = tiles_along[a].mod(rest) * tile[a];
      rest = tiles_along[a].div(rest);
    }
    return rest;
  }
};

// The grid of p's tiles, and (*tiles) how many there are.
template <class Idx>
TileGrid<Idx> make_tile_grid(const Problem& p, int planes, int lanes, const int* tile, int64_t* tiles) {
  TileGrid<Idx> grid;
  const bool cl = p.layout == Layout::channels_last;
  const int64_t outer = cl ? p.n : p.n * p.c, lanes_total = cl ? p.c : 1;
  grid.outer = static_cast<Idx>(outer);
  grid.lanes_total = static_cast<Idx>(lanes_total);
  const int64_t lane_tiles = (lanes_total + lanes - 1) / lanes;
  grid.lane_tiles = Divider<Idx>(static_cast<Idx>(lane_tiles));
  *tiles = (outer + planes - 1) / planes * lane_tiles;
  for (int a = 0; a < kAxes; ++a) {
    const int64_t along = (p.in[a] + tile[a] - 1) / tile[a];
    grid.tiles_along[a] = Divider<Idx>(static_cast<Idx>(along));
    *tiles *= along;
  }
  return grid;
}

}  // namespace pg
