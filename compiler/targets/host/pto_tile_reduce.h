// PTO tile instructions (pto_tile.h): reductions. Reductions along one
// dim (TRedSum, TRedProd, TRedMax, TRedMin), argmax/argmin's steps
// (TArgFirst, TArgSel) and row reductions of a run-time length (TRed*RowN).
//
// Row reductions (contiguous dim) keep 16 partial results per row (see
// ReduceRow): sums differ from left-to-right order by rounding only.
#ifndef PTO_TILE_REDUCE_H_
#define PTO_TILE_REDUCE_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_convert.h"

namespace pto_tile {

// Reductions along dim K of a 4-d tile E0 x E1 x E2 x E3 (padded): the
// destination has extent 1 in dim K (row-major). They run on a tile of
// any storage type S, accumulating in S: float (FP32, FP16, BF16 and the
// small integer types for amax/amin; FP16/BF16 sums do not round per
// element), int64 (integer sums and products wrap in two's complement like
// torch's int64) or double. max/min propagate NaN (numpy amax, torch).
template <typename S>
struct Lowest {
  static S Get() { return -__builtin_inf(); }
};
template <>
struct Lowest<int64_t> {
  static int64_t Get() { return INT64_MIN; }
};
template <typename S>
struct Highest {
  static S Get() { return __builtin_inf(); }
};
template <>
struct Highest<int64_t> {
  static int64_t Get() { return INT64_MAX; }
};
template <typename S>
struct SumOp {
  static S Init() { return 0; }
  static S Apply(S acc, S x) { return acc + x; }
};
template <>
struct SumOp<int64_t> {
  static int64_t Init() { return 0; }
  static int64_t Apply(int64_t acc, int64_t x) {
    return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
  }
};
template <typename S>
struct ProdOp {
  static S Init() { return 1; }
  static S Apply(S acc, S x) { return acc * x; }
};
template <>
struct ProdOp<int64_t> {
  static int64_t Init() { return 1; }
  static int64_t Apply(int64_t acc, int64_t x) {
    return static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(x));
  }
};
template <typename S>
struct MaxOp {
  static S Init() { return Lowest<S>::Get(); }
  static S Apply(S acc, S x) { return (x != x || x > acc) ? x : acc; }
};
template <typename S>
struct MinOp {
  static S Init() { return Highest<S>::Get(); }
  static S Apply(S acc, S x) { return (x != x || x < acc) ? x : acc; }
};

// A reduced value as the destination tile holds it: f32 rounded to D
// (FP16, BF16 results); int64 and double as they are.
template <typename D>
inline float Reduced(float v) { return Round<D>::Apply(v); }
template <typename D>
inline int64_t Reduced(int64_t v) { return v; }
template <typename D>
inline double Reduced(double v) { return v; }

template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K>
struct ReduceShape {
  static constexpr int64_t kE[4] = {E0, E1, E2, E3};
  static constexpr int64_t kLen = kE[K];
  // Element stride of dim K in the source tile.
  static constexpr int64_t kStride = K == 0 ? E1 * E2 * E3
                                     : K == 1 ? E2 * E3
                                     : K == 2 ? E3 : 1;
  // Destination extents.
  static constexpr int64_t kO0 = K == 0 ? 1 : E0, kO1 = K == 1 ? 1 : E1,
                           kO2 = K == 2 ? 1 : E2, kO3 = K == 3 ? 1 : E3;
  // Source offset of destination element (i0, i1, i2, i3).
  static int64_t Src(int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return ((i0 * E1 + i1) * E2 + i2) * E3 + i3;
  }
};

