// PTO cube instructions for host targets: the matmul path of generated code.
//
// A cube task computes one output tile C[m x n] (m <= mL0, n <= nL0) of
// C = op(A) * op(B), K in L1 blocks and L0 steps:
//
//   TLOAD  GM -> L1    CubeLoadL1: a [rows x cols] region of a row-major GM
//                      matrix (leading dimension `ld`) as an f32 L1 tile,
//                      widening f16/bf16 exactly (Conv::Load)
//   TMOV   L1 -> L0A   CubeMovL0A: m rows by kc of K of op(A) from L1, a
//                      strided view (L1 holds A or A^T)
//          L1 -> L0B   CubeMovL0B: kc of K by n columns of op(B) into L0B,
//                      packed in column panels (below)
//   TMATMUL            CubeMatmul: L0C = L0A * L0B (f32 accumulate)
//   TMATMUL_ACC        CubeMatmulAcc: L0C += L0A * L0B (the next L0 step)
//   TSTORE L0C -> GM   CubeStoreL0C: the dense [m x n] L0C tile into GM,
//                      rounded to the output type (Conv::Store)
//
// Host buffers are views where a move would copy f32 data unchanged: an
// f32 TLOAD returns the GM region itself (with GM's leading dimension), and
// a TMOV to L0A returns the L1 block with its strides (the micro-kernel
// reads A transposed or not); conversions and L0B's packing copy into the
// caller's tile.
//
// L0 layouts: L0A is a strided view [m x kc] (the micro-kernel broadcasts
// its elements: from kRows row streams, or from one contiguous column when
// A is transposed); L0B holds ceil(n / kCols) panels of
// kCols columns, each [kc][kCols] (element (p, c) of panel j at
// j * kCols * kc + p * kCols + c), columns past n zero, so the micro-kernel
// reads B contiguously with whole vectors. L0C is dense row-major [m x n].
//
// Like pto_tile.h this header is self-contained C++17 that includes only
// <stdint.h>, so it can be embedded into the compiler and written next to
// generated sources. Conv is a type with static `float Load(T)` and
// `T Store(float)` (pto_tile::Elem<T> in generated code).
//
// The micro-kernel keeps a block of C in vector registers across the whole
// K of the L0 tiles: kRows x kCols (6 x 16 floats: 12 AVX2 registers; GCC
// vector extensions, so the same code is SSE on older targets), loading one
// L0B panel row (2 vectors) and broadcasting kRows L0A elements per k step.
// On targets with FMA (host-x86_64-v3) a CPU with AVX-512F runs an 8 x 32
// block in 512-bit registers instead (two L0B panels at once; chosen once
// per process with __builtin_cpu_supports; PTO_CUBE_AVX512 0/1 may be
// predefined to choose). Either way each element of C is accumulated over k
// in order with one fused multiply-add per step (a rounded multiply then
// add on targets without FMA), so results do not depend on the tile shapes
// or on the path taken: both give the same bits.
#ifndef PTO_CUBE_H_
#define PTO_CUBE_H_

#include <stdint.h>

// Vec8 values passed between inline functions on targets without AVX: GCC
// warns, at every function they are inlined into, that the (never used
// across objects) ABI differs; the warning stays off for the includer.
#pragma GCC diagnostic ignored "-Wpsabi"

// Whether steps are fused multiply-adds (may be predefined 0/1: tests build
// a copy of this header for x86-64-v3 under a target pragma, which does not
// define __FMA__).
#ifndef PTO_CUBE_FMA
#if defined(__FMA__) && defined(__AVX__)
#define PTO_CUBE_FMA 1
#else
#define PTO_CUBE_FMA 0
#endif
#endif

