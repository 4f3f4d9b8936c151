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
//   TIMG2COL GM -> L1  CubeLoadImg2Col: B's block of the im2col matrix of a
//                      feature map (a conv; pto_cube_img2col.h)
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
//
// Two other forms of TMATMUL (below): for a few rows of A (m <= kSmallM,
// matrix-vector products) the multiply streams B's rows without the TMOV to
// L0B, with the panel kernels' bits; and a bf16 task on a CPU with
// AVX512-BF16 runs CubeMatmulBf16 (VDPBF16PS on pairs of K, chosen at run
// time; generated code keeps the widening path for CPUs without it).
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

// __builtin_cpu_supports reads libgcc's CPU model, filled in when the kernel
// is loaded: a load and a test, and no guarded static (whose guard would need
// libstdc++, which kernels do not link).
inline bool CubeHasAvx512() { return __builtin_cpu_supports("avx512f"); }
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

// BF16 on the CPU's BF16 dot-product instruction (AVX512-BF16 VDPBF16PS).
//
// CubeMatmulBf16 is a whole cube task for bf16 A and B: C[m x n] (f32,
// dense L0C) = op(A) * op(B) over all of K, reading the bf16 operands from
// GM. VDPBF16PS multiplies pairs of bf16 and adds both products to an f32
// lane, so both operands are read in pairs of K:
//
//   L0B   B in K blocks of kBf16KBlock, packed by CubeMovL0BPairs into
//         panels of kCols columns: panel j holds pairs q of K (k = 2q and
//         2q + 1) as [q][kCols][2], element (k, c) of the block at
//         j * kCols * 2 * pairs + (k / 2) * 2 * kCols + c * 2 + k % 2, zero
//         past the block's K (an odd K's last pair) and past n: each pair
//         row of a panel is one 64-byte vector;
//   L0A   A not transposed is read from GM, a pair of K of a row being one
//         32-bit broadcast; A^T is copied by CubeMovL0APairs into a
//         row-major [m x even(kc)] tile first. An odd K's last step reads
//         the lone element of each row (its pair's other half is zero).
//   L0C   a block of kBf16Rows x 64 (four panels) in 16 zmm accumulators
//         over the K block, added to L0C between K blocks.
//
// Numerics: per pair of K, VDPBF16PS adds the product for k + 1 and then
// the one for k to the f32 lane, each product exact (bf16 x bf16 fits f32)
// and each addition rounded to nearest even, with subnormal inputs and
// results flushed to zero -- as AMX's TDPBF16PS (pto_amx.h). The order of
// the steps for an element of C depends only on K (every K block starts at
// an even k), not on the tile shape. The bits differ from the widening
// path's (one fused multiply-add per k, subnormals kept) within the dot
// product's rounding bound, plus a flushed subnormal per step.
//
// The path is chosen at run time: CubeHasBf16Dot says whether the CPU (and
// OS) reports AVX512-F, -BW and -BF16; where it does not, generated code
// takes the widening path (TLOAD converts bf16 to f32 and the FMA kernel
// runs). The functions carry their own target attribute, so kernels built
// for any x86-64 level contain them. PTO_CUBE_BF16_DOT 0/1 may be
// predefined to leave the path out or in.
#ifndef PTO_CUBE_BF16_DOT
#if defined(__x86_64__) && defined(__GNUC__)
#define PTO_CUBE_BF16_DOT 1
#else
#define PTO_CUBE_BF16_DOT 0
#endif
#endif

#if PTO_CUBE_BF16_DOT
constexpr int kBf16Rows = 4;       // rows of C per register block (x 64 columns)
constexpr int kBf16KBlock = 256;   // K per L0B block (even: pairs start at even k)

// uint16 elements of L0B for K (all of a task's K; a block holds at most
// kBf16KBlock) and n columns.
constexpr int64_t Bf16L0BElems(int64_t k, int64_t n) {
  return ((k < kBf16KBlock ? k : kBf16KBlock) + 1) / 2 * 2 * ((n + kCols - 1) / kCols * kCols);
}

// uint16 elements of L0A for a transposed A of m rows over K.
constexpr int64_t Bf16L0AElems(int64_t m, int64_t k) {
  return m * (((k < kBf16KBlock ? k : kBf16KBlock) + 1) / 2 * 2);
}

// As CubeHasAvx512.
inline bool CubeHasBf16Dot() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512bf16");
}

typedef float Bf16Acc __attribute__((vector_size(64)));   // 16 f32 lanes
typedef short Bf16Pairs __attribute__((vector_size(64)));  // 16 pairs of bf16

// acc += the pairwise products of a's and b's pairs.
__attribute__((target("avx512f,avx512bf16"))) inline Bf16Acc DotPairs(Bf16Acc acc, Bf16Pairs a,
                                                                      Bf16Pairs b) {
  __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
  return acc;
}

// The 32 bits w in every lane (vpbroadcastd): a pair of bf16.
__attribute__((target("avx512f"))) inline Bf16Pairs BroadcastPair(uint32_t w) {
  typedef uint32_t U32x16 __attribute__((vector_size(64)));
  const U32x16 v = {w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w};
  Bf16Pairs p;
  __builtin_memcpy(&p, &v, sizeof p);
  return p;
}

