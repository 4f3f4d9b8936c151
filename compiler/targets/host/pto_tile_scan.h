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
// contiguous dim double rows go four at a time through transposed 4 x 4
// blocks (ScanFourRows, with AVX), other types kScanRows rows together as
// independent chains.
#ifndef PTO_TILE_SCAN_H_
#define PTO_TILE_SCAN_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_reduce.h"

namespace pto_tile {

// Rows of a contiguous-dim scan that advance together.
constexpr int64_t kScanRows = 8;

#if defined(__AVX__)
// Rows r .. r + 3 of a double contiguous-dim scan (rows kLen apart), in
// 4 x 4 blocks through registers: four loads along the rows, a transpose
// (each vector then one column of the four rows), four dependent
// operations down the columns with the rows as lanes (each lane the row's
// own order), the transpose back and four stores. Returns the first
// column it left (kLen rounded down to 4); acc holds the four running values.
template <bool kProduct, int64_t kLen>
inline int64_t ScanFourRows(double* __restrict d, const double* __restrict a,
                            double (&acc)[4]) {
  typedef double V4 __attribute__((vector_size(32)));
  V4 run = {acc[0], acc[1], acc[2], acc[3]};
  auto op = [](V4 x, V4 y) {
    if constexpr (kProduct) {
      return x * y;
    } else {
      return x + y;
    }
  };
  int64_t k = 0;
  for (; k + 4 <= kLen; k += 4) {
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
  return k;
}
#endif

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
    int64_t r = 0;
#if defined(__AVX__)
    if constexpr (std::is_same_v<S, double> && kLen >= 4) {
      constexpr bool kProduct = std::is_same_v<Op, ProdOp<double>>;
      for (; r + 4 <= kOuter; r += 4) {
        double acc[4] = {carry[r], carry[r + 1], carry[r + 2], carry[r + 3]};
        const int64_t k0 = ScanFourRows<kProduct, kLen>(d + r * kLen, a + r * kLen, acc);
        for (int64_t l = 0; l < 4; ++l) {
          for (int64_t k = k0; k < kLen; ++k) {
            acc[l] = Op::Apply(acc[l], a[(r + l) * kLen + k]);
            d[(r + l) * kLen + k] = acc[l];
          }
        }
      }
    }
#endif
    for (; r + kScanRows <= kOuter; r += kScanRows) {
      S acc[kScanRows];
      for (int64_t l = 0; l < kScanRows; ++l) acc[l] = carry[r + l];
      const S* __restrict src = a + r * kLen;
      S* __restrict dr = d + r * kLen;
      for (int64_t k = 0; k < kLen; ++k) {
        for (int64_t l = 0; l < kScanRows; ++l) {
          acc[l] = Op::Apply(acc[l], src[l * kLen + k]);
          dr[l * kLen + k] = acc[l];
        }
      }
    }
    for (; r < kOuter; ++r) {
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