namespace pto_cube {

constexpr int kRows = 6;   // rows of C per register block
constexpr int kCols = 16;  // columns of C per register block (an L0B panel)

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

// TLOAD GM -> L1: the [rows x cols] region at `gm` (leading dimension
// `ld`) as f32: l1[r * cols + c] = Conv::Load(gm[r * ld + c]), *l1_ld =
// cols; f32 data is not copied (returns gm, *l1_ld = ld).
template <typename Conv = F32, typename T>
inline const float* CubeLoadL1(float* __restrict l1, const T* __restrict gm,
                               int64_t ld, int rows, int cols, int64_t* l1_ld) {
  for (int r = 0; r < rows; ++r) {
    const T* __restrict src = gm + r * ld;
    float* __restrict dst = l1 + static_cast<int64_t>(r) * cols;
    for (int c = 0; c < cols; ++c) dst[c] = Conv::Load(src[c]);
  }
  *l1_ld = cols;
  return l1;
}

template <typename Conv = F32>
inline const float* CubeLoadL1(float* /*l1*/, const float* gm, int64_t ld,
                               int /*rows*/, int /*cols*/, int64_t* l1_ld) {
  *l1_ld = ld;
  return gm;
}

// TLOAD GM -> L1 converting a row at a time: Rows::Row(float* d, const T*
// s, int n) sets d[c] from s[c] for c < n (generated code passes f16 rows
// to pto_tile's 8-wide F16C conversion).
template <typename Rows, typename T>
inline const float* CubeLoadL1Rows(float* __restrict l1, const T* __restrict gm,
                                   int64_t ld, int rows, int cols,
                                   int64_t* l1_ld) {
  for (int r = 0; r < rows; ++r) {
    Rows::Row(l1 + static_cast<int64_t>(r) * cols, gm + r * ld, cols);
  }
  *l1_ld = cols;
  return l1;
}

// TMOV L1 -> L0A: K columns [k0, k0 + kc) of op(A) from an L1 tile
// (leading dimension l1_ld) holding A [m x K-block], or with `trans` A^T
// [K-block x m], as a view of L1 (no copy): element (r, p) of L0A is at
// result[r * *rs + p * *ps].
inline const float* CubeMovL0A(const float* l1, int64_t l1_ld, int k0,
                               bool trans, int64_t* rs, int64_t* ps) {
  *rs = trans ? 1 : l1_ld;
  *ps = trans ? l1_ld : 1;
  return l1 + k0 * *ps;
}

// TMOV L1 -> L0B: K rows [k0, k0 + kc) and columns [0, n) of op(B) from an
// L1 tile (leading dimension l1_cols) holding B [K-block x n], or with
// `trans` B^T [n x K-block], packed into column panels.
inline void CubeMovL0B(float* __restrict l0b, const float* __restrict l1,
                       int64_t l1_cols, int k0, int kc, int n, bool trans) {
  const int whole = trans ? 0 : n / kCols * kCols;
  // Whole panels row by row (each L1 row read once, in order): 64-byte
  // copies into the panels.
  for (int p = 0; p < kc; ++p) {
    const float* __restrict src = l1 + (k0 + p) * l1_cols;
    for (int j = 0; j < whole; j += kCols) {
      __builtin_memcpy(l0b + static_cast<int64_t>(j) * kc + p * kCols, src + j,
                       kCols * sizeof(float));
    }
  }
  for (int j = whole; j < n; j += kCols) {
    const int cols = n - j < kCols ? n - j : kCols;
    float* __restrict panel = l0b + static_cast<int64_t>(j) * kc;
    if (!trans) {  // the last, partial panel
      for (int p = 0; p < kc; ++p) {
        const float* __restrict src =
            l1 + (k0 + p) * l1_cols + j;
        float* __restrict dst = panel + p * kCols;
        for (int c = 0; c < cols; ++c) dst[c] = src[c];
        for (int c = cols; c < kCols; ++c) dst[c] = 0.0f;
      }
    } else {
      for (int c = 0; c < cols; ++c) {
        const float* __restrict src =
            l1 + (j + c) * l1_cols + k0;
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
#if PTO_CUBE_FMA
  return __builtin_ia32_vfmaddps256(a, b, acc);
#else
  return acc + a * b;
#endif
}

// Where a block of C is accumulated: C itself for a full block, else a
// local [kRows x width] block (rows past `rows` and columns past `width`
// are computed from clamped rows / zero columns and dropped).
struct BlockOut {
  float* p;
  int ld;
};

template <bool kAcc, int kWidth>
inline BlockOut BeginBlock(float* __restrict c, int ldc, int rows, int width,
                           float* edge) {
  if (rows == kRows && width == kWidth) return {c, ldc};
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < kWidth; ++j) {
      edge[r * kWidth + j] = kAcc && r < rows && j < width ? c[r * ldc + j] : 0.0f;
    }
  }
  return {edge, kWidth};
}

template <int kWidth>
inline void EndBlock(float* __restrict c, int ldc, int rows, int width,
                     const float* edge) {
  if (rows == kRows && width == kWidth) return;
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < width; ++j) c[r * ldc + j] = edge[r * kWidth + j];
  }
}