// TMOV to L0B in pairs: K rows [0, kc) and columns [0, n) of op(B) read
// from GM (B [K x n], or with `trans` B^T [n x K]; leading dimension ldb).
__attribute__((target("avx512f,avx512bw"))) inline void CubeMovL0BPairs(
    uint16_t* __restrict l0b, const uint16_t* __restrict b, int64_t ldb, bool trans, int kc,
    int n) {
  const int pairs = (kc + 1) / 2;
  const int64_t panel = static_cast<int64_t>(pairs) * 2 * kCols;
  if (trans) {  // B^T: a pair of K of a column is 32 contiguous bits of its row
    for (int j = 0; j < n; j += kCols) {
      uint16_t* __restrict dst = l0b + j / kCols * panel;
      const int cols = n - j < kCols ? n - j : kCols;
      for (int c = 0; c < kCols; ++c) {
        const uint16_t* __restrict src = b + static_cast<int64_t>(j + c) * ldb;
        for (int q = 0; q < pairs; ++q) {
          uint16_t* d = dst + q * 2 * kCols + c * 2;
          d[0] = c < cols ? src[2 * q] : 0;
          d[1] = c < cols && 2 * q + 1 < kc ? src[2 * q + 1] : 0;
        }
      }
    }
    return;
  }
  // Even indices from x, odd from y: the pairs of 16 columns of two rows.
  const Bf16Pairs lo = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                        8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const Bf16Pairs hi = lo + 16;
  const int whole = n / (2 * kCols) * (2 * kCols);
  for (int q = 0; q < pairs; ++q) {
    const uint16_t* __restrict r0 = b + static_cast<int64_t>(2 * q) * ldb;
    const bool odd = 2 * q + 1 < kc;
    const uint16_t* __restrict r1 = odd ? r0 + ldb : r0;
    uint16_t* __restrict dst = l0b + q * 2 * kCols;
    for (int j = 0; j < whole; j += 2 * kCols) {
      Bf16Pairs x, y;
      __builtin_memcpy(&x, r0 + j, 64);
      if (odd) {
        __builtin_memcpy(&y, r1 + j, 64);
      } else {
        y = Bf16Pairs{};
      }
      const Bf16Pairs p0 = __builtin_shuffle(x, y, lo), p1 = __builtin_shuffle(x, y, hi);
      __builtin_memcpy(dst + j / kCols * panel, &p0, 64);
      __builtin_memcpy(dst + (j / kCols + 1) * panel, &p1, 64);
    }
    for (int j = whole; j < n; j += kCols) {
      uint16_t* __restrict d = dst + j / kCols * panel;
      for (int c = 0; c < kCols; ++c) {
        const bool in = j + c < n;
        d[2 * c] = in ? r0[j + c] : 0;
        d[2 * c + 1] = in && odd ? r1[j + c] : 0;
      }
    }
  }
}

// TMOV to L0A for a transposed A: A^T [K x m] (leading dimension lda), K
// rows [0, kc), as a row-major [m x even(kc)] tile (zero past kc); returns
// its leading dimension.
inline int64_t CubeMovL0APairs(uint16_t* __restrict l0a, const uint16_t* __restrict at,
                               int64_t lda, int m, int kc) {
  const int64_t ld = (kc + 1) / 2 * 2;
  for (int p = 0; p < kc; ++p) {
    const uint16_t* __restrict src = at + p * lda;
    for (int r = 0; r < m; ++r) l0a[r * ld + p] = src[r];
  }
  if (kc % 2 != 0) {
    for (int r = 0; r < m; ++r) l0a[r * ld + kc] = 0;
  }
  return ld;
}

// One register block: C[rows x width] (+)= A [rows x kc] (bf16, row r at
// a + r * lda) * kPanels adjacent L0B panels (`panel` elements apart), from
// pair p0 of K on (the pairs before it are in C already); a pair of each row
// broadcast once per step and used for every panel. Here and below, C (+)=
// means C += where `onto` is set, C = otherwise.
template <int kRowsB, int kPanels>
__attribute__((target("avx512f,avx512bf16"))) inline void CubeBlockBf16(
    bool onto, float* __restrict c, int ldc, const uint16_t* __restrict a, int64_t lda,
    const uint16_t* __restrict b, int64_t panel, int kc, int rows, int width, int p0 = 0) {
  constexpr int kWidth = kCols * kPanels;
  float edge[kRowsB * kWidth];
  float* out = c;
  int ldo = ldc;
  const bool full = rows == kRowsB && width == kWidth;
  if (!full) {
    for (int r = 0; r < kRowsB; ++r) {
      for (int j = 0; j < kWidth; ++j) {
        edge[r * kWidth + j] = onto && r < rows && j < width ? c[r * ldc + j] : 0.0f;
      }
    }
    out = edge;
    ldo = kWidth;
  }
  const uint16_t* ar[kRowsB];
  for (int r = 0; r < kRowsB; ++r) ar[r] = a + (r < rows ? r : 0) * lda;
  Bf16Acc acc[kRowsB][kPanels];
#pragma GCC unroll 8
  for (int r = 0; r < kRowsB; ++r) {
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      if (onto || !full) {
        __builtin_memcpy(&acc[r][q], out + r * ldo + 16 * q, 64);
      } else {
        acc[r][q] = Bf16Acc{};
      }
    }
  }
  const int pairs = kc / 2;
  for (int p = p0; p < pairs; ++p) {
    Bf16Pairs bv[kPanels];
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      __builtin_memcpy(&bv[q], b + q * panel + p * 2 * kCols, 64);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRowsB; ++r) {
      uint32_t w;
      __builtin_memcpy(&w, ar[r] + 2 * p, 4);
      const Bf16Pairs av = BroadcastPair(w);
#pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) acc[r][q] = DotPairs(acc[r][q], av, bv[q]);
    }
  }
  if (kc % 2 != 0) {  // the lone last element of each row, paired with zero
    Bf16Pairs bv[kPanels];
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      __builtin_memcpy(&bv[q], b + q * panel + pairs * 2 * kCols, 64);
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRowsB; ++r) {
      const Bf16Pairs av = BroadcastPair(ar[r][2 * pairs]);
#pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) acc[r][q] = DotPairs(acc[r][q], av, bv[q]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRowsB; ++r) {
#pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) __builtin_memcpy(out + r * ldo + 16 * q, &acc[r][q], 64);
  }
  if (!full) {
    for (int r = 0; r < rows; ++r) {
      for (int j = 0; j < width; ++j) c[r * ldc + j] = edge[r * kWidth + j];
    }
  }
}

