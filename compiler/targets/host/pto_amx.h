// PTO cube instructions on AMX-BF16 tiles: the BF16 matmul path of the
// host-x86_64-v3-amx target (runtime/host_target.h). pto_cube.h includes
// this header; its contents exist only where the compiler targets AMX
// (-mamx-tile -mamx-bf16, which define __AMX_TILE__ and __AMX_BF16__).
//
// A cube task computes C[m x n] = op(A) * op(B) over K with A and B bf16,
// accumulating in f32, in K blocks of kb (KBlock: all of K up to 2048,
// rounded up to kTileK; the cube tile's kL1 does not matter here):
//
//   TMOV  L1 -> L0B   AmxMovL0B: kb of K by n columns of op(B), read from GM
//                     (B [K x n] or B^T [n x K]), packed into pairs of K:
//                     element (k, j) at l0b[((k / 2) * np + j) * 2 + k % 2]
//                     with np = n rounded up to kTileCols, zero past kb and
//                     n (the layout TDPBF16PS reads, "VNNI");
//         L1 -> L0A   A not transposed is read by the tile loads straight
//                     from GM; AmxMovL0A copies A^T into a row-major [m x kb]
//                     tile (zero-padded to whole tiles) for a transposed A;
//   TMATMUL(_ACC)     AmxMatmul: L0C (+)= L0A * L0B in blocks of up to 2 x 2
//                     16 x 16 f32 tiles (tmm0-3), A tiles 16 x 32 bf16
//                     (tmm4-5), B tiles 16 pairs x 16 columns (tmm6-7);
//                     the rows past the last whole 16-row tile are copied
//                     once, zero-padded to a tile and to a multiple of 32 in
//                     K; a tile reaching past kb is copied zero-padded into
//                     a 1 KiB edge buffer;
//   TSTORE L0C -> GM  AmxStoreL0C: the [m x n] corner of L0C (leading
//                     dimension np), rounded to the output type (Conv).
//
// Numerics: TDPBF16PS adds, per pair of K (k even), the product for k + 1
// and then the one for k to the f32 accumulator, each product exact and
// each addition rounded to nearest even, with subnormal inputs and results
// flushed to zero. So bits differ from the f32 FMA path (one FMA per k),
// but not with the cube tile shape or the K block (every block and tile
// step of K starts at a multiple of 32 from 0; zero padding adds +0). Within
// the matmul tests' bounds (rtol 1e-5 of the sum of magnitudes).
//
// Callers bracket a task's tile instructions with AmxBegin() (loads the
// tile configuration: eight 16-row, 64-byte tiles) and AmxEnd()
// (TILERELEASE, so the OS need not save the tile state). The process must
// have been granted the AMX tile state (runtime's CanRunHostTarget does it
// before a kernel for this target is loaded).
//
// Self-contained C++17 (only <stdint.h>); the tile instructions are inline
// assembly, so generated code does not parse <immintrin.h>.
#ifndef PTO_AMX_H_
#define PTO_AMX_H_

#include <stdint.h>

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#define PTO_AMX 1

