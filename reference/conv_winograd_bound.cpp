#include "reference/conv_winograd_bound.hpp"

#include <array>
#include <cmath>

#include "src/model/backend.hpp"  // Error

namespace pg::ref {
namespace {

// F(4, 3) in absolute values, Lavin and Gray's points 0, +-1, +-2 and infinity.
constexpr int kM = 4, kR = 3, kAlpha = kM + kR - 1;
constexpr double kBT[kAlpha][kAlpha] = {{4, 0, 5, 0, 1, 0}, {0, 4, 4, 1, 1, 0}, {0, 4, 4, 1, 1, 0},
                                        {0, 2, 1, 2, 1, 0}, {0, 2, 1, 2, 1, 0}, {0, 4, 0, 5, 0, 1}};
constexpr double kG[kAlpha][kR] = {{1.0 / 4, 0, 0},           {1.0 / 6, 1.0 / 6, 1.0 / 6}, {1.0 / 6, 1.0 / 6, 1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6}, {0, 0, 1}};
constexpr double kAT[kM][kAlpha] = {{1, 1, 1, 1, 1, 0}, {0, 1, 1, 2, 2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, 1, 8, 8, 1}};

// One axis's transforms: F(4, 3) on a spatial axis, the 1 x 1 identity on a leading axis of a
// lower-dimensional problem (kernel 1, length 1).
struct Axis {
  int m = 1, r = 1, alpha = 1;
  double bt(int xi, int i) const { return alpha == 1 ? 1 : kBT[xi][i]; }
  double g(int xi, int j) const { return alpha == 1 ? 1 : kG[xi][j]; }
  double at(int y, int xi) const { return alpha == 1 ? 1 : kAT[y][xi]; }
};

int64_t offset(const ConvProblem& p, int64_t channels, const int64_t* len, int64_t n, int64_t ch, const int64_t* s) {
  const int64_t point = (s[0] * len[1] + s[1]) * len[2] + s[2];
  const int64_t plane = len[0] * len[1] * len[2];
  return p.layout == Layout::channels_first ? (n * channels + ch) * plane + point : (n * plane + point) * channels + ch;
}

int64_t weight_offset(const ConvProblem& p, int64_t k, int64_t cg, const int64_t* t) {
  const int64_t tap = (t[0] * p.kernel[1] + t[1]) * p.kernel[2] + t[2];
  return p.layout == Layout::channels_first ? (k * p.c_per_group() + cg) * p.taps() + tap
                                            : (k * p.taps() + tap) * p.c_per_group() + cg;
}

}  // namespace

ConvBound winograd_f4x4_bound(const ConvProblem& p, const std::vector<double>& dy, const std::vector<double>& w) {
  Axis ax[kAxes];
  for (int a = kAxes - p.dims; a < kAxes; ++a) {
    if (p.kernel[a] != kR || p.stride[a] != 1 || p.dilation[a] != 1)
      throw Error("winograd bound: axis " + std::to_string(a) + " is not a 3-tap window of stride 1 and dilation 1");
    ax[a] = Axis{kM, kR, kAlpha};
  }
  const int points = ax[0].alpha * ax[1].alpha * ax[2].alpha;
  const int64_t cpg = p.c_per_group(), kpg = p.k_per_group();
  ConvBound b{std::vector<double>(static_cast<size_t>(p.x_elems()), 0.0),
              std::vector<int64_t>(static_cast<size_t>(p.x_elems()), kpg + p.dims * kWinogradF4x4DepthPerAxis)};

  // |G| |f| |G|^T per (k, c within the group), f the weights flipped along every axis.
  std::vector<double> u(static_cast<size_t>(p.k * cpg * points), 0.0);
  for (int64_t k = 0; k < p.k; ++k)
    for (int64_t c = 0; c < cpg; ++c)
      for (int xi = 0; xi < points; ++xi) {
        const int x[kAxes] = {xi / (ax[1].alpha * ax[2].alpha), xi / ax[2].alpha % ax[1].alpha, xi % ax[2].alpha};
        double sum = 0;
        for (int64_t j0 = 0; j0 < p.kernel[0]; ++j0)
          for (int64_t j1 = 0; j1 < p.kernel[1]; ++j1)
            for (int64_t j2 = 0; j2 < p.kernel[2]; ++j2) {
              const int64_t t[kAxes] = {p.kernel[0] - 1 - j0, p.kernel[1] - 1 - j1, p.kernel[2] - 1 - j2};
              sum += ax[0].g(x[0], static_cast<int>(j0)) * ax[1].g(x[1], static_cast<int>(j1)) *
                     ax[2].g(x[2], static_cast<int>(j2)) * std::fabs(w[weight_offset(p, k, c, t)]);
            }
        u[(k * cpg + c) * points + xi] = sum;
      }

  int64_t tiles[kAxes];
  for (int a = 0; a < kAxes; ++a) tiles[a] = (p.in[a] + ax[a].m - 1) / ax[a].m;
  std::vector<double> v(static_cast<size_t>(kpg * points)), mag(static_cast<size_t>(points));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t group = 0; group < p.groups; ++group)
      for (int64_t t0 = 0; t0 < tiles[0]; ++t0)
        for (int64_t t1 = 0; t1 < tiles[1]; ++t1)
          for (int64_t t2 = 0; t2 < tiles[2]; ++t2) {
            const int64_t origin[kAxes] = {t0 * ax[0].m, t1 * ax[1].m, t2 * ax[2].m};
            // |B^T| |d| |B| for each k of the group: d is dy from origin + pad_begin - 2 on.
            for (int64_t kk = 0; kk < kpg; ++kk)
              for (int xi = 0; xi < points; ++xi) {
                const int x[kAxes] = {xi / (ax[1].alpha * ax[2].alpha), xi / ax[2].alpha % ax[1].alpha, xi % ax[2].alpha};
                double sum = 0;
                for (int i0 = 0; i0 < ax[0].alpha; ++i0)
                  for (int i1 = 0; i1 < ax[1].alpha; ++i1)
                    for (int i2 = 0; i2 < ax[2].alpha; ++i2) {
                      const int i[kAxes] = {i0, i1, i2};
                      int64_t o[kAxes];
                      bool inside = true;
                      for (int a = 0; a < kAxes; ++a) {
                        o[a] = origin[a] + p.pad_begin[a] - (ax[a].r - 1) + i[a];
                        inside = inside && o[a] >= 0 && o[a] < p.out[a];
                      }
                      if (!inside) continue;
                      sum += ax[0].bt(x[0], i0) * ax[1].bt(x[1], i1) * ax[2].bt(x[2], i2) *
                             std::fabs(dy[offset(p, p.k, p.out, n, group * kpg + kk, o)]);
                    }
                v[kk * points + xi] = sum;
              }
            for (int64_t c = 0; c < cpg; ++c) {
              for (int xi = 0; xi < points; ++xi) {
                double sum = 0;
                for (int64_t kk = 0; kk < kpg; ++kk) sum += u[((group * kpg + kk) * cpg + c) * points + xi] * v[kk * points + xi];
                mag[xi] = sum;
              }
              // |A^T| mag |A| at each dx position of the tile inside dx.
              for (int y0 = 0; y0 < ax[0].m; ++y0)
                for (int y1 = 0; y1 < ax[1].m; ++y1)
                  for (int y2 = 0; y2 < ax[2].m; ++y2) {
                    const int64_t pos[kAxes] = {origin[0] + y0, origin[1] + y1, origin[2] + y2};
                    if (pos[0] >= p.in[0] || pos[1] >= p.in[1] || pos[2] >= p.in[2]) continue;
                    double sum = 0;
                    for (int xi = 0; xi < points; ++xi) {
                      const int x[kAxes] = {xi / (ax[1].alpha * ax[2].alpha), xi / ax[2].alpha % ax[1].alpha, xi % ax[2].alpha};
                      sum += ax[0].at(y0, x[0]) * ax[1].at(y1, x[1]) * ax[2].at(y2, x[2]) * mag[xi];
                    }
                    b.abs_sum[static_cast<size_t>(offset(p, p.c, p.in, n, group * cpg + c, pos))] = sum;
                  }
            }
          }
  return b;
}

}  // namespace pg::ref