// The full 4 x 64 block (kBf16Rows rows, four panels) of a K block of at
// least two pairs: its pairs in steps of two in one asm loop, 16 zmm
// accumulators (zmm0-15), the four panels' pair rows in zmm16-19 and two
// rows' broadcast pairs in zmm20-21. Written out because GCC's allocation of
// the 16 accumulators around the dot product's asm copied some of them
// through another register every step. The last pair of an odd number of
// pairs and an odd K's lone element go through CubeBlockBf16.
#define PTO_BF16_PANELS(OFF)                                                 \
  "vmovdqu64 " #OFF "(%[b]), %%zmm16\n\t"                                    \
  "vmovdqu64 " #OFF "(%[b],%[p1]), %%zmm17\n\t"                              \
  "vmovdqu64 " #OFF "(%[b],%[p2]), %%zmm18\n\t"                              \
  "vmovdqu64 " #OFF "(%[b],%[p3]), %%zmm19\n\t"
#define PTO_BF16_ROW(ACC0, ACC1, ACC2, ACC3, A)                              \
  "vdpbf16ps %%zmm16, %%zmm" #A ", %%zmm" #ACC0 "\n\t"                       \
  "vdpbf16ps %%zmm17, %%zmm" #A ", %%zmm" #ACC1 "\n\t"                       \
  "vdpbf16ps %%zmm18, %%zmm" #A ", %%zmm" #ACC2 "\n\t"                       \
  "vdpbf16ps %%zmm19, %%zmm" #A ", %%zmm" #ACC3 "\n\t"
#define PTO_BF16_ROWS(OFF)                                                   \
  "vpbroadcastd " #OFF "(%[a]), %%zmm20\n\t"                                 \
  "vpbroadcastd " #OFF "(%[a],%[l1]), %%zmm21\n\t"                           \
  PTO_BF16_ROW(0, 1, 2, 3, 20)                                               \
  "vpbroadcastd " #OFF "(%[a],%[l1],2), %%zmm20\n\t"                         \
  PTO_BF16_ROW(4, 5, 6, 7, 21)                                               \
  "vpbroadcastd " #OFF "(%[a],%[l3]), %%zmm21\n\t"                           \
  PTO_BF16_ROW(8, 9, 10, 11, 20)                                             \
  PTO_BF16_ROW(12, 13, 14, 15, 21)
#define PTO_BF16_C_ROW(OP, C, A0, A1, A2, A3)                                \
  OP(A0, "(" C ")") OP(A1, "64(" C ")") OP(A2, "128(" C ")") OP(A3, "192(" C ")") \
  "add %[ldc], " C "\n\t"
#define PTO_BF16_LOAD(R, M) "vmovups " M ", %%zmm" #R "\n\t"
#define PTO_BF16_STORE(R, M) "vmovups %%zmm" #R ", " M "\n\t"
#define PTO_BF16_C(OP, C)                                                    \
  PTO_BF16_C_ROW(OP, C, 0, 1, 2, 3) PTO_BF16_C_ROW(OP, C, 4, 5, 6, 7)        \
  PTO_BF16_C_ROW(OP, C, 8, 9, 10, 11) PTO_BF16_C_ROW(OP, C, 12, 13, 14, 15)
#define PTO_BF16_ZERO4(A0, A1, A2, A3)                                       \
  "vpxord %%zmm" #A0 ", %%zmm" #A0 ", %%zmm" #A0 "\n\t"                      \
  "vpxord %%zmm" #A1 ", %%zmm" #A1 ", %%zmm" #A1 "\n\t"                      \
  "vpxord %%zmm" #A2 ", %%zmm" #A2 ", %%zmm" #A2 "\n\t"                      \
  "vpxord %%zmm" #A3 ", %%zmm" #A3 ", %%zmm" #A3 "\n\t"

