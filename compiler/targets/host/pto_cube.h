// PTO cube instructions for host targets: the matmul path of generated code.
//
// A cube task computes one output tile C[mL0 x nL0] of C = op(A) * op(B):
//
//   TLOAD  GM -> L1    CubeLoadL1: a [rows x cols] region of a row-major GM
//                      matrix (leading dimension `ld`) into a dense L1 tile
//   TMOV   L1 -> L0A   CubeMovL0: a block of L1, transposed or not, into a
//          L1 -> L0B   dense row-major L0 tile (L0A is always [m x k], L0B
//                      always [k x n], whatever a_trans / b_trans were)
//   TMATMUL            CubeMatmul: L0C = L0A * L0B (f32 accumulate)
//   TMATMUL_ACC        CubeMatmulAcc: L0C += L0A * L0B (the next kL0 step)
//   TSTORE L0C -> GM   CubeStoreL0C: a dense [m x n] L0C tile into GM
//
// Like pto_tile.h this header is self-contained C++17 that includes only
// <stdint.h>, so it can be embedded into the compiler and written next to
// generated sources. All tiles hold f32.
//
// The micro-kernel (CubeMatmulImpl) is register blocked: kRows rows of C by
// kCols columns are accumulated in a local array across the whole K of the
// L0 tiles in vector registers (4 x 16 floats: 8 AVX2 registers; GCC
// vector extensions, so the same code is SSE on older targets), one row of
// L0B loaded per k step and each A element broadcast. Each element of C is
// accumulated over k in order, so the result does not depend on the tile
// shape of M or N; with FMA available (__FMA__) each step is one fused
// multiply-add, otherwise a rounded multiply then add.
#ifndef PTO_CUBE_H_
#define PTO_CUBE_H_

#include <stdint.h>

// Vec8 values passed between inline functions on targets without AVX: GCC
// warns, at every function they are inlined into, that the (never used
// across objects) ABI differs; the warning stays off for the includer.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace pto_cube {

constexpr int kRows = 4;   // rows of C per register block
constexpr int kCols = 16;  // columns of C per register block

inline float MulAdd(float acc, float a, float b) {
#if defined(__FMA__) && defined(__AVX__)
  return __builtin_fmaf(a, b, acc);
#else
  return acc + a * b;
#endif
}

// TLOAD GM -> L1: l1[r * cols + c] = gm[r * ld + c] for a [rows x cols]
// region starting at `gm`.
inline void CubeLoadL1(float* __restrict l1, const float* __restrict gm,
                       int64_t ld, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* __restrict src = gm + r * ld;
    float* __restrict dst = l1 + static_cast<int64_t>(r) * cols;
    for (int c = 0; c < cols; ++c) dst[c] = src[c];
  }
}

// TMOV L1 -> L0A/L0B: the [rows x cols] block of the result, read from an
// L1 tile with `l1_cols` columns at (r0, c0); with `trans` the L1 tile holds
// the transpose (the block is read from (c0, r0) as [cols x rows]).
inline void CubeMovL0(float* __restrict l0, const float* __restrict l1,
                      int l1_cols, int r0, int c0, int rows, int cols,
                      bool trans) {
  if (!trans) {
    for (int r = 0; r < rows; ++r) {
      const float* __restrict src =
          l1 + static_cast<int64_t>(r0 + r) * l1_cols + c0;
      float* __restrict dst = l0 + static_cast<int64_t>(r) * cols;
      for (int c = 0; c < cols; ++c) dst[c] = src[c];
    }
    return;
  }
  for (int c = 0; c < cols; ++c) {
    const float* __restrict src =
        l1 + static_cast<int64_t>(c0 + c) * l1_cols + r0;
    for (int r = 0; r < rows; ++r) l0[static_cast<int64_t>(r) * cols + c] = src[r];
  }
}

// Eight floats in a vector register (GCC/Clang vector extension: AVX
// registers where the target has them, pairs of SSE registers otherwise).
typedef float Vec8 __attribute__((vector_size(32)));

