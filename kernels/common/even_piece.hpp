// How the tiled variants cut an extent into tiles: even pieces, so the last one is not a sliver.
#pragma once

#include <algorithm>
#include <cstdint>

namespace pg {

// n cut into even pieces of at most `want` (56 in pieces of 32 is two of 28, not 32 + 24).
inline int64_t even_piece(int64_t n, int64_t want) {
  want = std::max<int64_t>(1, std::min(want, n));
  const int64_t pieces = (n + want - 1) / want;
  return (n + pieces - 1) / pieces;
}

}  // namespace pg