namespace pto_amx {

constexpr int kTileRows = 16;  // rows of every tile (of A, of C; pairs of B)
constexpr int kTileK = 32;     // bf16 of K in an A tile row (64 bytes)
constexpr int kTileCols = 16;  // f32 columns of a C tile

constexpr int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The K block a task steps by for its K: all of K up to kMaxKBlock (C stays
// in tile registers across a block; storing and reloading it between
// blocks of 256 cost 1.3x at 1024^3), in multiples of kTileK.
constexpr int64_t kMaxKBlock = 2048;
constexpr int64_t KBlock(int64_t k) {
  return RoundUp(k < kMaxKBlock ? (k > 0 ? k : 1) : kMaxKBlock, kTileK);
}

// uint16 elements of L0B for a K block of kb and n columns.
constexpr int64_t L0BElems(int64_t kb, int64_t n) {
  return RoundUp(kb, kTileK) * RoundUp(n, kTileCols);
}

// uint16 elements of the L0A copy of a transposed A (m rows, kb of K).
constexpr int64_t L0AElems(int64_t m, int64_t kb) {
  return RoundUp(m, kTileRows) * RoundUp(kb, kTileK);
}

// Floats of L0C for an [m x n] result (whole tiles; leading dimension
// RoundUp(n, kTileCols)).
constexpr int64_t L0CElems(int64_t m, int64_t n) {
  return RoundUp(m, kTileRows) * RoundUp(n, kTileCols);
}

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

inline void AmxBegin() {
  static const TileConfig config;
  __asm__ volatile("ldtilecfg %0" ::"m"(config));
}

inline void AmxEnd() { __asm__ volatile("tilerelease" ::: "memory"); }

// Tile registers are named in the instruction, so these take literals.
#define PTO_AMX_LOAD(t, base, stride_bytes)                     \
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(base), \
                   "r"(static_cast<int64_t>(stride_bytes))        \
                   : "memory")
#define PTO_AMX_STORE(t, base, stride_bytes)                      \
  __asm__ volatile("tilestored %%tmm" #t ", (%0,%1,1)" ::"r"(base), \
                   "r"(static_cast<int64_t>(stride_bytes))          \
                   : "memory")
#define PTO_AMX_ZERO(t) __asm__ volatile("tilezero %%tmm" #t ::)
// tmm<dst> += tmm<a> * tmm<b> (AT&T order: b, a, dst).
#define PTO_AMX_DP(dst, a, b) \
  __asm__ volatile("tdpbf16ps %%tmm" #b ", %%tmm" #a ", %%tmm" #dst ::)

typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));

// v[r][c] <- v[c][r] (unpack 32-bit, unpack 64-bit, swap 128-bit halves).
inline void Transpose8x8(U32x8* v) {
  const I32x8 lo32 = {0, 8, 1, 9, 4, 12, 5, 13}, hi32 = {2, 10, 3, 11, 6, 14, 7, 15};
  const I32x8 lo64 = {0, 1, 8, 9, 4, 5, 12, 13}, hi64 = {2, 3, 10, 11, 6, 7, 14, 15};
  const I32x8 lo128 = {0, 1, 2, 3, 8, 9, 10, 11}, hi128 = {4, 5, 6, 7, 12, 13, 14, 15};
  U32x8 a[8], b[8];
  for (int r = 0; r < 8; r += 2) {
    a[r] = __builtin_shuffle(v[r], v[r + 1], lo32);
    a[r + 1] = __builtin_shuffle(v[r], v[r + 1], hi32);
  }
  for (int r = 0; r < 8; r += 4) {
    b[r] = __builtin_shuffle(a[r], a[r + 2], lo64);
    b[r + 1] = __builtin_shuffle(a[r], a[r + 2], hi64);
    b[r + 2] = __builtin_shuffle(a[r + 1], a[r + 3], lo64);
    b[r + 3] = __builtin_shuffle(a[r + 1], a[r + 3], hi64);
  }
  for (int c = 0; c < 4; ++c) {
    v[c] = __builtin_shuffle(b[c], b[c + 4], lo128);
    v[c + 4] = __builtin_shuffle(b[c], b[c + 4], hi128);
  }
}