// One register block: C[rows x width] (+)= A [rows x k] (element (r, p)
// at a[r * rs + p * ps]) *
// B panel [k][kCols], with the accumulators in kRows * kCols / 8 vector
// registers.
template <bool kAcc>
inline void CubeBlock(float* __restrict c, int ldc, const float* __restrict a,
                      int64_t rs, int64_t ps, const float* __restrict b, int k, int rows,
                      int width) {
  constexpr int kV = kCols / 8;
  float edge[kRows * kCols];
  const BlockOut out = BeginBlock<kAcc, kCols>(c, ldc, rows, width, edge);
  const bool load = kAcc || out.p == edge;
  const float* ar[kRows];
  for (int r = 0; r < kRows; ++r) ar[r] = a + (r < rows ? r : 0) * rs;
  Vec8 acc[kRows][kV];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      acc[r][v] = load ? LoadVec8(out.p + r * out.ld + 8 * v) : Vec8{};
    }
  }
  for (int p = 0; p < k; ++p) {
    Vec8 bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = LoadVec8(b + 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float x = ar[r][p * ps];
      const Vec8 av = {x, x, x, x, x, x, x, x};  // vbroadcastss
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) acc[r][v] = MulAdd(acc[r][v], av, bv[v]);
    }
    b += kCols;
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) StoreVec8(out.p + r * out.ld + 8 * v, acc[r][v]);
  }
  EndBlock<kCols>(c, ldc, rows, width, edge);
}

// L0C[m x n] (+)= L0A * L0B (k of K), L0C dense row-major. Column panels
// outside, row blocks inside: one L0B panel stays in the first-level cache
// while the L0A rows stream past it.
// Not inlined: one copy per kernel, however many cube functions call it
// (keeps kernels' compile time down).
template <bool kAcc>
__attribute__((noinline)) inline void CubeMatmulVec8(float* __restrict l0c, const float* __restrict l0a,
                           int64_t rs, int64_t ps, const float* __restrict l0b, int m,
                           int k, int n) {
  for (int j = 0; j < n; j += kCols) {
    const int width = n - j < kCols ? n - j : kCols;
    const float* bj = l0b + static_cast<int64_t>(j) * k;
    for (int i = 0; i < m; i += kRows) {
      const int rows = m - i < kRows ? m - i : kRows;
      CubeBlock<kAcc>(l0c + static_cast<int64_t>(i) * n + j, n,
                      l0a + i * rs, rs, ps, bj, k, rows, width);
    }
  }
}

// The AVX-512 path (x86 targets with FMA; see the header comment).
#ifndef PTO_CUBE_AVX512
#if defined(__x86_64__) && PTO_CUBE_FMA && defined(__GNUC__)
#define PTO_CUBE_AVX512 1
#else
#define PTO_CUBE_AVX512 0
#endif
#endif

#if PTO_CUBE_AVX512
typedef float Vec16 __attribute__((vector_size(64)));

// Rows of C per AVX-512 block (A is read unpacked, so the row count is
// free of L0B's layout): 16 accumulators, 2 B vectors and a broadcast in
// 32 registers, 8 row pointers (12 rows would spill).
constexpr int kRows512 = 8;

