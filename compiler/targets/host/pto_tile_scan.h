// PTO tile instructions (pto_tile.h): scans. TCumSum and TCumProd, the
// inclusive scan of a tile along dim K of its padded 4-d shape E0 x E1 x
// E2 x E3, seeded by a carry tile of extent 1 in dim K (row-major, the
// layout of a reduction's result): d[.., k, ..] = op(d[.., k - 1, ..],
// a[.., k, ..]), with d[.., -1, ..] = carry. TRedLast, the last slice of a
// tile along K (the next tile's carry).
//
// The running value is the tile's storage type S, one operation per
// element in index order (double, f32, or int64 wrapping like torch's), so
// a scan has the bits of torch's CPU loop over the same accumulator. The
// lanes are the independent lines: along an outer dim a whole row of
// inner values moves at a time (the loop over it vectorizes); along the
// contiguous dim (with AVX) double rows go four at a time through
// transposed 4 x 4 blocks (ScanFourRows: the rows' chains side by side in
// one register), other rows one at a time (one dependent operation per
// element, as torch's loop). Rows interleaved element by element instead
// (rows a power-of-two length apart) would make loads wait on 4 KiB-aliased
// stores.
#ifndef PTO_TILE_SCAN_H_
#define PTO_TILE_SCAN_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_reduce.h"