// TMOV L1 -> L0B: K rows [0, kb) and columns [0, n) of op(B) in pairs of K
// (layout above). `b` is B [kb x n] (leading dimension ldb) or, with
// `trans`, B^T [n x kb].
inline void AmxMovL0B(uint16_t* __restrict l0b, const void* b_gm, int64_t ldb,
                      bool trans, int kb, int n) {
  const uint16_t* __restrict b = static_cast<const uint16_t*>(b_gm);
  const int np = static_cast<int>(RoundUp(n, kTileCols));
  const int pairs = static_cast<int>(RoundUp(kb, kTileK) / 2);
  if (!trans) {
    for (int q = 0; q < pairs; ++q) {
      uint16_t* __restrict dst = l0b + static_cast<int64_t>(q) * np * 2;
      const int k0 = 2 * q;
      if (k0 + 1 < kb) {
        const uint16_t* __restrict r0 = b + k0 * ldb;
        const uint16_t* __restrict r1 = r0 + ldb;
        for (int j = 0; j < n; ++j) {
          dst[2 * j] = r0[j];
          dst[2 * j + 1] = r1[j];
        }
      } else if (k0 < kb) {  // the last, odd row of K
        const uint16_t* __restrict r0 = b + k0 * ldb;
        for (int j = 0; j < n; ++j) {
          dst[2 * j] = r0[j];
          dst[2 * j + 1] = 0;
        }
      } else {
        for (int j = 0; j < n; ++j) dst[2 * j] = dst[2 * j + 1] = 0;
      }
      for (int j = 2 * n; j < 2 * np; ++j) dst[j] = 0;
    }
    return;
  }
  // B^T: a row of B^T is a column of op(B), its pairs adjacent: L0B is the
  // transpose of B^T read as 32-bit pairs. Blocks of 8 pairs x 8 columns go
  // through an 8 x 8 transpose in vector registers (faster than pair by
  // pair); the rest, the odd last row of K and the padding one pair at a time.
  const int pairs_full = kb / 2 / 8 * 8;  // whole pairs, in blocks of 8
  const int n8 = n / 8 * 8;
  for (int q0 = 0; q0 < pairs_full; q0 += 8) {
    for (int j0 = 0; j0 < n8; j0 += 8) {
      U32x8 v[8];
      for (int r = 0; r < 8; ++r) __builtin_memcpy(&v[r], b + (j0 + r) * ldb + 2 * q0, 32);
      Transpose8x8(v);
      for (int c = 0; c < 8; ++c) {
        __builtin_memcpy(l0b + (static_cast<int64_t>(q0 + c) * np + j0) * 2, &v[c], 32);
      }
    }
  }
  for (int q = 0; q < pairs; ++q) {
    uint16_t* __restrict dst = l0b + static_cast<int64_t>(q) * np * 2;
    const int k0 = 2 * q;
    if (q < pairs_full) {
      for (int j = n8; j < n; ++j) __builtin_memcpy(dst + 2 * j, b + j * ldb + k0, 4);
    } else if (k0 + 1 < kb) {
      for (int j = 0; j < n; ++j) __builtin_memcpy(dst + 2 * j, b + j * ldb + k0, 4);
    } else {
      for (int j = 0; j < n; ++j) {
        dst[2 * j] = k0 < kb ? b[j * ldb + k0] : 0;
        dst[2 * j + 1] = 0;
      }
    }
    for (int j = 2 * n; j < 2 * np; ++j) dst[j] = 0;
  }
}

// TMOV L1 -> L0A for a transposed A: `a` is A^T [kb x m] (leading
// dimension lda); l0a becomes A [RoundUp(m, 16) x RoundUp(kb, 32)]
// row-major, zero-padded. Returns its leading dimension (elements).
inline int64_t AmxMovL0ATrans(uint16_t* __restrict l0a, const void* a_gm, int64_t lda,
                              int m, int kb) {
  const uint16_t* __restrict a = static_cast<const uint16_t*>(a_gm);
  const int mp = static_cast<int>(RoundUp(m, kTileRows));
  const int kp = static_cast<int>(RoundUp(kb, kTileK));
  for (int r = m; r < mp; ++r) {
    for (int p = 0; p < kp; ++p) l0a[static_cast<int64_t>(r) * kp + p] = 0;
  }
  for (int p = 0; p < kp; ++p) {
    if (p >= kb) {
      for (int r = 0; r < m; ++r) l0a[static_cast<int64_t>(r) * kp + p] = 0;
      continue;
    }
    const uint16_t* __restrict src = a + p * lda;
    for (int r = 0; r < m; ++r) l0a[static_cast<int64_t>(r) * kp + p] = src[r];
  }
  return kp;
}