// A kRows512 x (16 * kPanels) block of C over kPanels adjacent L0B panels
// (`panel_stride` floats apart), in 512-bit registers.
template <bool kAcc, int kPanels>
__attribute__((target("avx512f"))) inline void CubeBlock512(
    float* __restrict c, int ldc, const float* __restrict a, int64_t rs, int64_t ps,
    const float* __restrict b, int64_t panel_stride, int k, int rows,
    int width) {
  constexpr int kWidth = kCols * kPanels;
  float edge[kRows512 * kWidth];
  float* out = c;
  int ldo = ldc;
  const bool full = rows == kRows512 && width == kWidth;
  if (!full) {
    for (int r = 0; r < kRows512; ++r) {
      for (int j = 0; j < kWidth; ++j) {
        edge[r * kWidth + j] = kAcc && r < rows && j < width ? c[r * ldc + j] : 0.0f;
      }
    }
    out = edge;
    ldo = kWidth;
  }
  const float* ar[kRows512];
  for (int r = 0; r < kRows512; ++r) ar[r] = a + (r < rows ? r : 0) * rs;
  Vec16 acc[kRows512][kPanels];
#pragma GCC unroll 8
  for (int r = 0; r < kRows512; ++r) {
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      if (kAcc || !full) {
        __builtin_memcpy(&acc[r][q], out + r * ldo + 16 * q, 64);
      } else {
        acc[r][q] = Vec16{};
      }
    }
  }
  for (int p = 0; p < k; ++p) {
    Vec16 bv[kPanels];
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      __builtin_memcpy(&bv[q], b + q * panel_stride + p * kCols, 64);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRows512; ++r) {
      const float x = ar[r][p * ps];
      const Vec16 av = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) {
        acc[r][q] = __builtin_ia32_vfmaddps512_mask(av, bv[q], acc[r][q],
                                                    static_cast<short>(-1), 4);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows512; ++r) {
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      __builtin_memcpy(out + r * ldo + 16 * q, &acc[r][q], 64);
    }
  }
  if (!full) {
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < width; ++j) c[r * ldc + j] = edge[r * kWidth + j];
    }
  }
}

template <bool kAcc>
__attribute__((target("avx512f"), noinline)) inline void CubeMatmul512(
    float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const float* __restrict l0b, int m, int k, int n) {
  const int64_t panel = static_cast<int64_t>(kCols) * k;
  int j = 0;
  for (; j + kCols < n; j += 2 * kCols) {  // two panels (the second may be short)
    const int width = n - j < 2 * kCols ? n - j : 2 * kCols;
    const float* bj = l0b + static_cast<int64_t>(j) * k;
    for (int i = 0; i < m; i += kRows512) {
      const int rows = m - i < kRows512 ? m - i : kRows512;
      CubeBlock512<kAcc, 2>(l0c + static_cast<int64_t>(i) * n + j, n,
                            l0a + i * rs, rs, ps, bj, panel, k,
                            rows, width);
    }
  }
  if (j < n) {  // one last panel
    const float* bj = l0b + static_cast<int64_t>(j) * k;
    for (int i = 0; i < m; i += kRows512) {
      const int rows = m - i < kRows512 ? m - i : kRows512;
      CubeBlock512<kAcc, 1>(l0c + static_cast<int64_t>(i) * n + j, n,
                            l0a + i * rs, rs, ps, bj, panel, k,
                            rows, n - j);
    }
  }
}

inline bool CubeHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif  // PTO_CUBE_AVX512

template <bool kAcc>
inline void CubeMatmulImpl(float* __restrict l0c, const float* __restrict l0a,
                           int64_t rs, int64_t ps, const float* __restrict l0b, int m,
                           int k, int n) {
#if PTO_CUBE_AVX512
  if (CubeHasAvx512()) {
    CubeMatmul512<kAcc>(l0c, l0a, rs, ps, l0b, m, k, n);
    return;
  }
#endif
  CubeMatmulVec8<kAcc>(l0c, l0a, rs, ps, l0b, m, k, n);
}

// TMATMUL: L0C = L0A * L0B (L0A [m x k]: element (r, p) at
// l0a[r * rs + p * ps], as CubeMovL0A set them).
inline void CubeMatmul(float* __restrict l0c, const float* __restrict l0a,
                       int64_t rs, int64_t ps, const float* __restrict l0b, int m, int k,
                       int n) {
  CubeMatmulImpl<false>(l0c, l0a, rs, ps, l0b, m, k, n);
}

