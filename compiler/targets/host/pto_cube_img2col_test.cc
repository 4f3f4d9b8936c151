// TIMG2COL's host form (pto_cube_img2col.h) against the im2col matrix
// built by its definition (compiler/ops/img2col.h), block by block.
#include "compiler/targets/host/pto_cube.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace {

struct Geometry {
  int64_t c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
};

int64_t Out(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (n + 2 * p - d * (k - 1) - 1) / s + 1;
}

// An integer type the feature map may hold (the Conv widens it).
struct FromInt16 {
  static float Load(int16_t v) { return static_cast<float>(v); }
};

// Every block [k0, k0 + rows) x [p0, p0 + cols) of the im2col matrix of a
// feature map of `g` (channel stride padded by 3 elements, row stride by 2:
// the strides are the buffer's, not the extents'), against the definition.
void CheckBlocks(const Geometry& g, int rows, int cols) {
  const int64_t oh = Out(g.h, g.kh, g.sh, g.ph, g.dh), ow = Out(g.w, g.kw, g.sw, g.pw, g.dw);
  const int64_t stride_h = g.w + 2, stride_c = g.h * stride_h + 3;
  std::mt19937 rng(7);
  std::vector<int16_t> x(g.c * stride_c);
  for (int16_t& v : x) v = static_cast<int16_t>(rng() % 2001) - 1000;
  const pto_cube::CubeImg2Col geo = {stride_c, stride_h, g.c,  g.h,  g.w,  g.kh, g.kw, g.sh,
                                     g.sw,     g.ph,     g.pw, g.dh, g.dw, ow};
  const int64_t k_all = g.kh * g.kw * g.c, p_all = oh * ow;
  std::vector<float> l1(static_cast<size_t>(rows) * cols);
  for (int64_t k0 = 0; k0 < k_all; k0 += rows) {
    for (int64_t p0 = 0; p0 < p_all; p0 += cols) {
      const int kb = static_cast<int>(std::min<int64_t>(rows, k_all - k0));
      const int nb = static_cast<int>(std::min<int64_t>(cols, p_all - p0));
      int64_t ld = -1;
      const float* got = pto_cube::CubeLoadImg2Col<FromInt16>(l1.data(), x.data(), geo, k0, kb,
                                                              p0, nb, &ld);
      ASSERT_EQ(ld, nb);
      for (int r = 0; r < kb; ++r) {
        const int64_t k = k0 + r, tap = k / g.c, ch = k % g.c;
        const int64_t i = tap / g.kw, j = tap % g.kw;
        for (int q = 0; q < nb; ++q) {
          const int64_t p = p0 + q;
          const int64_t y = p / ow * g.sh - g.ph + i * g.dh;
          const int64_t z = p % ow * g.sw - g.pw + j * g.dw;
          const bool in = y >= 0 && y < g.h && z >= 0 && z < g.w;
          const float want = in ? x[ch * stride_c + y * stride_h + z] : 0.0f;
          ASSERT_EQ(got[r * ld + q], want)
              << "k=" << k << " p=" << p << " (block at " << k0 << ", " << p0 << ")";
        }
      }
    }
  }
}

TEST(PtoCubeImg2ColTest, PaddingStridesAndDilationsBlockByBlock) {
  const Geometry cases[] = {
      {4, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1},    // 3x3, padding 1
      {3, 11, 10, 3, 2, 2, 3, 2, 1, 2, 3},  // strides, dilations, padding
      {2, 5, 7, 5, 5, 1, 1, 4, 4, 1, 1},    // padding past most of the input
      {5, 1, 29, 1, 4, 1, 3, 0, 4, 1, 2},   // a 1-D conv as [C, 1, L]
      {1, 6, 6, 1, 1, 2, 2, 0, 0, 1, 1},    // 1x1, stride 2
  };
  for (const Geometry& g : cases) {
    for (const auto& [rows, cols] : {std::pair{64, 128}, std::pair{7, 5}, std::pair{1, 3}}) {
      SCOPED_TRACE(::testing::Message() << "c=" << g.c << " hw=" << g.h << "x" << g.w
                                        << " k=" << g.kh << "x" << g.kw << " block " << rows
                                        << "x" << cols);
      CheckBlocks(g, rows, cols);
    }
  }
}

}  // namespace