__attribute__((target("avx512f,avx512bf16"))) inline void CubeBlockBf16Full(
    bool onto, float* __restrict c, int ldc, const uint16_t* __restrict a, int64_t lda,
    const uint16_t* __restrict b, int64_t panel, int kc) {
  const int pairs = kc / 2;
  const int64_t p1 = panel * 2, p2 = 2 * p1, p3 = 3 * p1, l1 = lda * 2, l3 = 3 * l1;
  const int64_t ldc_bytes = int64_t{ldc} * 4;
  int64_t steps = pairs / 2;
  const char* bp = reinterpret_cast<const char*>(b);
  const char* ap = reinterpret_cast<const char*>(a);
  char* cl = reinterpret_cast<char*>(c);
  char* cs = cl;
  // C: loaded (onto) or zeroed; the pairs; C stored.
  __asm__ volatile(
      "test %[onto], %[onto]\n\t"
      "jz 2f\n\t" PTO_BF16_C(PTO_BF16_LOAD, "%[cl]")
      "jmp 3f\n\t"
      "2:\n\t" PTO_BF16_ZERO4(0, 1, 2, 3) PTO_BF16_ZERO4(4, 5, 6, 7)
      PTO_BF16_ZERO4(8, 9, 10, 11) PTO_BF16_ZERO4(12, 13, 14, 15)
      ".p2align 5\n\t"
      "3:\n\t" PTO_BF16_PANELS(0) PTO_BF16_ROWS(0) PTO_BF16_PANELS(64) PTO_BF16_ROWS(4)
      "add $128, %[b]\n\t"
      "add $8, %[a]\n\t"
      "dec %[steps]\n\t"
      "jnz 3b\n\t" PTO_BF16_C(PTO_BF16_STORE, "%[cs]")
      // GCC does not see the asm's zmm registers, so it would not clear their
      // upper halves before returning to code built without AVX.
      "vzeroupper\n\t"
      : [b] "+r"(bp), [a] "+r"(ap), [steps] "+r"(steps), [cl] "+r"(cl),
        [cs] "+r"(cs)
      : [p1] "r"(p1), [p2] "r"(p2), [p3] "r"(p3), [l1] "r"(l1), [l3] "r"(l3),
        [ldc] "r"(ldc_bytes), [onto] "r"(static_cast<int>(onto))
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18",
        "xmm19", "xmm20", "xmm21", "cc", "memory");
  if (pairs % 2 != 0 || kc % 2 != 0) {
    CubeBlockBf16<kBf16Rows, 4>(true, c, ldc, a, lda, b, panel, kc, kBf16Rows, 4 * kCols,
                                pairs / 2 * 2);
  }
}
#undef PTO_BF16_PANELS
#undef PTO_BF16_ROW
#undef PTO_BF16_ROWS
#undef PTO_BF16_C_ROW
#undef PTO_BF16_LOAD
#undef PTO_BF16_STORE
#undef PTO_BF16_C
#undef PTO_BF16_ZERO4

// What a K block does with a register block of L0C once its K block is
// done: nothing (the K blocks before the last).
struct Bf16KeepBlock {
  void operator()(int, int, int, int) const {}
};

// Columns [j, j + 16 * kPanels) of L0C (width: those left), every row block;
// done(i, j, rows, width) after each.
template <int kPanels, typename Done = Bf16KeepBlock>
__attribute__((target("avx512f,avx512bf16"))) inline void CubeColumnsBf16(
    bool onto, float* __restrict l0c, const uint16_t* __restrict a, int64_t lda,
    const uint16_t* __restrict bj, int64_t panel, int m, int kc, int n, int j,
    const Done& done = Done()) {
  const int width = n - j < kCols * kPanels ? n - j : kCols * kPanels;
  for (int i = 0; i < m; i += kBf16Rows) {
    const int rows = m - i < kBf16Rows ? m - i : kBf16Rows;
    float* const c = l0c + static_cast<int64_t>(i) * n + j;
    if (kPanels == 4 && rows == kBf16Rows && width == 4 * kCols && kc >= 4) {
      CubeBlockBf16Full(onto, c, n, a + i * lda, lda, bj, panel, kc);
    } else {
      CubeBlockBf16<kBf16Rows, kPanels>(onto, c, n, a + i * lda, lda, bj, panel, kc, rows, width);
    }
    done(i, j, rows, width);
  }
}

// L0C[m x n] (+)= A [m x kc] * L0B (one K block): four panels at a time
// (then two, then one), row blocks inside (the panels stay in the
// first-level cache); done as in CubeColumnsBf16.
template <typename Done = Bf16KeepBlock>
__attribute__((target("avx512f,avx512bf16"))) inline void CubeMatmulBf16Block(
    bool onto, float* __restrict l0c, const uint16_t* __restrict a, int64_t lda,
    const uint16_t* __restrict l0b, int m, int kc, int n, const Done& done = Done()) {
  const int64_t panel = static_cast<int64_t>((kc + 1) / 2) * 2 * kCols;
  int j = 0;
  for (; n - j > 3 * kCols; j += 4 * kCols) {
    CubeColumnsBf16<4>(onto, l0c, a, lda, l0b + j / kCols * panel, panel, m, kc, n, j, done);
  }
  for (; n - j > kCols; j += 2 * kCols) {
    CubeColumnsBf16<2>(onto, l0c, a, lda, l0b + j / kCols * panel, panel, m, kc, n, j, done);
  }
  if (j < n) {
    CubeColumnsBf16<1>(onto, l0c, a, lda, l0b + j / kCols * panel, panel, m, kc, n, j, done);
  }
}

