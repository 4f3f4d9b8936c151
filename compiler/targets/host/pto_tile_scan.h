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
// contiguous dim kScanRows rows advance together, independent chains.
#ifndef PTO_TILE_SCAN_H_
#define PTO_TILE_SCAN_H_

#include <stdint.h>

#include "pto_tile_reduce.h"

namespace pto_tile {

// Rows of a contiguous-dim scan that advance together.
constexpr int64_t kScanRows = 8;

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