namespace pto_tile {

#if defined(__AVX__)
// Rows r .. r + 3 of a double contiguous-dim scan (rows kLen apart), in
// 4 x 4 blocks through registers: four loads along the rows, a transpose
// (each vector then one column of the four rows), four dependent
// operations down the columns with the rows as lanes (each lane the row's
// own order), the transpose back and four stores, over the first kLen / 4
// * 4 columns; acc holds the four running values.
template <bool kProduct, int64_t kLen>
inline void ScanFourRows(double* __restrict d, const double* __restrict a, double (&acc)[4]) {
  typedef double V4 __attribute__((vector_size(32)));
  V4 run = {acc[0], acc[1], acc[2], acc[3]};
  auto op = [](V4 x, V4 y) {
    if constexpr (kProduct) {
      return x * y;
    } else {
      return x + y;
    }
  };
  for (int64_t k = 0; k < kLen / 4 * 4; k += 4) {
    V4 x[4];
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) __builtin_memcpy(&x[l], a + l * kLen + k, sizeof(V4));
    const V4 t0 = __builtin_shufflevector(x[0], x[1], 0, 4, 2, 6);
    const V4 t1 = __builtin_shufflevector(x[0], x[1], 1, 5, 3, 7);
    const V4 t2 = __builtin_shufflevector(x[2], x[3], 0, 4, 2, 6);
    const V4 t3 = __builtin_shufflevector(x[2], x[3], 1, 5, 3, 7);
    const V4 c0 = op(run, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
    const V4 c1 = op(c0, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
    const V4 c2 = op(c1, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
    const V4 c3 = op(c2, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
    run = c3;
    const V4 u0 = __builtin_shufflevector(c0, c1, 0, 4, 2, 6);
    const V4 u1 = __builtin_shufflevector(c0, c1, 1, 5, 3, 7);
    const V4 u2 = __builtin_shufflevector(c2, c3, 0, 4, 2, 6);
    const V4 u3 = __builtin_shufflevector(c2, c3, 1, 5, 3, 7);
    const V4 y[4] = {__builtin_shufflevector(u0, u2, 0, 1, 4, 5),
                     __builtin_shufflevector(u1, u3, 0, 1, 4, 5),
                     __builtin_shufflevector(u0, u2, 2, 3, 6, 7),
                     __builtin_shufflevector(u1, u3, 2, 3, 6, 7)};
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) __builtin_memcpy(d + l * kLen + k, &y[l], sizeof(V4));
  }
  for (int l = 0; l < 4; ++l) acc[l] = run[l];
}
#endif

// Rows [first, last) of a contiguous-dim scan, in blocks of kRows rows
// through `block` (ScanFourRows) over the first kLen / kRows
// * kRows columns, then the rest of each row one element at a time.
template <typename Op, int64_t kRows, int64_t kLen, typename S, typename Block>
inline void ScanRowBlocks(S* __restrict d, const S* __restrict a, const S* __restrict carry,
                          int64_t first, int64_t last, Block block) {
  for (int64_t r = first; r < last; r += kRows) {
    S acc[kRows];
    for (int64_t l = 0; l < kRows; ++l) acc[l] = carry[r + l];
    block(d + r * kLen, a + r * kLen, acc);
    for (int64_t l = 0; l < kRows; ++l) {
      for (int64_t k = kLen / kRows * kRows; k < kLen; ++k) {
        acc[l] = Op::Apply(acc[l], a[(r + l) * kLen + k]);
        d[(r + l) * kLen + k] = acc[l];
      }
    }
  }
}

template <typename Op, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TScan(S* __restrict d, const S* __restrict a, const S* __restrict carry) {
  using R = ReduceShape<E0, E1, E2, E3, K>;
  constexpr int64_t kLen = R::kLen;
  constexpr int64_t kInner = R::kStride;
  constexpr int64_t kOuter = E0 * E1 * E2 * E3 / (kLen * kInner);
  if constexpr (kInner > 1) {
    for (int64_t o = 0; o < kOuter; ++o) {
      S* __restrict dr = d + o * kLen * kInner;
      const S* __restrict src = a + o * kLen * kInner;
      const S* __restrict c = carry + o * kInner;
      for (int64_t j = 0; j < kInner; ++j) dr[j] = Op::Apply(c[j], src[j]);
      for (int64_t k = 1; k < kLen; ++k) {
        S* __restrict row = dr + k * kInner;
        const S* __restrict before = dr + (k - 1) * kInner;
        for (int64_t j = 0; j < kInner; ++j) row[j] = Op::Apply(before[j], src[k * kInner + j]);
      }
    }
  } else {
    // Double rows in 4 x 4 register blocks (with AVX), then one at a time.
#if defined(__AVX__)
    constexpr bool kBlocks = std::is_same_v<S, double> && kLen >= 4;
#else
    constexpr bool kBlocks = false;
#endif
    constexpr int64_t kBlocked = kBlocks ? kOuter / 4 * 4 : 0;
#if defined(__AVX__)
    if constexpr (kBlocked > 0) {
      constexpr bool kProduct = std::is_same_v<Op, ProdOp<S>>;
      ScanRowBlocks<Op, 4, kLen>(d, a, carry, 0, kBlocked,
                                 [](double* dr, const double* ar, double (&acc)[4]) {
                                   ScanFourRows<kProduct, kLen>(dr, ar, acc);
                                 });
    }
#endif
    for (int64_t r = kBlocked; r < kOuter; ++r) {
      S acc = carry[r];
      for (int64_t k = 0; k < kLen; ++k) {
        acc = Op::Apply(acc, a[r * kLen + k]);
        d[r * kLen + k] = acc;
      }
    }
  }
}

template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TCumSum(S* __restrict d, const S* __restrict a, const S* __restrict carry) {
  TScan<SumOp<S>, E0, E1, E2, E3, K>(d, a, carry);
}

template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TCumProd(S* __restrict d, const S* __restrict a, const S* __restrict carry) {
  TScan<ProdOp<S>, E0, E1, E2, E3, K>(d, a, carry);
}

template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TRedLast(S* __restrict d, const S* __restrict a) {
  using R = ReduceShape<E0, E1, E2, E3, K>;
  constexpr int64_t kLen = R::kLen;
  constexpr int64_t kInner = R::kStride;
  constexpr int64_t kOuter = E0 * E1 * E2 * E3 / (kLen * kInner);
  for (int64_t o = 0; o < kOuter; ++o) {
    for (int64_t j = 0; j < kInner; ++j) d[o * kInner + j] = a[(o * kLen + kLen - 1) * kInner + j];
  }
}

}  // namespace pto_tile

#endif  // PTO_TILE_SCAN_H_