// The task: L0C[m x n] = op(A) * op(B) over K (A [m x K] or, with
// a_trans, A^T [K x m], leading dimension lda; B [K x n] or B^T [n x K],
// ldb; bf16 bits). l0b holds Bf16L0BElems(K, n) elements; l0a
// Bf16L0AElems(m, K) where a_trans (else unused, may be null). Only where
// CubeHasBf16Dot().
// The K blocks of CubeMatmulBf16, the last one's register blocks handed to
// done (as in CubeColumnsBf16) as they finish.
template <typename Done>
__attribute__((target("avx512f,avx512bw,avx512bf16"))) inline void CubeMatmulBf16Blocks(
    float* __restrict l0c, const uint16_t* a, int64_t lda, bool a_trans, const uint16_t* b,
    int64_t ldb, bool b_trans, int m, int64_t k, int n, uint16_t* __restrict l0a,
    uint16_t* __restrict l0b, const Done& done) {
  for (int64_t k0 = 0; k0 < k; k0 += kBf16KBlock) {
    const int kc = static_cast<int>(k - k0 < kBf16KBlock ? k - k0 : kBf16KBlock);
    CubeMovL0BPairs(l0b, b_trans ? b + k0 : b + k0 * ldb, ldb, b_trans, kc, n);
    const uint16_t* a0 = a + k0;
    int64_t lda0 = lda;
    if (a_trans) {
      lda0 = CubeMovL0APairs(l0a, a + k0 * lda, lda, m, kc);
      a0 = l0a;
    }
    if (k0 + kc < k) {
      CubeMatmulBf16Block(k0 > 0, l0c, a0, lda0, l0b, m, kc, n);
    } else {
      CubeMatmulBf16Block(k0 > 0, l0c, a0, lda0, l0b, m, kc, n, done);
    }
  }
}

__attribute__((target("avx512f,avx512bw,avx512bf16"), noinline)) inline void CubeMatmulBf16(
    float* __restrict l0c, const uint16_t* a, int64_t lda, bool a_trans, const uint16_t* b,
    int64_t ldb, bool b_trans, int m, int64_t k, int n, uint16_t* __restrict l0a,
    uint16_t* __restrict l0b) {
  if (k <= 0) {
    for (int64_t i = 0; i < static_cast<int64_t>(m) * n; ++i) l0c[i] = 0.0f;
    return;
  }
  CubeMatmulBf16Blocks(l0c, a, lda, a_trans, b, ldb, b_trans, m, k, n, l0a, l0b,
                       Bf16KeepBlock());
}
#endif  // PTO_CUBE_BF16_DOT

// Small M (matrix-vector and skinny products). TMOV to L0B packs B into
// panels, a pass over B that pays when many rows of A reuse each panel;
// with a few rows the product is bound by reading B and the pass costs as
// much as the multiply. For m <= kSmallM and B not transposed, generated
// code skips the TMOV and the multiply streams B's rows where they are:
// f32 B in GM itself, bf16 B in GM too (each vector widened in registers,
// exactly: bf16 bits are f32's upper half), f16 B from its L1 tile. K goes
// in steps of kStreamK rows of B, each read whole, side by side, by blocks
// of up to kStreamRows rows of C (kStreamRows512 with AVX-512; the next
// blocks re-read the step's rows from cache); 16-lane blocks where the CPU
// has AVX-512F (on FMA targets), 8-lane ones otherwise. In these functions C (+)= means C += where `onto`
// is set (TMATMUL_ACC), C = otherwise. Each C element takes the same steps as in the panel
// kernels (MulAdd in k order from 0 or from C; short columns zero-padded),
// so the bits are the same.
constexpr int kSmallM = 16;

// bf16 bits as stored in GM (generated code passes pto_tile::bf16 data as
// uint16_t).
typedef uint16_t Bf16Bits;

inline Vec8 LoadB8(const float* p) { return LoadVec8(p); }
inline Vec8 LoadB8(const Bf16Bits* p) {
  typedef uint16_t U16x8 __attribute__((vector_size(16)));
  typedef uint32_t U32x8 __attribute__((vector_size(32)));
  U16x8 h;
  __builtin_memcpy(&h, p, sizeof h);
  const U32x8 w = __builtin_convertvector(h, U32x8) << 16;
  Vec8 v;
  __builtin_memcpy(&v, &w, sizeof v);
  return v;
}

inline float LoadB1(const float* p) { return *p; }
inline float LoadB1(const Bf16Bits* p) {
  const uint32_t w = static_cast<uint32_t>(*p) << 16;
  float f;
  __builtin_memcpy(&f, &w, sizeof f);
  return f;
}

// C[0, 8 * kV) (+)= a [1 x k] (element p at a[p * ps]) * B [k x 8 * kV]
// (row p at b + p * ldb).
template <int kV, typename TB>
inline void CubeRowChunk(bool onto, float* __restrict c, const float* __restrict a, int64_t ps,
                         const TB* __restrict b, int64_t ldb, int k) {
  Vec8 acc[kV];
#pragma GCC unroll 8
  for (int v = 0; v < kV; ++v) acc[v] = onto ? LoadVec8(c + 8 * v) : Vec8{};
  for (int p = 0; p < k; ++p) {
    const float x = a[p * ps];
    const Vec8 av = {x, x, x, x, x, x, x, x};
    const TB* __restrict bp = b + p * ldb;
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) acc[v] = MulAdd(acc[v], av, LoadB8(bp + 8 * v));
  }
