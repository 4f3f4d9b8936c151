// TIMG2COL for host targets: a cube task's B block read from a feature map
// (a conv's matmul), included by pto_cube.h.
//
// The im2col matrix of a feature map x [C, H, W] (one image, one group's
// C/G channels; compiler/ops/img2col.h) has rows k = (i * kw + j) * C/G + c
// (kernel tap (i, j), channel c) and columns p = oh * OW + ow:
//
//   B[k][p] = x[c][oh * sh - ph + i * dh][ow * sw - pw + j * dw], 0 outside x.
//
// CubeLoadImg2Col builds rows [k0, k0 + rows) by columns [p0, p0 + cols) of
// it as an f32 L1 tile, as CubeLoadL1 does for a B block in GM, so TMOV and
// TMATMUL take it unchanged and give the bits of a matmul over the matrix
// itself; the matrix is never written to GM. Each row is runs of output
// columns within one output row: zeros left and right of the input's
// columns, the input's row between (a strided read for sw > 1).
#ifndef PTO_CUBE_IMG2COL_H_
#define PTO_CUBE_IMG2COL_H_

#include <stdint.h>

namespace pto_cube {

// TIMG2COL's geometry: the feature map's element strides (channel, row;
// columns are contiguous), its channels per group, rows and columns, the
// kernel, strides, paddings, dilations, and the output's columns.
struct CubeImg2Col {
  int64_t stride_c, stride_h;
  int64_t c, h, w;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t ow;
};

// TIMG2COL GM -> L1: l1[r * cols + q] = Conv::Load(B[k0 + r][p0 + q]) of
// the im2col matrix of the feature map at `x` (its group's channel 0);
// *l1_ld = cols.
template <typename Conv, typename T>
inline const float* CubeLoadImg2Col(float* __restrict l1, const T* __restrict x,
                                    const CubeImg2Col& g, int64_t k0, int rows,
                                    int64_t p0, int cols, int64_t* l1_ld) {
  // Row k0's kernel tap (i, j) and channel, stepped row by row (no
  // divisions per row or run).
  int64_t ch = k0 % g.c, tap = k0 / g.c;
  int64_t i = tap / g.kw, j = tap % g.kw;
  const int64_t oh0 = p0 / g.ow, ow00 = p0 % g.ow;
  for (int r = 0; r < rows; ++r) {
    const int64_t di = i * g.dh - g.ph, dj = j * g.dw - g.pw;
    const T* __restrict plane = x + ch * g.stride_c;
    float* __restrict dst = l1 + static_cast<int64_t>(r) * cols;
    // Output columns ow in [lo, hi) read input columns ow * sw + dj in [0, w).
    const int64_t lo = dj >= 0 ? 0 : (-dj + g.sw - 1) / g.sw;
    const int64_t hi = g.w - dj <= 0 ? 0 : (g.w - dj + g.sw - 1) / g.sw;
    // Runs of the block's columns within one output row each.
    int64_t q = 0, oh = oh0, ow0 = ow00;
    while (q < cols) {
      const int64_t run = g.ow - ow0 < cols - q ? g.ow - ow0 : cols - q;
      const int64_t y = oh * g.sh + di, ow1 = ow0 + run;
      float* __restrict out = dst + q - ow0;  // out[ow] for ow in [ow0, ow1)
      const bool inside = y >= 0 && y < g.h;
      const int64_t a = !inside ? ow1 : lo < ow0 ? ow0 : lo > ow1 ? ow1 : lo;
      const int64_t b = !inside ? ow1 : hi < a ? a : hi > ow1 ? ow1 : hi;
      for (int64_t o = ow0; o < a; ++o) out[o] = 0.0f;
      if (a < b) {
        const T* __restrict row = plane + y * g.stride_h + dj;
        if (g.sw == 1) {
          for (int64_t o = a; o < b; ++o) out[o] = Conv::Load(row[o]);
        } else {
          for (int64_t o = a; o < b; ++o) out[o] = Conv::Load(row[o * g.sw]);
        }
      }
      for (int64_t o = b; o < ow1; ++o) out[o] = 0.0f;
      q += run;
      ++oh;
      ow0 = 0;
    }
    if (++ch == g.c) {
      ch = 0;
      if (++j == g.kw) j = 0, ++i;
    }
  }
  *l1_ld = cols;
  return l1;
}

}  // namespace pto_cube

#endif  // PTO_CUBE_IMG2COL_H_