// A contiguous row of L >= 2 * kReduceLanes values reduced with
// kReduceLanes independent partial results (element k goes to lane
// k % kReduceLanes; the tail past the last full group into lanes 0..),
// combined pairwise: no chain of L dependent operations, and the lane loop
// vectorizes. Float sums differ from left-to-right order by rounding only;
// integer sums are exact (wrapping is associative); max/min still
// propagate NaN.
constexpr int kReduceLanes = 16;
// The tail p[full, L) folded into lane[0..), then the lanes combined
// pairwise: the end of ReduceRowExactN and of the vector forms below.
template <typename Op, typename S>
inline S CombineLanes(S (&lane)[kReduceLanes], const S* __restrict p, int64_t full, int64_t L) {
  for (int64_t k = full; k < L; ++k) {
    lane[k - full] = Op::Apply(lane[k - full], p[k]);
  }
  for (int w = kReduceLanes / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) lane[j] = Op::Apply(lane[j], lane[j + w]);
  }
  return lane[0];
}
template <typename Op, typename S>
inline S ReduceRowExactN(const S* __restrict p, int64_t L) {
  S lane[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) lane[j] = Op::Init();
  const int64_t full = L / kReduceLanes * kReduceLanes;
  for (int64_t k = 0; k < full; k += kReduceLanes) {
    for (int j = 0; j < kReduceLanes; ++j) lane[j] = Op::Apply(lane[j], p[k + j]);
  }
  return CombineLanes<Op>(lane, p, full, L);
}

template <typename Op, int64_t L, typename S>
inline S ReduceRowExact(const S* __restrict p) {
  return ReduceRowExactN<Op>(p, L);  // (inlined: L is a compile-time constant again)
}

// f32 max/min rows where the target has AVX: vmaxps/vminps keep
// x > acc ? x : acc (x < acc ? x : acc), which is Op::Apply for every x but
// NaN, and one unordered compare per 16 values is ORed into a mask tested
// once per row (the blend of Op::Apply's NaN check was the row's slowest
// loop). Rows of 64 or more run four pairs of accumulators, element k in
// pair (k / 16) % 4 (one pair's chain of vmaxps latencies would bound the
// loop on rows in L1), combined at the end.
// Without NaNs the maximum is one value whatever the order, except its
// sign when it is zero (-0 == +0: which zero comes first in a lane decides
// it), so a row holding a NaN or reducing to zero is reduced again by
// ReduceRowExact: every result keeps its bits (which NaN, the sign of a zero
// max). With AVX-512F (x86-64-v4) each pair is one 16-lane vector (lane j of
// the vector is lane j of the pair) and the NaN check a vcmpps into a mask
// register: the same results, so v3 and v4 kernels give the same bits. The
// 16 lanes are combined in registers (FoldLanes), not through memory.
template <typename Op>
struct PickOp {
  static constexpr int kValue = 0;  // no vector form
};
template <>
struct PickOp<MaxOp<float>> {
  static constexpr int kValue = 1;
};
template <>
struct PickOp<MinOp<float>> {
  static constexpr int kValue = 2;
};
// f32 sums (IsFloatSum), which ReduceRow also runs in vector registers.
template <typename Op>
struct IsFloatSum {
  static constexpr bool kValue = false;
};
template <>
struct IsFloatSum<SumOp<float>> {
  static constexpr bool kValue = true;
};
#if defined(__AVX__)
typedef float RedF8 __attribute__((vector_size(32)));
typedef int32_t RedI8 __attribute__((vector_size(32)));
template <int kPick>
inline RedF8 Pick8(RedF8 acc, RedF8 x) {
  return kPick == 1 ? __builtin_ia32_maxps256(x, acc) : __builtin_ia32_minps256(x, acc);
}

