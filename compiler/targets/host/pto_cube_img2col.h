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
  for (int r = 0; r < rows; ++r) {
    const int64_t k = k0 + r, tap = k / g.c, ch = k % g.c;
    const int64_t di = tap / g.kw * g.dh - g.ph, dj = tap % g.kw * g.dw - g.pw;
    const T* __restrict plane = x + ch * g.stride_c;
    float* __restrict dst = l1 + static_cast<int64_t>(r) * cols;
    // Output columns ow in [lo, hi) read input columns ow * sw + dj in [0, w).
    const int64_t lo = dj >= 0 ? 0 : (-dj + g.sw - 1) / g.sw;
    const int64_t hi = g.w - dj <= 0 ? 0 : (g.w - dj + g.sw - 1) / g.sw;
    int q = 0;
    while (q < cols) {
      const int64_t p = p0 + q, oh = p / g.ow, ow0 = p % g.ow;
      const int run = static_cast<int>(g.ow - ow0 < cols - q ? g.ow - ow0 : cols - q);
      const int64_t y = oh * g.sh + di;
      float* __restrict out = dst + q;
      if (y < 0 || y >= g.h) {
        for (int e = 0; e < run; ++e) out[e] = 0.0f;
      } else {
        const T* __restrict row = plane + y * g.stride_h + dj;
        const int64_t ow1 = ow0 + run;
        const int64_t a = lo < ow0 ? ow0 : lo > ow1 ? ow1 : lo;
        const int64_t b = hi < a ? a : hi > ow1 ? ow1 : hi;
        for (int64_t o = ow0; o < a; ++o) out[o - ow0] = 0.0f;
        if (g.sw == 1) {
          for (int64_t o = a; o < b; ++o) out[o - ow0] = Conv::Load(row[o]);
        } else {
          for (int64_t o = a; o < b; ++o) out[o - ow0] = Conv::Load(row[o * g.sw]);
        }
        for (int64_t o = b; o < ow1; ++o) out[o - ow0] = 0.0f;
      }
      q += run;
    }
  }
  *l1_ld = cols;
  return l1;
}

}  // namespace pto_cube

#endif  // PTO_CUBE_IMG2COL_H_