// A [m x kb] as the tile loads read it: rows in whole 16-row tiles from `a`
// (leading dimension lda), the rows past the last whole tile (m % 16 of
// them) from `tail`, a zero-padded [16 x RoundUp(kb, 32)] copy made once
// per AmxMatmul (null when m % 16 == 0).
struct ASource {
  const uint16_t* a;
  int64_t lda;
  int m_full, kb;
  const uint16_t* tail;
  int64_t tail_ld;
};

// Where tile loads read rows [i, i + 16) and K [p, p + 32) of A: A itself
// or its tail copy, else (K past kb) a zero-padded copy in `edge`. Sets
// *stride (bytes).
inline const uint16_t* ATile(const ASource& s, int i, int p, uint16_t* edge,
                             int64_t* stride) {
  if (i >= s.m_full) {
    *stride = s.tail_ld * 2;
    return s.tail + p;
  }
  const uint16_t* src = s.a + i * s.lda + p;
  *stride = s.lda * 2;
  if (p + kTileK <= s.kb) return src;
  const int cols = s.kb - p;
  for (int r = 0; r < kTileRows; ++r) {
    for (int c = 0; c < kTileK; ++c) edge[r * kTileK + c] = c < cols ? src[r * s.lda + c] : 0;
  }
  *stride = kTileK * 2;
  return edge;
}

// One block of kR x kC C tiles at rows i, columns j of L0C (leading
// dimension ldc floats) over the whole K block.
template <int kR, int kC, bool kAcc>
inline void AmxBlock(float* __restrict l0c, int64_t ldc, const ASource& a, int kb,
                     const uint16_t* l0b, int np, int i, int j) {
  float* c = l0c + i * ldc + j;
  const int64_t cs = ldc * 4;
  if (kAcc) {
    PTO_AMX_LOAD(0, c, cs);
    if constexpr (kC > 1) PTO_AMX_LOAD(1, c + kTileCols, cs);
    if constexpr (kR > 1) PTO_AMX_LOAD(2, c + kTileRows * ldc, cs);
    if constexpr (kR > 1 && kC > 1) PTO_AMX_LOAD(3, c + kTileRows * ldc + kTileCols, cs);
  } else {
    PTO_AMX_ZERO(0);
    if constexpr (kC > 1) PTO_AMX_ZERO(1);
    if constexpr (kR > 1) PTO_AMX_ZERO(2);
    if constexpr (kR > 1 && kC > 1) PTO_AMX_ZERO(3);
  }
  alignas(64) uint16_t edge0[kTileRows * kTileK];
  alignas(64) uint16_t edge1[kTileRows * kTileK];
  const int64_t bs = static_cast<int64_t>(np) * 4;
  for (int p = 0; p < kb; p += kTileK) {
    int64_t as0, as1;
    PTO_AMX_LOAD(4, ATile(a, i, p, edge0, &as0), as0);
    if constexpr (kR > 1) {
      PTO_AMX_LOAD(5, ATile(a, i + kTileRows, p, edge1, &as1), as1);
    }
    const uint16_t* b = l0b + (static_cast<int64_t>(p / 2) * np + j) * 2;
    PTO_AMX_LOAD(6, b, bs);
    if constexpr (kC > 1) PTO_AMX_LOAD(7, b + 2 * kTileCols, bs);
    PTO_AMX_DP(0, 4, 6);
    if constexpr (kC > 1) PTO_AMX_DP(1, 4, 7);
    if constexpr (kR > 1) PTO_AMX_DP(2, 5, 6);
    if constexpr (kR > 1 && kC > 1) PTO_AMX_DP(3, 5, 7);
  }
  PTO_AMX_STORE(0, c, cs);
  if constexpr (kC > 1) PTO_AMX_STORE(1, c + kTileCols, cs);
  if constexpr (kR > 1) PTO_AMX_STORE(2, c + kTileRows * ldc, cs);
  if constexpr (kR > 1 && kC > 1) PTO_AMX_STORE(3, c + kTileRows * ldc + kTileCols, cs);
}