// Lanes 0..7 (lo) and 8..15 (hi) combined as CombineLanes' pairwise loop
// combines them when there is no tail (lane j with lane j + w for w = 8, 4,
// 2, 1, the same operands in the same order: the same bits), in registers
// instead of 15 scalar steps through memory (a tenth of a 256-value
// softmax row). kPick 0: SumOp<float>; else Pick8's op, for rows without
// NaN (where Pick is Op::Apply).
typedef float RedF4 __attribute__((vector_size(16)));
typedef int32_t RedI4 __attribute__((vector_size(16)));
template <int kPick>
inline RedF4 Pick4(RedF4 acc, RedF4 x) {
  if constexpr (kPick == 0) return acc + x;
  return kPick == 1 ? __builtin_ia32_maxps(x, acc) : __builtin_ia32_minps(x, acc);
}
template <int kPick>
inline float FoldLanes(RedF8 lo, RedF8 hi) {
  const RedF8 s8 = kPick == 0 ? lo + hi : Pick8<kPick>(lo, hi);
  RedF4 a, b;
  __builtin_memcpy(&a, &s8, sizeof a);
  __builtin_memcpy(&b, reinterpret_cast<const char*>(&s8) + sizeof a, sizeof b);
  const RedF4 s4 = Pick4<kPick>(a, b);
  const RedF4 s2 = Pick4<kPick>(s4, __builtin_shuffle(s4, RedI4{2, 3, 2, 3}));
  return Pick4<kPick>(s2, __builtin_shuffle(s2, RedI4{1, 1, 1, 1}))[0];
}

// The row's result from the 16 lanes lo, hi (or v) hold after the first
// `full` values: the tail p[full, L) folded into lanes 0.., then the lanes
// combined pairwise (ReduceRow, ReduceRowN: the order ReduceRowExact uses;
// SumOp<float> too, for softmax's sums).
template <typename Op, typename S>
inline S CombinePickedLanes(RedF8 lo, RedF8 hi, const S* __restrict p, int64_t full, int64_t L) {
  if (full == L) return FoldLanes<PickOp<Op>::kValue>(lo, hi);
  S lane[kReduceLanes];
  __builtin_memcpy(lane, &lo, sizeof lo);
  __builtin_memcpy(lane + 8, &hi, sizeof hi);
  return CombineLanes<Op>(lane, p, full, L);
}
#if defined(__AVX512F__)
// Lanes 0..15 in one 512-bit vector (x86-64-v4): lane j is lane j of the
// 8-lane code's lo/hi pair, so the row gives the same bits.
typedef float RedF16 __attribute__((vector_size(64)));
template <int kPick>
inline RedF16 Pick16(RedF16 acc, RedF16 x) {
  return kPick == 1 ? __builtin_ia32_maxps512_mask(x, acc, RedF16{}, static_cast<uint16_t>(-1), 4)
                    : __builtin_ia32_minps512_mask(x, acc, RedF16{}, static_cast<uint16_t>(-1), 4);
}
// A mask of v's NaN lanes.
inline uint32_t Unordered16(RedF16 v) {
  return __builtin_ia32_cmpps512_mask(v, v, 3 /* _CMP_UNORD_Q */, static_cast<uint16_t>(-1), 4);
}
// Lanes 0..7 and 8..15 of v, in registers (a memcpy of a half would keep v
// in memory, and with it a loop-carried sum).
inline RedF8 LowHalf(RedF16 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7); }
inline RedF8 HighHalf(RedF16 v) {
  return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
}
template <typename Op, typename S>
inline S CombinePickedLanes(RedF16 v, const S* __restrict p, int64_t full, int64_t L) {
  return CombinePickedLanes<Op>(LowHalf(v), HighHalf(v), p, full, L);
}
#endif

// A row of L >= 2 * kReduceLanes f32 values summed as ReduceRowExact sums
// it (lane j: 0 + p[j] + p[j + 16] + ... in order, then the tail and the
// pairwise combine), with the lanes in vector registers (one 16-lane vector
// with AVX-512F, else a pair) instead of an array GCC folds through memory:
// the same bits (layer norm's mean, rms norm's sum of squares; TRedSum).
inline float SumRowLanes(const float* __restrict p, int64_t L) {
  const int64_t full = L / kReduceLanes * kReduceLanes;
#if defined(__AVX512F__)
  RedF16 a = {};
  for (int64_t k = 0; k < full; k += kReduceLanes) {
    RedF16 v;
    __builtin_memcpy(&v, p + k, sizeof v);
    a += v;
  }
  return CombinePickedLanes<SumOp<float>>(a, p, full, L);
#else
  RedF8 lo = {}, hi = {};
  for (int64_t k = 0; k < full; k += kReduceLanes) {
    RedF8 a, b;
    __builtin_memcpy(&a, p + k, sizeof a);
    __builtin_memcpy(&b, p + k + 8, sizeof b);
    lo += a;
    hi += b;
  }
  return CombinePickedLanes<SumOp<float>>(lo, hi, p, full, L);
#endif
}
#endif

