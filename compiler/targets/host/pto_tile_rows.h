// PTO tile instructions (pto_tile.h): fused rows. The row instructions
// host codegen fuses softmax's steps into (TSubExpSumRow, TSoftmaxRow), and
// rows of a run-time length (kRowChunk, TLoadRowN, TStoreRowN,
// TSubExpSumRowN).
#ifndef PTO_TILE_ROWS_H_
#define PTO_TILE_ROWS_H_

#include <stdint.h>

#include "pto_tile_convert.h"
#include "pto_tile_exp.h"
#include "pto_tile_elementwise.h"
#include "pto_tile_reduce.h"

namespace pto_tile {

// Softmax's middle on one row of C f32 values in one pass (host codegen
// fuses the three instructions when the difference is read by nothing
// else): e = exp(x - m[0]) and s[0] = the sum of e, the same bits as
// TSubRows<1, C, kFull, kRow>, TExp<C> and TRedSum<1, 1, 1, C, 3> one after
// another (the same exp per value, and the sum in ReduceRow's 16 lanes in
// the same order), without writing the difference and reading e back. m
// and s may be the same row tile (m is read first), e and x the same tile
// (each value is read before it is written). `next` (or null): the row the
// function reads after this one, prefetched one cache line per 16 values
// while the exp computes, so its max pass finds it in cache. `out` (or
// null): the GM row this row's result goes to, prefetched for writing
// likewise, so the normalisation's stores need no read for ownership each.
// With AVX-512F one 16-lane Exp16 per group of 16 and one vector of SumOp's
// 16 lanes: the same bits.
//
// kMaxOfX: m[0] is at least x's row maximum (NaN if x holds one), so every
// x - m is <= 0 or NaN: every value takes softmax's exp, Exp16Softmax with
// AVX-512F, Exp8Softmax with AVX2 (bits that differ from Exp16's and
// Exp8's in the last place for some x), in the groups, the tail past them
// and rows under 32 alike, as
// TExpSoftmax gives it (host codegen sets it for a TEXPSOFTMAX; and
// TSubExpSumRowN<true> and TSoftmaxRow give the same bits). Elsewhere
// kMaxOfX changes nothing.
template <int64_t C, bool kMaxOfX = false>
inline void TSubExpSumRow(float* e, float* s, const float* x, const float* m,
                          const float* next = nullptr, float* out = nullptr) {
#if PTO_TILE_FAST_EXP
  if constexpr (C >= 2 * kReduceLanes) {
    constexpr int64_t kGrouped = C / kReduceLanes * kReduceLanes;
    ExpF8 lo, hi;  // SumOp's lanes 0..7 and 8..15
#if defined(__AVX512F__)
    // One 16-lane vector per group: SumOp's lanes 0..15 as the 8-lane code
    // below keeps them in lo and hi (the same sums, the same bits).
    const ExpF16 mv = ExpSplat<ExpF16>(m[0]);
    ExpF16 sum = {};
    for (int64_t k = 0; k < kGrouped; k += kReduceLanes) {
      ExpF16 a;
      __builtin_memcpy(&a, x + k, sizeof a);
      if (next != nullptr) __builtin_prefetch(next + k);
      if (out != nullptr) __builtin_prefetch(out + k, 1);
      a = kMaxOfX ? Exp16Softmax(a - mv) : Exp16(a - mv);
      __builtin_memcpy(e + k, &a, sizeof a);
      sum += a;
    }
    lo = LowHalf(sum);
    hi = HighHalf(sum);
#else
    const ExpF8 mv = ExpSplat<ExpF8>(m[0]);
    lo = ExpF8{};
    hi = lo;
    for (int64_t k = 0; k < kGrouped; k += kReduceLanes) {
      ExpF8 a, b;
      __builtin_memcpy(&a, x + k, sizeof a);
      __builtin_memcpy(&b, x + k + 8, sizeof b);
      if (next != nullptr) __builtin_prefetch(next + k);
      if (out != nullptr) __builtin_prefetch(out + k, 1);
      a = a - mv;
      b = b - mv;
      // Exp8's range test once for both vectors (one movmsk and branch per
      // 16 values, 2.5% of the pass); either way each vector takes the
      // steps Exp8 would give it: the same bits.
      const ExpI8 in_range = (ExpFromBits(ExpBits(a) & 0x7FFFFFFF) <= 86.0f) &
                             (ExpFromBits(ExpBits(b) & 0x7FFFFFFF) <= 86.0f);
      if (__builtin_expect(
              __builtin_ia32_movmskps256(reinterpret_cast<ExpF8>(in_range)) == 0xFF, 1)) {
        a = kMaxOfX ? Exp8SoftmaxSteps<false>(a) : ExpSteps<ExpF8, false>(a);
        b = kMaxOfX ? Exp8SoftmaxSteps<false>(b) : ExpSteps<ExpF8, false>(b);
      } else {
        a = kMaxOfX ? Exp8Softmax(a) : Exp8(a);
        b = kMaxOfX ? Exp8Softmax(b) : Exp8(b);
      }
      __builtin_memcpy(e + k, &a, sizeof a);
      __builtin_memcpy(e + k + 8, &b, sizeof b);
      lo += a;
      hi += b;
    }
#endif
    if constexpr (kGrouped < C) {  // Exp8's lanes are independent: any grouping
      float d[C - kGrouped];
      for (int64_t k = kGrouped; k < C; ++k) d[k - kGrouped] = x[k] - m[0];
      if constexpr (kMaxOfX) {
        ExpSoftmaxMap(e + kGrouped, d, C - kGrouped);
      } else {
        ExpMap(e + kGrouped, d, C - kGrouped);
      }
    }
    s[0] = CombinePickedLanes<SumOp<float>>(lo, hi, e, kGrouped, C);
    return;
  }
#endif
  alignas(64) float d[C];
  TSubRows<1, C, kFull, kRow>(d, x, m);
  if constexpr (kMaxOfX) {
    TExpSoftmax<C>(e, d);
  } else {
    TExp<C>(e, d);
  }
  TRedSum<1, 1, 1, C, 3>(s, e);
}

// Softmax of one row of C f32 values, o = e * (1 / s) with m = max(x),
// e = exp(x - m), s = sum(e): the bits of host codegen's row code for
// pypto's FP32 softmax, TRedMax<1, 1, 1, C, 3>, TSubExpSumRow<C, true>,
// TRecip<1> and TMulRows<1, C, kFull, kRow> one after another (their row
// tiles and e read by nothing else), which host codegen emits as this one
// call. x and o may be the same row (o is written after the last read of
// x); `next` (or null) as TSubExpSumRow's. The exp is softmax's
// (kMaxOfX: Exp16Softmax with AVX-512F, Exp8Softmax with AVX2).
// With AVX-512F, rows of 32 to 256 values in whole groups of 16 stay in
// 16 zmm registers through the three passes (one load and one store per
// 16 values instead of three loads and two stores): the max in four
// accumulators as ReduceRow's, with a NaN test (without a NaN
// the maximum is one value in any order; a row with a NaN takes the
// sequence above), the exp and sum in TSubExpSumRow's order, then the
// multiply. ReduceRow's second look at a zero maximum (its sign) is not
// needed here: exp(x - (+0)) and exp(x - (-0)) are the same bits for every
// x (both differences are x, or a zero whose exp is 1). Faster per row
// than the sequence, partly for the missing clamp.
template <int64_t C>
inline void TSoftmaxRowExact(float* o, const float* x, const float* next) {
  alignas(64) float e[C];
  float ms[1], r[1];
  TRedMax<1, 1, 1, C, 3>(ms, x);
  TSubExpSumRow<C, true>(e, ms, x, ms, next, o);
  TRecip<1>(r, ms);
  TMulRows<1, C, kFull, kRow>(o, e, r);
}
template <int64_t C>
inline void TSoftmaxRow(float* o, const float* x, const float* next = nullptr) {
#if defined(__AVX512F__) && PTO_TILE_FAST_EXP
  if constexpr (C >= 2 * kReduceLanes && C <= 16 * kReduceLanes && C % kReduceLanes == 0) {
    constexpr int kGroups = static_cast<int>(C / kReduceLanes);
    ExpF16 v[kGroups];  // the row (unrolled loops: registers, not memory)
#pragma GCC unroll 16
    for (int g = 0; g < kGroups; ++g) __builtin_memcpy(&v[g], x + g * kReduceLanes, sizeof v[g]);
    // Accumulators start at the first groups (not -inf: 4 vmaxps fewer per
    // row; max is idempotent, so a row of 2 or 3 groups repeats one).
    RedF16 a0 = v[0], a1 = v[1], a2 = v[2 % kGroups], a3 = v[3 % kGroups];
#pragma GCC unroll 16
    for (int g = 4; g < kGroups; ++g) {  // group g in accumulator g % 4
      RedF16& acc = g % 4 == 0 ? a0 : g % 4 == 1 ? a1 : g % 4 == 2 ? a2 : a3;
      acc = Pick16<1>(acc, v[g]);
    }
    // The NaN test: one unordered compare per two groups (a lane is
    // unordered if either holds a NaN), the masks ORed in a mask register
    // (korw; cheaper than one compare per group with the masks ORed
    // through general registers).
    uint16_t unordered = 0;
#pragma GCC unroll 16
    for (int g = 0; g < kGroups; g += 2) {
      const ExpF16 pair = g + 1 < kGroups ? v[g + 1] : v[g];
      unordered = __builtin_ia32_korhi(
          unordered, __builtin_ia32_cmpps512_mask(v[g], pair, 3 /* _CMP_UNORD_Q */,
                                                  static_cast<uint16_t>(-1), 4));
    }
    if (unordered != 0) return TSoftmaxRowExact<C>(o, x, next);
    // The lanes' maximum in every lane (a butterfly: lane j against lane
    // j ^ 8, 4, 2, 1), no fold to one float and broadcast back. Without a
    // NaN the maximum is one value in any order (which zero, if it is one,
    // does not matter: above).
    RedF16 mv = Pick16<1>(Pick16<1>(a0, a1), Pick16<1>(a2, a3));
    mv = Pick16<1>(mv, __builtin_shufflevector(mv, mv, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3,
                                               4, 5, 6, 7));
    mv = Pick16<1>(mv, __builtin_shufflevector(mv, mv, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15,
                                               8, 9, 10, 11));
    mv = Pick16<1>(mv, __builtin_shufflevector(mv, mv, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14,
                                               15, 12, 13));
    mv = Pick16<1>(mv, __builtin_shufflevector(mv, mv, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13,
                                               12, 15, 14));
    ExpF16 sum = {};
    // Without a next row, x's own lines (in cache): no test per group
    // (cheaper than a branch per group).
    const float* ahead = next != nullptr ? next : x;
#pragma GCC unroll 16
    for (int g = 0; g < kGroups; ++g) {
      __builtin_prefetch(ahead + g * kReduceLanes);
      __builtin_prefetch(o + g * kReduceLanes, 1);
      v[g] = Exp16Softmax(v[g] - mv);
      sum += v[g];
    }
    const float r = 1.0f / FoldLanes<0>(LowHalf(sum), HighHalf(sum));
#pragma GCC unroll 16
    for (int g = 0; g < kGroups; ++g) {
      const ExpF16 y = v[g] * r;
      __builtin_memcpy(o + g * kReduceLanes, &y, sizeof y);
    }
    return;
  }
#endif
  TSoftmaxRowExact<C>(o, x, next);
}

// Rows with a run-time length C (a fused row group over a
// symbolic last dim, whose block function takes C from its args and runs one
// row at a time in arrays sized at the group's bound). A row is loaded and
// stored with C values and padded with zeros to whole chunks of kRowChunk;
// elementwise instructions run over those whole chunks (host codegen calls
// their static kRowChunk-element forms, whose results per element do not
// depend on where the element sits), and reductions take exactly C values
// in the order of the static row code at C (ReduceRow's lanes from 32
// values, else one after another), so a row gives the bits the static
// kernel gives at the same length.
constexpr int64_t kRowChunk = 64;

template <typename T>
inline void TLoadRowN(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                      int64_t s3, int64_t c) {
  if constexpr (IsHalf<T>::kValue) {
    if (s3 == 1) {
      HalvesToFloats(dst, reinterpret_cast<const uint16_t*>(src), c);
    } else {
      for (int64_t j = 0; j < c; ++j) dst[j] = Elem<T>::Load(src[j * s3]);
    }
  } else {
    for (int64_t j = 0; j < c; ++j) dst[j] = Elem<T>::Load(src[j * s3]);
  }
  const int64_t end = (c + kRowChunk - 1) / kRowChunk * kRowChunk;
  for (int64_t j = c; j < end; ++j) dst[j] = 0;
}

template <typename T>
inline void TStoreRowN(T* __restrict dst, const typename Elem<T>::S* __restrict src,
                       int64_t c) {
  if constexpr (IsHalf<T>::kValue) {
    FloatsToHalves(reinterpret_cast<uint16_t*>(dst), src, c);
  } else {
    for (int64_t j = 0; j < c; ++j) dst[j] = Elem<T>::Store(src[j]);
  }
}

// TSubExpSumRow with a run-time length c: e = exp(x - m[0]) over c values
// (zeros from c to the end of its chunk) and s[0] = their sum, the bits
// TSubExpSumRow<c, kMaxOfX> gives. x may be a row in GM (read at c values only); as
// there, m and s may be the same row tile and e and x the same tile.
template <bool kMaxOfX = false>
inline void TSubExpSumRowN(float* e, float* s, const float* x, const float* m, int64_t c) {
  const int64_t end = (c + kRowChunk - 1) / kRowChunk * kRowChunk;
#if PTO_TILE_FAST_EXP
  if (c >= 2 * kReduceLanes) {
    const int64_t grouped = c / kReduceLanes * kReduceLanes;
    ExpF8 lo, hi;  // SumOp's lanes 0..7 and 8..15
#if defined(__AVX512F__)
    const ExpF16 mv = ExpSplat<ExpF16>(m[0]);
    ExpF16 sum = {};  // SumOp's lanes 0..15, as TSubExpSumRow keeps them
    for (int64_t k = 0; k < grouped; k += kReduceLanes) {
      ExpF16 a;
      __builtin_memcpy(&a, x + k, sizeof a);
      a = kMaxOfX ? Exp16Softmax(a - mv) : Exp16(a - mv);
      __builtin_memcpy(e + k, &a, sizeof a);
      sum += a;
    }
    lo = LowHalf(sum);
    hi = HighHalf(sum);
#else
    const ExpF8 mv = ExpSplat<ExpF8>(m[0]);
    lo = ExpF8{};
    hi = lo;
    for (int64_t k = 0; k < grouped; k += kReduceLanes) {
      ExpF8 a, b;
      __builtin_memcpy(&a, x + k, sizeof a);
      __builtin_memcpy(&b, x + k + 8, sizeof b);
      a = kMaxOfX ? Exp8Softmax(a - mv) : Exp8(a - mv);
      b = kMaxOfX ? Exp8Softmax(b - mv) : Exp8(b - mv);
      __builtin_memcpy(e + k, &a, sizeof a);
      __builtin_memcpy(e + k + 8, &b, sizeof b);
      lo += a;
      hi += b;
    }
#endif
    if (grouped < c) {
      float d[kReduceLanes];
      for (int64_t k = grouped; k < c; ++k) d[k - grouped] = x[k] - m[0];
      if constexpr (kMaxOfX) {
        ExpSoftmaxMap(e + grouped, d, c - grouped);
      } else {
        ExpMap(e + grouped, d, c - grouped);
      }
    }
    s[0] = CombinePickedLanes<SumOp<float>>(lo, hi, e, grouped, c);
    for (int64_t k = c; k < end; ++k) e[k] = 0;
    return;
  }
#endif
  // TSubRows, TExp and TRedSum one after another, a chunk at a time.
  for (int64_t k = 0; k < end; k += kRowChunk) {
    alignas(64) float d[kRowChunk];
    for (int64_t j = 0; j < kRowChunk; ++j) d[j] = k + j < c ? x[k + j] - m[0] : 0.0f;
    if constexpr (kMaxOfX) {
      TExpSoftmax<kRowChunk>(e + k, d);
    } else {
      TExp<kRowChunk>(e + k, d);
    }
  }
  for (int64_t k = c; k < end; ++k) e[k] = 0;
  s[0] = ReduceRowN<SumOp<float>>(e, c);
}

}  // namespace pto_tile

#endif  // PTO_TILE_ROWS_H_