#pragma GCC unroll 8
  for (int v = 0; v < kV; ++v) StoreVec8(c + 8 * v, acc[v]);
}

// One row of C, columns [j0, n): 64 then 8 at a time, the last w < 8
// zero-padded like a short panel.
template <typename TB>
inline void CubeRowFrom(bool onto, float* __restrict c, const float* __restrict a, int64_t ps,
                        const TB* __restrict b, int64_t ldb, int k, int j0, int n) {
  int j = j0;
  for (; j + 64 <= n; j += 64) CubeRowChunk<8>(onto, c + j, a, ps, b + j, ldb, k);
  for (; j + 8 <= n; j += 8) CubeRowChunk<1>(onto, c + j, a, ps, b + j, ldb, k);
  if (j == n) return;
  const int w = n - j;
  float pad[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int q = 0; onto && q < w; ++q) pad[q] = c[j + q];
  Vec8 acc = LoadVec8(pad);
  for (int p = 0; p < k; ++p) {
    const float x = a[p * ps];
    const Vec8 av = {x, x, x, x, x, x, x, x};
    float row[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int q = 0; q < w; ++q) row[q] = LoadB1(b + p * ldb + j + q);
    acc = MulAdd(acc, av, LoadVec8(row));
  }
  StoreVec8(pad, acc);
  for (int q = 0; q < w; ++q) c[j + q] = pad[q];
}

// Rows of C per streaming block (then 2, then 1): 4 rows x 64 columns in
// 16 AVX-512 accumulators (8 rows x 48 columns in 24 first where m has
// them, kStreamRows512; 1 row x 128 columns), or x 16 columns in 8 of 8
// lanes (x 32 for 2 rows, x 64 for 1), a row of B read once per block.
constexpr int kStreamRows = 4;
// Rows of B a K step of the streaming multiply takes.
constexpr int kStreamK = 8;

// C[kR x 8 * kV] (+)= A [kR x k] * B [k x 8 * kV] (row p at b + p * ldb),
// in 8-lane vectors.
template <int kR, int kV, typename TB>
inline void CubeStreamBlock8(bool onto, float* __restrict c, int64_t ldc, const float* __restrict a,
                             int64_t rs, int64_t ps, const TB* __restrict b, int64_t ldb,
                             int k) {
  Vec8 acc[kR][kV];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) acc[r][v] = onto ? LoadVec8(c + r * ldc + 8 * v) : Vec8{};
  }
  for (int p = 0; p < k; ++p) {
    Vec8 bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = LoadB8(b + p * ldb + 8 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      const float x = a[r * rs + p * ps];
      const Vec8 av = {x, x, x, x, x, x, x, x};
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) acc[r][v] = MulAdd(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) StoreVec8(c + r * ldc + 8 * v, acc[r][v]);
  }
}

// kR rows of C in 8-lane blocks of 8 * (8 / kR) columns; the rest a row at
// a time (CubeRowFrom).
template <int kR, typename TB>
inline void CubeStreamRows8(bool onto, float* __restrict c, int64_t ldc, const float* __restrict a,
                            int64_t rs, int64_t ps, const TB* __restrict b, int64_t ldb, int k,
                            int n) {
  constexpr int kV = 8 / kR;
  int j = 0;
  for (; j + 8 * kV <= n; j += 8 * kV) {
    CubeStreamBlock8<kR, kV>(onto, c + j, ldc, a, rs, ps, b + j, ldb, k);
  }
  if (j == n) return;
  for (int r = 0; r < kR; ++r) CubeRowFrom(onto, c + r * ldc, a + r * rs, ps, b, ldb, k, j, n);
}

// All rows of C (+)= over k rows of B, in 8-lane blocks.
template <typename TB>
inline void CubeStreamStep8(bool onto, float* __restrict l0c, const float* __restrict l0a, int64_t rs,
                            int64_t ps, const TB* __restrict b, int64_t ldb, int m, int k,
                            int n) {
  int i = 0;
  for (; i + kStreamRows <= m; i += kStreamRows) {
    CubeStreamRows8<kStreamRows>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs,
                                       ps, b, ldb, k, n);
  }
  if (m - i >= 2) {
    CubeStreamRows8<2>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs, ps, b, ldb,
                             k, n);
    i += 2;
  }
  if (i < m) {
    CubeStreamRows8<1>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs, ps, b, ldb,
                             k, n);
  }
}

#if PTO_CUBE_AVX512
// Rows of C per AVX-512 streaming block where m allows (then kStreamRows).
constexpr int kStreamRows512 = 8;
// Rows of B a K step takes where m >= kStreamRows512: C (8 rows or more of
// a wide task) no longer fits the first-level cache, and a longer step
// visits it less often.
constexpr int kStreamKWide = 16;