inline Vec8 LoadVec8(const float* p) {
  Vec8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void StoreVec8(float* p, Vec8 v) { __builtin_memcpy(p, &v, sizeof v); }

inline Vec8 MulAdd(Vec8 acc, Vec8 a, Vec8 b) {
#if defined(__FMA__) && defined(__AVX__)
  return __builtin_ia32_vfmaddps256(a, b, acc);
#else
  return acc + a * b;
#endif
}

// One full register block: C[kRows x kCols] (+)= A[kRows x k] * B[k x kCols]
// with the accumulators in kRows * kCols / 8 vector registers.
template <bool kAcc>
inline void CubeBlock(float* __restrict c, int ldc, const float* __restrict a,
                      const float* __restrict b, int ldb, int k) {
  constexpr int kV = kCols / 8;
  Vec8 acc[kRows][kV];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      acc[r][v] = kAcc ? LoadVec8(c + r * ldc + 8 * v) : Vec8{};
    }
  }
  for (int p = 0; p < k; ++p) {
    const float* __restrict bp = b + static_cast<int64_t>(p) * ldb;
    Vec8 bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = LoadVec8(bp + 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float s = a[static_cast<int64_t>(r) * k + p];
      const Vec8 av = {s, s, s, s, s, s, s, s};
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) acc[r][v] = MulAdd(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) StoreVec8(c + r * ldc + 8 * v, acc[r][v]);
  }
}

// Edge blocks (fewer rows or columns), same arithmetic order.
template <bool kAcc>
inline void CubeEdge(float* __restrict c, int ldc, const float* __restrict a,
                     const float* __restrict b, int ldb, int k, int rows,
                     int width) {
  for (int r = 0; r < rows; ++r) {
    float acc[kCols];
    for (int j = 0; j < width; ++j) acc[j] = kAcc ? c[r * ldc + j] : 0.0f;
    for (int p = 0; p < k; ++p) {
      const float av = a[static_cast<int64_t>(r) * k + p];
      const float* __restrict bp = b + static_cast<int64_t>(p) * ldb;
      for (int j = 0; j < width; ++j) acc[j] = MulAdd(acc[j], av, bp[j]);
    }
    for (int j = 0; j < width; ++j) c[r * ldc + j] = acc[j];
  }
}

// L0C[m x n] (+)= L0A[m x k] * L0B[k x n], all dense row-major.
template <bool kAcc>
inline void CubeMatmulImpl(float* __restrict l0c, const float* __restrict l0a,
                           const float* __restrict l0b, int m, int k, int n) {
  int i = 0;
  for (; i + kRows <= m; i += kRows) {
    const float* ai = l0a + static_cast<int64_t>(i) * k;
    float* ci = l0c + static_cast<int64_t>(i) * n;
    int j = 0;
    for (; j + kCols <= n; j += kCols) {
      CubeBlock<kAcc>(ci + j, n, ai, l0b + j, n, k);
    }
    if (j < n) CubeEdge<kAcc>(ci + j, n, ai, l0b + j, n, k, kRows, n - j);
  }
  if (i < m) {
    const float* ai = l0a + static_cast<int64_t>(i) * k;
    float* ci = l0c + static_cast<int64_t>(i) * n;
    for (int j = 0; j < n; j += kCols) {
      const int width = n - j < kCols ? n - j : kCols;
      CubeEdge<kAcc>(ci + j, n, ai, l0b + j, n, k, m - i, width);
    }
  }
}

// TMATMUL: L0C = L0A * L0B.
inline void CubeMatmul(float* __restrict l0c, const float* __restrict l0a,
                       const float* __restrict l0b, int m, int k, int n) {
  CubeMatmulImpl<false>(l0c, l0a, l0b, m, k, n);
}

// TMATMUL_ACC: L0C += L0A * L0B.
inline void CubeMatmulAcc(float* __restrict l0c, const float* __restrict l0a,
                          const float* __restrict l0b, int m, int k, int n) {
  CubeMatmulImpl<true>(l0c, l0a, l0b, m, k, n);
}

// TSTORE L0C -> GM: gm[r * ld + c] = l0c[r * n + c].
inline void CubeStoreL0C(float* __restrict gm, int64_t ld,
                         const float* __restrict l0c, int m, int n) {
  for (int r = 0; r < m; ++r) {
    const float* __restrict src = l0c + static_cast<int64_t>(r) * n;
    float* __restrict dst = gm + r * ld;
    for (int c = 0; c < n; ++c) dst[c] = src[c];
  }
}

}  // namespace pto_cube

#endif  // PTO_CUBE_H_