// The 16 lanes of a row loop's sum that host codegen generates (a fused run
// ending in a last-dim sum) combined as CombineLanes combines them (lane j
// with lane j + w, w = 8, 4, 2, 1): in registers where the target has AVX
// (FoldLanes; read element by element, so the loop's lanes can stay in a
// register: a memcpy of the array kept them in memory), the same bits.
inline float SumLanes(const float (&lane)[kReduceLanes]) {
#if defined(__AVX__)
  const RedF8 lo = {lane[0], lane[1], lane[2], lane[3], lane[4], lane[5], lane[6], lane[7]};
  const RedF8 hi = {lane[8], lane[9], lane[10], lane[11], lane[12], lane[13], lane[14], lane[15]};
  return FoldLanes<0>(lo, hi);
#else
  float l[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) l[j] = lane[j];
  return CombineLanes<SumOp<float>>(l, l, 0, 0);
#endif
}

template <typename Op, int64_t L, typename S>
inline S ReduceRow(const S* __restrict p) {
#if defined(__AVX__)
  if constexpr (IsFloatSum<Op>::kValue) return SumRowLanes(p, L);
#endif
#if defined(__AVX512F__)
  if constexpr (PickOp<Op>::kValue != 0) {  // the same with 16 lanes per vector
    constexpr int kPick = PickOp<Op>::kValue;
    constexpr int64_t kFull = L / kReduceLanes * kReduceLanes;
    constexpr int64_t kQuad = L / (4 * kReduceLanes) * (4 * kReduceLanes);
    RedF16 a0 = RedF16{} + Op::Init(), a1 = a0, a2 = a0, a3 = a0;
    uint32_t unordered = 0;
    auto group = [&unordered](const S* q, RedF16& acc) {  // 16 values at q
      RedF16 v;
      __builtin_memcpy(&v, q, sizeof v);
      acc = Pick16<kPick>(acc, v);
      unordered |= Unordered16(v);
    };
    for (int64_t k = 0; k < kQuad; k += 4 * kReduceLanes) {
      group(p + k, a0);
      group(p + k + kReduceLanes, a1);
      group(p + k + 2 * kReduceLanes, a2);
      group(p + k + 3 * kReduceLanes, a3);
    }
    for (int64_t k = kQuad; k < kFull; k += kReduceLanes) group(p + k, a0);
    bool nan = unordered != 0;
    for (int64_t k = kFull; k < L; ++k) nan = nan || p[k] != p[k];
    if (nan) return ReduceRowExact<Op, L>(p);
    const RedF16 a = Pick16<kPick>(Pick16<kPick>(a0, a1), Pick16<kPick>(a2, a3));
    const S r = CombinePickedLanes<Op>(a, p, kFull, L);
    if (r == 0) return ReduceRowExact<Op, L>(p);  // the sign of a zero
    return r;
  }
#elif defined(__AVX__)
  if constexpr (PickOp<Op>::kValue != 0) {
    constexpr int kPick = PickOp<Op>::kValue;
    constexpr int64_t kFull = L / kReduceLanes * kReduceLanes;
    constexpr int64_t kQuad = L / (4 * kReduceLanes) * (4 * kReduceLanes);
    // Pair j: lanes 0..7 in lo<j>, 8..15 in hi<j> (named, not an array:
    // GCC's -O2 keeps an array of vectors in memory).
    RedF8 lo0 = RedF8{} + Op::Init(), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, hi2 = lo0,
          lo3 = lo0, hi3 = lo0;
    RedI8 unordered = {};
    auto group = [&unordered](const S* q, RedF8& lo, RedF8& hi) {  // 16 values at q
      RedF8 a, b;
      __builtin_memcpy(&a, q, sizeof a);
      __builtin_memcpy(&b, q + 8, sizeof b);
      lo = Pick8<kPick>(lo, a);
      hi = Pick8<kPick>(hi, b);
      unordered |= reinterpret_cast<RedI8>(__builtin_ia32_cmpps256(a, b, 3));  // _CMP_UNORD_Q
    };
    for (int64_t k = 0; k < kQuad; k += 4 * kReduceLanes) {
      group(p + k, lo0, hi0);
      group(p + k + kReduceLanes, lo1, hi1);
      group(p + k + 2 * kReduceLanes, lo2, hi2);
      group(p + k + 3 * kReduceLanes, lo3, hi3);
    }
    for (int64_t k = kQuad; k < kFull; k += kReduceLanes) group(p + k, lo0, hi0);
    bool nan = __builtin_ia32_movmskps256(reinterpret_cast<RedF8>(unordered)) != 0;
    for (int64_t k = kFull; k < L; ++k) nan = nan || p[k] != p[k];
    if (nan) return ReduceRowExact<Op, L>(p);
    const RedF8 lo = Pick8<kPick>(Pick8<kPick>(lo0, lo1), Pick8<kPick>(lo2, lo3));
    const RedF8 hi = Pick8<kPick>(Pick8<kPick>(hi0, hi1), Pick8<kPick>(hi2, hi3));
    const S r = CombinePickedLanes<Op>(lo, hi, p, kFull, L);
    if (r == 0) return ReduceRowExact<Op, L>(p);  // the sign of a zero
    return r;
  }
#endif
  return ReduceRowExact<Op, L>(p);
}