__attribute__((target("avx512f"))) inline Vec16 LoadB16(const float* p) {
  Vec16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((target("avx512f"))) inline Vec16 LoadB16(const Bf16Bits* p) {
  typedef uint16_t U16x16 __attribute__((vector_size(32)));
  typedef uint32_t U32x16 __attribute__((vector_size(64)));
  U16x16 h;
  __builtin_memcpy(&h, p, sizeof h);
  const U32x16 w = __builtin_convertvector(h, U32x16) << 16;
  Vec16 v;
  __builtin_memcpy(&v, &w, sizeof v);
  return v;
}

// C[kR x 16 * kV] (+)= A [kR x k] * B [k x 16 * kV] (row p at b + p * ldb),
// prefetching its columns of the row kAhead rows ahead (the next K step's).
template <int kR, int kV, int kAhead, typename TB>
__attribute__((target("avx512f"))) inline void CubeStreamBlock512(
    bool onto, float* __restrict c, int64_t ldc, const float* __restrict a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int k) {
  Vec16 acc[kR][kV];
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) {
      if (onto) {
        __builtin_memcpy(&acc[r][v], c + r * ldc + 16 * v, 64);
      } else {
        acc[r][v] = Vec16{};
      }
    }
  }
  // B's rows are far apart (a task's columns of a wide B), so the hardware
  // prefetchers, confined to a page, do not fetch the next rows' lines.
  constexpr int kLineElems = 64 / sizeof(TB);
  for (int p = 0; p < k; ++p) {
#pragma GCC unroll 8
    for (int e = 0; e < 16 * kV; e += kLineElems) {
      __builtin_prefetch(reinterpret_cast<const void*>(
          reinterpret_cast<uintptr_t>(b) + ((p + kAhead) * ldb + e) * sizeof(TB)));
    }
    Vec16 bv[kV];
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) bv[v] = LoadB16(b + p * ldb + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < kR; ++r) {
      const float x = a[r * rs + p * ps];
      const Vec16 av = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#pragma GCC unroll 8
      for (int v = 0; v < kV; ++v) {
        acc[r][v] = __builtin_ia32_vfmaddps512_mask(av, bv[v], acc[r][v],
                                                    static_cast<short>(-1), 4);
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kR; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kV; ++v) __builtin_memcpy(c + r * ldc + 16 * v, &acc[r][v], 64);
  }
}

// kR rows of C: 64 columns at a time (128 for one row: 8 accumulators and
// twice the loads of B's row in flight per step; 48 for kStreamRows512
// rows: 24 accumulators), then 16; the last n % 16 a row at a time
// (CubeRowFrom).
template <int kR, int kAhead, typename TB>
__attribute__((target("avx512f"))) inline void CubeStreamRows512(
    bool onto, float* __restrict c, int64_t ldc, const float* __restrict a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int k, int n) {
  constexpr int kV = kR > kStreamRows ? 3 : kR == 1 ? 8 : 4;
  int j = 0;
  for (; j + 16 * kV <= n; j += 16 * kV) {
    CubeStreamBlock512<kR, kV, kAhead>(onto, c + j, ldc, a, rs, ps, b + j, ldb, k);
  }
  for (; j + 16 <= n; j += 16) CubeStreamBlock512<kR, 1, kAhead>(onto, c + j, ldc, a, rs, ps, b + j, ldb, k);
  if (j == n) return;
  for (int r = 0; r < kR; ++r) CubeRowFrom(onto, c + r * ldc, a + r * rs, ps, b, ldb, k, j, n);
}

// All rows of C (+)= over k rows of B: blocks of kStreamRows512 rows (each
// vector of B, loaded and for bf16 widened, serves 8 rows), then 4, 2, 1.
template <int kAhead, typename TB>
__attribute__((target("avx512f"))) inline void CubeStreamStep512(
    bool onto, float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int m, int k, int n) {
  int i = 0;
  for (; i + kStreamRows512 <= m; i += kStreamRows512) {
    CubeStreamRows512<kStreamRows512, kAhead>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs,
                                      rs, ps, b, ldb, k, n);
  }
  for (; i + kStreamRows <= m; i += kStreamRows) {
    CubeStreamRows512<kStreamRows, kAhead>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs,
                                         ps, b, ldb, k, n);
  }
  if (m - i >= 2) {
    CubeStreamRows512<2, kAhead>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs, ps, b,
                               ldb, k, n);
    i += 2;
  }
  if (i < m) {
    CubeStreamRows512<1, kAhead>(onto, l0c + static_cast<int64_t>(i) * n, n, l0a + i * rs, rs, ps, b,
                               ldb, k, n);
  }
}

// K in steps of kStep rows of B, each step over all of C: the rows of a
// step are read side by side, each from start to end, so memory serves
// kStep sequential streams rather than a column chunk of every row at a
// time. C carries each element's chain of steps between K steps.
template <int kStep, typename TB>
__attribute__((target("avx512f"))) inline void CubeMatmulSteps512(
    bool onto, float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int m, int k, int n) {
  for (int p = 0; p < k; p += kStep) {
    const int kc = k - p < kStep ? k - p : kStep;
    CubeStreamStep512<kStep>(onto || p > 0, l0c, l0a + p * ps, rs, ps, b + p * ldb, ldb, m, kc,
                             n);
  }
}

// Steps of kStreamK rows, kStreamKWide where m >= kStreamRows512.
template <typename TB>
__attribute__((target("avx512f"))) inline void CubeMatmulRows512(
    bool onto, float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int m, int k, int n) {
  if (m >= kStreamRows512) {
    CubeMatmulSteps512<kStreamKWide>(onto, l0c, l0a, rs, ps, b, ldb, m, k, n);
  } else {
    CubeMatmulSteps512<kStreamK>(onto, l0c, l0a, rs, ps, b, ldb, m, k, n);
  }
}
#endif  // PTO_CUBE_AVX512