// TMATMUL / TMATMUL_ACC (kAcc): L0C[m x n] (+)= A [m x kb] (bf16, leading
// dimension lda: GM, or AmxMovL0ATrans's copy) * L0B (AmxMovL0B of the same
// kb). L0C's leading dimension is RoundUp(n, 16); rows and columns past m
// and n are computed from zero padding.
template <bool kAcc>
__attribute__((noinline)) inline void AmxMatmul(float* __restrict l0c, const void* a_gm,
                                                int64_t lda, const uint16_t* l0b, int m,
                                                int kb, int n) {
  const uint16_t* a_rows = static_cast<const uint16_t*>(a_gm);
  const int np = static_cast<int>(RoundUp(n, kTileCols));
  // The rows past the last whole tile, copied once (not once per column
  // block and step of K). kb <= kMaxKBlock in generated code; a longer K
  // takes the copy from the heap.
  const int m_full = m / kTileRows * kTileRows;
  const int kp = static_cast<int>(RoundUp(kb, kTileK));
  alignas(64) uint16_t tail_stack[kTileRows * kMaxKBlock];
  uint16_t* tail = nullptr;
  if (m_full < m) {
    tail = kp <= kMaxKBlock ? tail_stack
                            : static_cast<uint16_t*>(__builtin_malloc(kTileRows * kp * 2));
    for (int r = 0; r < kTileRows; ++r) {
      const uint16_t* src = a_rows + (m_full + r) * lda;
      uint16_t* dst = tail + r * kp;
      if (m_full + r < m) {
        for (int p = 0; p < kb; ++p) dst[p] = src[p];
        for (int p = kb; p < kp; ++p) dst[p] = 0;
      } else {
        for (int p = 0; p < kp; ++p) dst[p] = 0;
      }
    }
  }
  const ASource a = {a_rows, lda, m_full, kb, tail, kp};
  for (int j = 0; j < np; j += 2 * kTileCols) {
    const bool two_cols = j + kTileCols < np;
    for (int i = 0; i < m; i += 2 * kTileRows) {
      const bool two_rows = i + kTileRows < m;
      if (two_rows && two_cols) {
        AmxBlock<2, 2, kAcc>(l0c, np, a, kb, l0b, np, i, j);
      } else if (two_rows) {
        AmxBlock<2, 1, kAcc>(l0c, np, a, kb, l0b, np, i, j);
      } else if (two_cols) {
        AmxBlock<1, 2, kAcc>(l0c, np, a, kb, l0b, np, i, j);
      } else {
        AmxBlock<1, 1, kAcc>(l0c, np, a, kb, l0b, np, i, j);
      }
    }
  }
  if (tail != nullptr && tail != tail_stack) __builtin_free(tail);
}

// TSTORE L0C -> GM: gm[r * ld + c] = Conv::Store(l0c[r * RoundUp(n, 16) + c]).
template <typename Conv, typename T>
inline void AmxStoreL0C(T* __restrict gm, int64_t ld, const float* __restrict l0c,
                        int m, int n) {
  const int64_t np = RoundUp(n, kTileCols);
  for (int r = 0; r < m; ++r) {
    const float* __restrict src = l0c + r * np;
    T* __restrict dst = gm + r * ld;
    for (int c = 0; c < n; ++c) dst[c] = Conv::Store(src[c]);
  }
}

#undef PTO_AMX_LOAD
#undef PTO_AMX_STORE
#undef PTO_AMX_ZERO
#undef PTO_AMX_DP

}  // namespace pto_amx

#endif  // __AMX_TILE__ && __AMX_BF16__
#endif  // PTO_AMX_H_