template <typename Op, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K,
          typename D, typename S>
inline void TReduce(S* __restrict d, const S* __restrict a) {
  using R = ReduceShape<E0, E1, E2, E3, K>;
  if constexpr (R::kStride > 1) {
    // Along an outer dim (a column sum): the source is [outer][len][inner]
    // and d is [outer][inner]. Each d[j] takes the values along K in order,
    // as the loop below would (the same bits), but a whole row of inner
    // values at a time, so the additions run down contiguous rows and
    // vectorize instead of one strided dependent chain per value.
    constexpr int64_t kInner = R::kStride;
    constexpr int64_t kOuter = E0 * E1 * E2 * E3 / (R::kLen * kInner);
    for (int64_t o = 0; o < kOuter; ++o) {
      S* __restrict dr = d + o * kInner;
      const S* __restrict src = a + o * R::kLen * kInner;
      for (int64_t j = 0; j < kInner; ++j) dr[j] = Op::Apply(Op::Init(), src[j]);
      for (int64_t k = 1; k < R::kLen; ++k) {
        for (int64_t j = 0; j < kInner; ++j) dr[j] = Op::Apply(dr[j], src[k * kInner + j]);
      }
      for (int64_t j = 0; j < kInner; ++j) dr[j] = Reduced<D>(dr[j]);
    }
    return;
  }
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < R::kO0; ++i0)
    for (int64_t i1 = 0; i1 < R::kO1; ++i1)
      for (int64_t i2 = 0; i2 < R::kO2; ++i2)
        for (int64_t i3 = 0; i3 < R::kO3; ++i3, ++o) {
          const S* __restrict p = a + R::Src(i0, i1, i2, i3);
          S acc;
          if constexpr (R::kStride == 1 && R::kLen >= 2 * kReduceLanes) {
            acc = ReduceRow<Op, R::kLen>(p);
          } else {
            acc = Op::Init();
            for (int64_t k = 0; k < R::kLen; ++k) acc = Op::Apply(acc, p[k * R::kStride]);
          }
          d[o] = Reduced<D>(acc);
        }
}

