// PTO cube instructions for host targets: the matmul path of generated code.
//
// A cube task computes one output tile C[m x n] (m <= mL0, n <= nL0) of
// C = op(A) * op(B), K in L1 blocks and L0 steps:
//
//   TLOAD  GM -> L1    CubeLoadL1: a [rows x cols] region of a row-major GM
//                      matrix (leading dimension `ld`) into a dense f32 L1
//                      tile, widening f16/bf16 exactly (Conv::Load)
//   TMOV   L1 -> L0A   CubeMovL0A: m rows by kc of K from L1 (transposed or
//                      not) into L0A, packed in row panels (below)
//          L1 -> L0B   CubeMovL0B: kc of K by n columns into L0B, packed in
//                      column panels
//   TMATMUL            CubeMatmul: L0C = L0A * L0B (f32 accumulate)
//   TMATMUL_ACC        CubeMatmulAcc: L0C += L0A * L0B (the next L0 step)
//   TSTORE L0C -> GM   CubeStoreL0C: the dense [m x n] L0C tile into GM,
//                      rounded to the output type (Conv::Store)
//
// L0 layouts (the host's fractal formats): L0A holds ceil(m / kRows) panels
// of kRows rows, each [kc][kRows] (element (r, p) of panel i at
// i * kRows * kc + p * kRows + r); L0B holds ceil(n / kCols) panels of kCols
// columns, each [kc][kCols]. Rows and columns past m and n are zero, so the
// micro-kernel reads both operands contiguously and never branches on
// edges. L0C is dense row-major [m x n].
//
// Like pto_tile.h this header is self-contained C++17 that includes only
// <stdint.h>, so it can be embedded into the compiler and written next to
// generated sources. Conv is a type with static `float Load(T)` and
// `T Store(float)` (pto_tile::Elem<T> in generated code).
//
// The micro-kernel (CubeBlock) keeps a kRows x kCols block of C (6 x 16
// floats: 12 AVX2 registers) in vector registers across the whole K of the
// L0 tiles, loading one L0B row (2 vectors) and broadcasting kRows L0A
// elements per k step (GCC vector extensions, so the same code is SSE on
// older targets). Each element of C is accumulated over k in order, so the
// result does not depend on the tile shapes; with FMA available (__FMA__)
// each step is one fused multiply-add, otherwise a rounded multiply then
// add.
#ifndef PTO_CUBE_H_
#define PTO_CUBE_H_

#include <stdint.h>

// Vec8 values passed between inline functions on targets without AVX: GCC
// warns, at every function they are inlined into, that the (never used
// across objects) ABI differs; the warning stays off for the includer.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace pto_cube {

constexpr int kRows = 6;   // rows of C per register block (an L0A panel)
constexpr int kCols = 16;  // columns of C per register block (an L0B panel)

// Floats an L0A tile of m rows and k of K takes (whole panels).
constexpr int64_t L0AElems(int64_t m, int64_t k) {
  return (m + kRows - 1) / kRows * kRows * k;
}
// Floats an L0B tile of k of K and n columns takes (whole panels).
constexpr int64_t L0BElems(int64_t k, int64_t n) {
  return (n + kCols - 1) / kCols * kCols * k;
}

// Identity conversion for f32 GM data (tests; generated code passes
// pto_tile::Elem<T>).
struct F32 {
  static float Load(float v) { return v; }
  static float Store(float v) { return v; }
};

// TLOAD GM -> L1: l1[r * cols + c] = Conv::Load(gm[r * ld + c]) for a
// [rows x cols] region starting at `gm`.
template <typename Conv = F32, typename T>
inline void CubeLoadL1(float* __restrict l1, const T* __restrict gm, int64_t ld,
                       int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const T* __restrict src = gm + r * ld;
    float* __restrict dst = l1 + static_cast<int64_t>(r) * cols;
    for (int c = 0; c < cols; ++c) dst[c] = Conv::Load(src[c]);
  }
}

// TMOV L1 -> L0A: rows [0, m) and K columns [k0, k0 + kc) of op(A) from an
// L1 tile with `l1_cols` columns holding A [m x K-block], or with `trans`
// A^T [K-block x m], packed into row panels.
inline void CubeMovL0A(float* __restrict l0a, const float* __restrict l1,
                       int l1_cols, int k0, int m, int kc, bool trans) {
  for (int i = 0; i < m; i += kRows) {
    const int rows = m - i < kRows ? m - i : kRows;
    float* __restrict panel = l0a + static_cast<int64_t>(i) * kc;
    if (!trans) {
      for (int r = 0; r < rows; ++r) {
        const float* __restrict src =
            l1 + static_cast<int64_t>(i + r) * l1_cols + k0;
        for (int p = 0; p < kc; ++p) panel[p * kRows + r] = src[p];
      }
    } else {
      for (int p = 0; p < kc; ++p) {
        const float* __restrict src =
            l1 + static_cast<int64_t>(k0 + p) * l1_cols + i;
        for (int r = 0; r < rows; ++r) panel[p * kRows + r] = src[r];
      }
    }
    for (int r = rows; r < kRows; ++r) {
      for (int p = 0; p < kc; ++p) panel[p * kRows + r] = 0.0f;
    }
  }
}