template <typename TB>
__attribute__((noinline)) inline void CubeMatmulRowsImpl(
    bool onto, float* __restrict l0c, const float* __restrict l0a, int64_t rs, int64_t ps,
    const TB* __restrict b, int64_t ldb, int m, int k, int n) {
#if PTO_CUBE_AVX512
  if (CubeHasAvx512()) {
    CubeMatmulRows512(onto, l0c, l0a, rs, ps, b, ldb, m, k, n);
    return;
  }
#endif
  for (int p = 0; p < k; p += kStreamK) {
    const int kc = k - p < kStreamK ? k - p : kStreamK;
    CubeStreamStep8(onto || p > 0, l0c, l0a + p * ps, rs, ps, b + p * ldb, ldb, m, kc, n);
  }
}

// TMATMUL without L0B (m <= kSmallM): L0C[m x n] = L0A * B, B [k x n]
// (leading dimension ldb) f32 or bf16 bits.
template <typename TB>
inline void CubeMatmulRows(float* __restrict l0c, const float* __restrict l0a,
                           int64_t rs, int64_t ps, const TB* __restrict b,
                           int64_t ldb, int m, int k, int n) {
  CubeMatmulRowsImpl(false, l0c, l0a, rs, ps, b, ldb, m, k, n);
}

// TMATMUL_ACC without L0B: L0C += L0A * B.
template <typename TB>
inline void CubeMatmulRowsAcc(float* __restrict l0c, const float* __restrict l0a,
                              int64_t rs, int64_t ps, const TB* __restrict b,
                              int64_t ldb, int m, int k, int n) {
  CubeMatmulRowsImpl(true, l0c, l0a, rs, ps, b, ldb, m, k, n);
}

// A row of TSTORE: dst[c] = Conv::Store(src[c]) for c < n, through
// Conv::StoreRun(dst, src, n) where Conv has one (pto_tile::Elem of f16 and
// bf16: the vectorized rounding; element by element it takes as long as a
// bf16 task's multiply on a 128-deep K), else element by element.
template <typename Conv, typename T>
inline auto CubeStoreRow(T* __restrict dst, const float* __restrict src, int n, int)
    -> decltype(Conv::StoreRun(dst, src, n), void()) {
  Conv::StoreRun(dst, src, n);
}

template <typename Conv, typename T>
inline void CubeStoreRow(T* __restrict dst, const float* __restrict src, int n, long) {
  for (int c = 0; c < n; ++c) dst[c] = Conv::Store(src[c]);
}

// TSTORE L0C -> GM: gm[r * ld + c] = Conv::Store(l0c[r * n + c]).
template <typename Conv = F32, typename T>
inline void CubeStoreL0C(T* __restrict gm, int64_t ld,
                         const float* __restrict l0c, int m, int n) {
  for (int r = 0; r < m; ++r) {
    CubeStoreRow<Conv>(gm + r * ld, l0c + static_cast<int64_t>(r) * n, n, 0);
  }
}

#if PTO_CUBE_BF16_DOT
// CubeMatmulBf16 and then the TSTORE of its L0C (CubeStoreL0C<Conv>: C [m x
// n] in GM, leading dimension ldc), with each register block of the last K
// block stored as soon as it is done, while its rows of L0C are still in the
// first-level cache; the same bits as the two calls.
template <typename Conv, typename T>
__attribute__((target("avx512f,avx512bw,avx512bf16"), noinline)) inline void CubeMatmulBf16Store(
    T* __restrict c, int64_t ldc, float* __restrict l0c, const uint16_t* a, int64_t lda,
    bool a_trans, const uint16_t* b, int64_t ldb, bool b_trans, int m, int64_t k, int n,
    uint16_t* __restrict l0a, uint16_t* __restrict l0b) {
  if (k <= 0) {
    CubeMatmulBf16(l0c, a, lda, a_trans, b, ldb, b_trans, m, k, n, l0a, l0b);
    CubeStoreL0C<Conv>(c, ldc, l0c, m, n);
    return;
  }
  CubeMatmulBf16Blocks(l0c, a, lda, a_trans, b, ldb, b_trans, m, k, n, l0a, l0b,
                       [&](int i, int j, int rows, int width) {
                         for (int r = i; r < i + rows; ++r) {
                           T* const dst = c + r * ldc + j;
                           const float* const src = l0c + static_cast<int64_t>(r) * n + j;
                           // A constant width where it is a full block's (the
                           // element loop vectorized for any Conv).
                           if (width == 4 * kCols) {
                             CubeStoreRow<Conv>(dst, src, 4 * kCols, 0);
                           } else {
                             CubeStoreRow<Conv>(dst, src, width, 0);
                           }
                         }
                       });
}
#endif  // PTO_CUBE_BF16_DOT

}  // namespace pto_cube

// BF16 matmuls on AMX tiles (host-x86_64-v3-amx; empty on other targets).
#include "pto_amx.h"
// TIMG2COL: a conv's B blocks built from its feature map.
#include "pto_cube_img2col.h"

#endif  // PTO_CUBE_H_