#define PTO_TILE_REDUCE(NAME, OP)                                          \
  template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K,          \
            typename D = float, typename S>                                \
  inline void NAME(S* __restrict d, const S* __restrict a) {               \
    TReduce<OP<S>, E0, E1, E2, E3, K, D>(d, a);                            \
  }
PTO_TILE_REDUCE(TRedSum, SumOp)
PTO_TILE_REDUCE(TRedProd, ProdOp)
PTO_TILE_REDUCE(TRedMax, MaxOp)
PTO_TILE_REDUCE(TRedMin, MinOp)
#undef PTO_TILE_REDUCE

// The first k < L with p[k * kStride] == want (NaN matches NaN), or 0 if
// none: argmax/argmin's position, scanned forward to the first match. A
// contiguous f32 row compares 8 values at a time (one movemask per 8);
// scanning every value backwards with a select per value made argmax of
// 4096x1024 10x amax's time.
template <int64_t L, int64_t kStride, typename S>
inline int64_t FirstMatch(const S* __restrict p, S want) {
  const bool nan = want != want;
  int64_t k = 0;
#if defined(__AVX__)
  if constexpr (std::is_same_v<S, float> && kStride == 1) {
    typedef float V8 __attribute__((vector_size(32)));
    typedef int32_t I8 __attribute__((vector_size(32)));
    const V8 w = V8{} + want;
    for (; k + 8 <= L; k += 8) {
      V8 v;
      __builtin_memcpy(&v, p + k, sizeof v);
      const I8 hit = nan ? (v != v) : (v == w);
      const int mask = __builtin_ia32_movmskps256(reinterpret_cast<V8>(hit));
      if (mask != 0) return k + __builtin_ctz(static_cast<unsigned>(mask));
    }
  }
#endif
  for (; k < L; ++k) {
    const S x = p[k * kStride];
    if (x == want || (nan && x != x)) return k;
  }
  return 0;
}

// The first position along K where a equals the reduced value m (NaN
// matches NaN), plus `base` (the tile's offset along K): argmax/argmin's
// partial step.
template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TArgFirst(int64_t* __restrict d, const S* __restrict a,
                      const S* __restrict m, int64_t base) {
  using R = ReduceShape<E0, E1, E2, E3, K>;
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < R::kO0; ++i0)
    for (int64_t i1 = 0; i1 < R::kO1; ++i1)
      for (int64_t i2 = 0; i2 < R::kO2; ++i2)
        for (int64_t i3 = 0; i3 < R::kO3; ++i3, ++o) {
          d[o] = base + FirstMatch<R::kLen, R::kStride>(a + R::Src(i0, i1, i2, i3), m[o]);
        }
}

// The index (from idx) at the first position along K where val equals m:
// argmax/argmin's combine step (positions are in tile order, so the first
// match is the smallest index).
template <int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, typename S>
inline void TArgSel(int64_t* __restrict d, const S* __restrict val,
                    const int64_t* __restrict idx, const S* __restrict m) {
  using R = ReduceShape<E0, E1, E2, E3, K>;
  int64_t o = 0;
  for (int64_t i0 = 0; i0 < R::kO0; ++i0)
    for (int64_t i1 = 0; i1 < R::kO1; ++i1)
      for (int64_t i2 = 0; i2 < R::kO2; ++i2)
        for (int64_t i3 = 0; i3 < R::kO3; ++i3, ++o) {
          const int64_t s = R::Src(i0, i1, i2, i3);
          const S want = m[o];
          int64_t at = idx[s];
          for (int64_t k = R::kLen - 1; k >= 0; --k) {
            const S x = val[s + k * R::kStride];
            if (x == want || (x != x && want != want)) at = idx[s + k * R::kStride];
          }
          d[o] = at;
        }
}