// TMOV L1 -> L0B: K rows [k0, k0 + kc) and columns [0, n) of op(B) from an
// L1 tile with `l1_cols` columns holding B [K-block x n], or with `trans`
// B^T [n x K-block], packed into column panels.
inline void CubeMovL0B(float* __restrict l0b, const float* __restrict l1,
                       int l1_cols, int k0, int kc, int n, bool trans) {
  for (int j = 0; j < n; j += kCols) {
    const int cols = n - j < kCols ? n - j : kCols;
    float* __restrict panel = l0b + static_cast<int64_t>(j) * kc;
    if (!trans) {
      for (int p = 0; p < kc; ++p) {
        const float* __restrict src =
            l1 + static_cast<int64_t>(k0 + p) * l1_cols + j;
        float* __restrict dst = panel + p * kCols;
        for (int c = 0; c < cols; ++c) dst[c] = src[c];
        for (int c = cols; c < kCols; ++c) dst[c] = 0.0f;
      }
    } else {
      for (int c = 0; c < cols; ++c) {
        const float* __restrict src =
            l1 + static_cast<int64_t>(j + c) * l1_cols + k0;
        for (int p = 0; p < kc; ++p) panel[p * kCols + c] = src[p];
      }
      for (int p = 0; p < kc; ++p) {
        for (int c = cols; c < kCols; ++c) panel[p * kCols + c] = 0.0f;
      }
    }
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

// One register block: C[rows x width] (+)= panel A [k][kRows] * panel B
// [k][kCols], the accumulators in kRows * kCols / 8 vector registers. Full
// blocks load and store C directly; edge blocks go through a local block
// (the padded rows and columns are computed and dropped).
template <bool kAcc>
inline void CubeBlock(float* __restrict c, int ldc, const float* __restrict a,
                      const float* __restrict b, int k, int rows, int width) {
  constexpr int kV = kCols / 8;
  const bool full = rows == kRows && width == kCols;
  float edge[kRows * kCols];
  float* out = full ? c : edge;
  const int ldo = full ? ldc : kCols;
  if (!full) {
    for (int r = 0; r < kRows; ++r) {
      for (int j = 0; j < kCols; ++j) {
        edge[r * kCols + j] =
            kAcc && r < rows && j < width ? c[r * ldc + j] : 0.0f;
      }
    }
  }
  Vec8 acc[kRows][kV];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      acc[r][v] = kAcc || !full ? LoadVec8(out + r * ldo + 8 * v) : Vec8{};
    }
  }
  for (int p = 0; p < k; ++p) {
    Vec8 bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = LoadVec8(b + 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float s = a[r];
      const Vec8 av = {s, s, s, s, s, s, s, s};
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) acc[r][v] = MulAdd(acc[r][v], av, bv[v]);
    }
    a += kRows;
    b += kCols;
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) StoreVec8(out + r * ldo + 8 * v, acc[r][v]);
  }
  if (!full) {
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < width; ++j) c[r * ldc + j] = edge[r * kCols + j];
    }
  }
}

// L0C[m x n] (+)= L0A * L0B (packed, k of K each), L0C dense row-major.
// Column panels outside, row panels inside: one L0B panel stays in the
// first-level cache while the L0A panels stream past it.
template <bool kAcc>
inline void CubeMatmulImpl(float* __restrict l0c, const float* __restrict l0a,
                           const float* __restrict l0b, int m, int k, int n) {
  for (int j = 0; j < n; j += kCols) {
    const int width = n - j < kCols ? n - j : kCols;
    const float* bj = l0b + static_cast<int64_t>(j) * k;
    for (int i = 0; i < m; i += kRows) {
      const int rows = m - i < kRows ? m - i : kRows;
      CubeBlock<kAcc>(l0c + static_cast<int64_t>(i) * n + j, n,
                      l0a + static_cast<int64_t>(i) * k, bj, k, rows, width);
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

// TSTORE L0C -> GM: gm[r * ld + c] = Conv::Store(l0c[r * n + c]).
template <typename Conv = F32, typename T>
inline void CubeStoreL0C(T* __restrict gm, int64_t ld,
                         const float* __restrict l0c, int m, int n) {
  for (int r = 0; r < m; ++r) {
    const float* __restrict src = l0c + static_cast<int64_t>(r) * n;
    T* __restrict dst = gm + r * ld;
    for (int c = 0; c < n; ++c) dst[c] = Conv::Store(src[c]);
  }
}

}  // namespace pto_cube

#endif  // PTO_CUBE_H_