// TMATMUL_ACC: L0C += L0A * L0B.
inline void CubeMatmulAcc(float* __restrict l0c, const float* __restrict l0a,
                          int64_t rs, int64_t ps, const float* __restrict l0b, int m,
                          int k, int n) {
  CubeMatmulImpl<true>(l0c, l0a, rs, ps, l0b, m, k, n);
}

// Small M. TMOV to L0B packs B into panels, a pass over B that pays when
// many rows of A reuse each panel; with a few rows it costs as much as the
// multiply (1 x 4096 x 4096: three quarters of the time), and a register
// block of kRows rows computes rows that are dropped. For m <= kSmallM
// and B not transposed, generated code skips the TMOV and the multiply
// reads B's rows where L1 has them (f32: GM itself), a row of C at a time.
// Each C element takes the same steps as in the panel kernels (MulAdd in k
// order from 0 or from C, 8 lanes at a time; short columns zero-padded), so
// the bits are the same.
constexpr int kSmallM = 4;

// C[0, 8 * kV) (+)= a [1 x k] (element p at a[p * ps]) * B [k x 8 * kV]
// (row p at b + p * ldb).
template <bool kAcc, int kV>
inline void CubeRowChunk(float* __restrict c, const float* __restrict a, int64_t ps,
                         const float* __restrict b, int64_t ldb, int k) {
  Vec8 acc[kV];
#pragma GCC unroll 8
  for (int v = 0; v < kV; ++v) acc[v] = kAcc ? LoadVec8(c + 8 * v) : Vec8{};
  for (int p = 0; p < k; ++p) {
    const float x = a[p * ps];
    const Vec8 av = {x, x, x, x, x, x, x, x};
    const float* __restrict bp = b + p * ldb;
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) acc[v] = MulAdd(acc[v], av, LoadVec8(bp + 8 * v));
  }
#pragma GCC unroll 8
  for (int v = 0; v < kV; ++v) StoreVec8(c + 8 * v, acc[v]);
}

template <bool kAcc>
__attribute__((noinline)) inline void CubeMatmulRowsImpl(
    float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const float* __restrict b, int64_t ldb, int m, int k, int n) {
  for (int i = 0; i < m; ++i) {
    const float* a = l0a + i * rs;
    float* c = l0c + static_cast<int64_t>(i) * n;
    int j = 0;
    for (; j + 64 <= n; j += 64) CubeRowChunk<kAcc, 8>(c + j, a, ps, b + j, ldb, k);
    for (; j + 8 <= n; j += 8) CubeRowChunk<kAcc, 1>(c + j, a, ps, b + j, ldb, k);
    if (j == n) continue;
    const int w = n - j;  // the last columns, zero-padded like a short panel
    float pad[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int q = 0; kAcc && q < w; ++q) pad[q] = c[j + q];
    Vec8 acc = LoadVec8(pad);
    for (int p = 0; p < k; ++p) {
      const float x = a[p * ps];
      const Vec8 av = {x, x, x, x, x, x, x, x};
      Vec8 bv = {};
      __builtin_memcpy(&bv, b + p * ldb + j, w * sizeof(float));
      acc = MulAdd(acc, av, bv);
    }
    StoreVec8(pad, acc);
    for (int q = 0; q < w; ++q) c[j + q] = pad[q];
  }
}

// TMATMUL without L0B (m <= kSmallM): L0C[m x n] = L0A * B, B [k x n] read
// from L1 rows (leading dimension ldb).
inline void CubeMatmulRows(float* __restrict l0c, const float* __restrict l0a,
                           int64_t rs, int64_t ps, const float* __restrict b,
                           int64_t ldb, int m, int k, int n) {
  CubeMatmulRowsImpl<false>(l0c, l0a, rs, ps, b, ldb, m, k, n);
}

// TMATMUL_ACC without L0B: L0C += L0A * B.
inline void CubeMatmulRowsAcc(float* __restrict l0c, const float* __restrict l0a,
                              int64_t rs, int64_t ps, const float* __restrict b,
                              int64_t ldb, int m, int k, int n) {
  CubeMatmulRowsImpl<true>(l0c, l0a, rs, ps, b, ldb, m, k, n);
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

// BF16 matmuls on AMX tiles (host-x86_64-v3-amx; empty on other targets).
#include "pto_amx.h"

#endif  // PTO_CUBE_H_