// ReduceRow with a run-time length L (any L >= 0: below 2 * kReduceLanes,
// one value after another as TReduce does; ReduceRowExactN is above). ReduceRowN's
// vmaxps/vminps path keeps one pair of accumulators (ReduceRow's four pairs
// give the same maximum: its order matters only for NaN and the sign of a
// zero, and both go to the exact form here as there).
template <typename Op, typename S>
inline S ReduceRowN(const S* __restrict p, int64_t L) {
  if (L < 2 * kReduceLanes) {
    S acc = Op::Init();
    for (int64_t k = 0; k < L; ++k) acc = Op::Apply(acc, p[k]);
    return acc;
  }
#if defined(__AVX__)
  if constexpr (IsFloatSum<Op>::kValue) return SumRowLanes(p, L);
#endif
#if defined(__AVX512F__)
  if constexpr (PickOp<Op>::kValue != 0) {  // the same with 16 lanes per vector
    const int64_t full = L / kReduceLanes * kReduceLanes;
    RedF16 a = RedF16{} + Op::Init();
    uint32_t unordered = 0;
    for (int64_t k = 0; k < full; k += kReduceLanes) {
      RedF16 v;
      __builtin_memcpy(&v, p + k, sizeof v);
      a = Pick16<PickOp<Op>::kValue>(a, v);
      unordered |= Unordered16(v);
    }
    bool nan = unordered != 0;
    for (int64_t k = full; k < L; ++k) nan = nan || p[k] != p[k];
    if (nan) return ReduceRowExactN<Op>(p, L);
    const S r = CombinePickedLanes<Op>(a, p, full, L);
    if (r == 0) return ReduceRowExactN<Op>(p, L);  // the sign of a zero (ReduceRow)
    return r;
  }
#elif defined(__AVX__)
  if constexpr (PickOp<Op>::kValue != 0) {
    const int64_t full = L / kReduceLanes * kReduceLanes;
    RedF8 lo = RedF8{} + Op::Init(), hi = lo;  // lanes 0..7, 8..15
    RedI8 unordered = {};
    for (int64_t k = 0; k < full; k += kReduceLanes) {
      RedF8 a, b;
      __builtin_memcpy(&a, p + k, sizeof a);
      __builtin_memcpy(&b, p + k + 8, sizeof b);
      lo = Pick8<PickOp<Op>::kValue>(lo, a);
      hi = Pick8<PickOp<Op>::kValue>(hi, b);
      unordered |= reinterpret_cast<RedI8>(__builtin_ia32_cmpps256(a, b, 3));  // _CMP_UNORD_Q
    }
    bool nan = __builtin_ia32_movmskps256(reinterpret_cast<RedF8>(unordered)) != 0;
    for (int64_t k = full; k < L; ++k) nan = nan || p[k] != p[k];
    if (nan) return ReduceRowExactN<Op>(p, L);
    const S r = CombinePickedLanes<Op>(lo, hi, p, full, L);
    if (r == 0) return ReduceRowExactN<Op>(p, L);  // the sign of a zero (ReduceRow)
    return r;
  }
#endif
  return ReduceRowExactN<Op>(p, L);
}

// d[0] = the reduction of the row's C values, as the destination holds it.
#define PTO_TILE_REDUCE_ROW_N(NAME, OP)                                    \
  template <typename D = float>                                            \
  inline void NAME##RowN(float* __restrict d, const float* __restrict a,   \
                         int64_t c) {                                      \
    d[0] = Reduced<D>(ReduceRowN<OP<float>>(a, c));                        \
  }
PTO_TILE_REDUCE_ROW_N(TRedSum, SumOp)
PTO_TILE_REDUCE_ROW_N(TRedProd, ProdOp)
PTO_TILE_REDUCE_ROW_N(TRedMax, MaxOp)
PTO_TILE_REDUCE_ROW_N(TRedMin, MinOp)
#undef PTO_TILE_REDUCE_ROW_N

}  // namespace pto_tile

#endif  // PTO_TILE_REDUCE_H_
