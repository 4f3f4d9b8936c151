// PTO tile instructions (pto_tile.h): pto_tile's own f32 exp where the
// target has FMA (Exp8, Exp16, and softmax's Exp8Softmax, Exp16Softmax) and
// maps of a vector function over runs (Map8, Map16, ExpMap, ExpSoftmaxMap).
#ifndef PTO_TILE_EXP_H_
#define PTO_TILE_EXP_H_

#include <stdint.h>

#include "pto_tile_convert.h"

namespace pto_tile {

// f32 exp on x86-64-v3 (AVX2 + FMA): 8 lanes of float arithmetic, about 3x
// faster than libmvec's double exp. exp(x) = 2^n * P(r) with n = round(x /
// ln2) (the 1.5 * 2^23 shift trick), r = x - n * ln2 in two FMA steps (the
// first is exact: ln2's f32 head times n cancels against x), P = 1 + r +
// r^2/2 + r^3 (c3 + c4 r + c5 r^2 + c6 r^3) of degree 6 (c3..c6 fitted for
// relative error on [-ln2/2, ln2/2] by numerics/exp_fit.py: 2^-28 in f32
// coefficients) in Horner form, 2^n added to P's exponent bits. It is
// faithful, not correctly rounded: over all 2^32 inputs the error is at most
// 0.896 ulp and 0.47% of results are one ulp from the correctly rounded one
// (numerics/exp_check.cc; the bound is 2e-6, about 16 ulp). The degree-7
// polynomial before (0.88 ulp, 0.24%) took one FMA more per 8 values: 9% of
// softmax's exp pass. The 8-lane form covers |x| <= 86, where 2^n
// and the result stay normal; a vector with any other lane (larger |x|, inf,
// NaN) takes ExpSteps' full form, which clamps x to [-104, 89] (NaN stays
// NaN) and scales in two exact steps so that subnormal results round once
// and large ones overflow to inf. The one-float form (ExpF32, hardware FMA
// too) gives the same bits for every input (checked over all 2^32).
// Elsewhere (no FMA) exp stays libmvec's double exp rounded to f32.
#ifndef PTO_TILE_FAST_EXP
#if defined(__AVX2__) && defined(__FMA__)
#define PTO_TILE_FAST_EXP 1
#else
#define PTO_TILE_FAST_EXP 0
#endif
#endif

#if PTO_TILE_FAST_EXP
typedef float ExpF8 __attribute__((vector_size(32)));
typedef int32_t ExpI8 __attribute__((vector_size(32)));
inline ExpF8 ExpFma(ExpF8 a, ExpF8 b, ExpF8 c) {
  return __builtin_ia32_vfmaddps256(a, b, c);
}
inline float ExpFma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline ExpI8 ExpBits(ExpF8 v) { return reinterpret_cast<ExpI8>(v); }
inline int32_t ExpBits(float v) { return static_cast<int32_t>(BitsFromFloat(v)); }
inline ExpF8 ExpFromBits(ExpI8 b) { return reinterpret_cast<ExpF8>(b); }
inline float ExpFromBits(int32_t b) { return FloatFromBits(static_cast<uint32_t>(b)); }
#if defined(__AVX512F__)
// 16 lanes (zmm) where the target has AVX-512F (x86-64-v4): the same
// helpers, so ExpSteps and the code built on them take ExpF16 as they take
// ExpF8.
typedef float ExpF16 __attribute__((vector_size(64)));
typedef int32_t ExpI16 __attribute__((vector_size(64)));
inline ExpF16 ExpFma(ExpF16 a, ExpF16 b, ExpF16 c) {
  return __builtin_ia32_vfmaddps512_mask(a, b, c, -1, 4 /* current rounding */);
}
inline ExpI16 ExpBits(ExpF16 v) { return reinterpret_cast<ExpI16>(v); }
inline ExpF16 ExpFromBits(ExpI16 b) { return reinterpret_cast<ExpF16>(b); }
#endif
template <typename V>
inline V ExpSplat(float c) {
  return V{} + c;  // c in every lane
}
template <>
inline float ExpSplat<float>(float c) {
  return c;
}

// n = round(x / ln2) (kd = n + the shift, whose low bits hold n) and
// P(r): the steps every form below shares.
template <typename V>
inline V ExpPoly(V x, V& kd, V& n) {
  const V shift = ExpSplat<V>(0x1.8p23f);
  kd = ExpFma(x, ExpSplat<V>(0x1.715476p+0f), shift);  // n + shift
  n = kd - shift;
  V r = ExpFma(n, ExpSplat<V>(-0x1.62e430p-1f), x);  // exact
  r = ExpFma(n, ExpSplat<V>(0x1.05c610p-29f), r);    // ln2's tail
  V p = ExpFma(r, ExpSplat<V>(0x1.6b6e4ap-10f), ExpSplat<V>(0x1.122f88p-7f));
  p = ExpFma(p, r, ExpSplat<V>(0x1.555688p-5f));
  p = ExpFma(p, r, ExpSplat<V>(0x1.5554a4p-3f));
  p = ExpFma(p, r, ExpSplat<V>(0.5f));
  p = ExpFma(p, r, ExpSplat<V>(1.0f));
  return ExpFma(p, r, ExpSplat<V>(1.0f));
}

// The steps for one float (V = float) or 8 (ExpF8); kFull: any x, else
// only |x| <= 86.
template <typename V, bool kFull>
inline V ExpSteps(V x) {
  if constexpr (kFull) {
    x = x < -104.0f ? ExpSplat<V>(-104.0f) : x;  // exp(-104) rounds to 0
    x = x > 89.0f ? ExpSplat<V>(89.0f) : x;      // exp(89) overflows
  }
  V kd, n;
  const V p = ExpPoly(x, kd, n);
  const auto k = ExpBits(kd) - 0x4B400000;  // n as an integer
  if constexpr (kFull) {
    const auto k1 = k >> 1;
    return (p * ExpFromBits((k1 + 127) << 23)) * ExpFromBits((k - k1 + 127) << 23);
  }
  return ExpFromBits(ExpBits(p) + (k << 23));
}

inline float ExpF32(float x) { return ExpSteps<float, true>(x); }

inline ExpF8 Exp8(ExpF8 x) {
  const ExpF8 ax = ExpFromBits(ExpBits(x) & 0x7FFFFFFF);
  const ExpI8 in_range = ax <= 86.0f;  // false for NaN
  if (__builtin_ia32_movmskps256(reinterpret_cast<ExpF8>(in_range)) == 0xFF) {
    return ExpSteps<ExpF8, false>(x);
  }
  return ExpSteps<ExpF8, true>(x);
}

// 2^(j/8) rounded to f32, j = 0..7: Exp8Softmax's table, which vpermps
// picks from by an index's low 3 bits.
inline constexpr ExpF8 kExp2Table8 = {0x1.000000p+0f, 0x1.172b84p+0f, 0x1.306fe0p+0f,
                                      0x1.4bfdaep+0f, 0x1.6a09e6p+0f, 0x1.8ace54p+0f,
                                      0x1.ae89fap+0f, 0x1.d5818ep+0f};

// Softmax's exp on x86-64-v3 (AVX2 + FMA), for lanes <= 0 or NaN (x -
// max(x)). exp(x) = 2^floor(m) * 2^(j/8) * e^r with m = n/8, n = round(x *
// 8 / ln2): the shift 1.5 * 2^20 (ulp 2^-3) leaves m exactly in kd - shift
// and n mod 8 in kd's low 3 mantissa bits, which index the table (vpermps);
// r = x - m ln2 in two Cody-Waite steps; e^r = 1 + r + r^2 (c2 + c3 r) on
// |r| <= ln2/16 (numerics/exp_softmax_fit.py: 0.46 x 2^-24 relative); y = T +
// T q. Exp8's 6-step polynomial becomes 3 operations and its dependency
// chain ~10 cycles shorter. kFull false:
// every lane in [-86, 0], 2^floor(m) added to y's exponent bits ((kd's bits
// << 20) keeps floor(n / 8) << 23 once masked to the exponent field: the
// shift's own bits shift out); kFull: x clamped to -104 (a NaN stays NaN,
// -inf gives 0) and y scaled by 2^k1 then 2^(k - k1), which is exact where
// the result is normal (the bits of the short form) and rounds once into
// subnormals. Over every float <= 0 (numerics/exp_softmax_check_v3): see
// Exp8Softmax. Positive x is not its domain.
template <bool kFull>
inline ExpF8 Exp8SoftmaxSteps(ExpF8 x) {
  if constexpr (kFull) x = x < -104.0f ? ExpSplat<ExpF8>(-104.0f) : x;
  const ExpF8 shift = ExpSplat<ExpF8>(0x1.8p20f);
  const ExpF8 kd = ExpFma(x, ExpSplat<ExpF8>(0x1.715476p+0f), shift);  // n/8 + shift
  const ExpF8 m = kd - shift;
  ExpF8 r = ExpFma(m, ExpSplat<ExpF8>(-0x1.62e430p-1f), x);
  r = ExpFma(m, ExpSplat<ExpF8>(0x1.05c610p-29f), r);  // ln2's tail
  const ExpF8 p = ExpFma(ExpSplat<ExpF8>(0x1.5548e4p-3f), r, ExpSplat<ExpF8>(0x1.000882p-1f));
  const ExpF8 q = ExpFma(p, r * r, r);
  const ExpF8 t = __builtin_ia32_permvarsf256(kExp2Table8, ExpBits(kd));
  const ExpF8 y = ExpFma(t, q, t);
  if constexpr (!kFull) {
    return ExpFromBits(ExpBits(y) + ((ExpBits(kd) << 20) & static_cast<int32_t>(0xFF800000u)));
  }
  const ExpI8 k = (ExpBits(kd) - 0x49C00000) >> 3;  // floor(n / 8)
  const ExpI8 k1 = k >> 1;
  return (y * ExpFromBits((k1 + 127) << 23)) * ExpFromBits((k - k1 + 127) << 23);
}

// Exp8SoftmaxSteps, the short form where every lane is in [-86, 0] (the
// same bits). Over every float <= 0 and every NaN (bench/
// exp_softmax_check_v3): at most 1.14 ulp, 1.1e-7 relative, NaN -> NaN,
// -inf -> +0, -0 -> 1, results below half the smallest subnormal -> +0.
// Its bits differ from Exp8's in the last place for some x: a v3 softmax's
// exp is not pypto.exp's.
inline ExpF8 Exp8Softmax(ExpF8 x) {
  const ExpI8 in_range = x >= -86.0f;  // false for NaN
  if (__builtin_ia32_movmskps256(reinterpret_cast<ExpF8>(in_range)) == 0xFF) {
    return Exp8SoftmaxSteps<false>(x);
  }
  return Exp8SoftmaxSteps<true>(x);
}

// d[i] = F(a[i]) for i < n (d may equal a); a partial last vector is
// padded, so results never depend on the tile shape.
template <ExpF8 (*F)(ExpF8)>
inline void Map8(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    ExpF8 v;
    __builtin_memcpy(&v, a + i, sizeof v);
    v = F(v);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    ExpF8 v = {};
    __builtin_memcpy(&v, a + i, (n - i) * sizeof(float));
    v = F(v);
    __builtin_memcpy(d + i, &v, (n - i) * sizeof(float));
  }
}

// 16 lanes where the target has AVX-512F (x86-64-v4), one form for every
// input: x clamped to [-104, 89] as ExpSteps' full form clamps it (vmaxps
// and vminps return their second operand, x, for a NaN), ExpPoly's steps,
// and p * 2^n by one vscalefps, which rounds once: exact where the result is
// normal, as adding n to p's exponent bits is, and the single rounding of
// the full form's two exact-then-rounding steps into subnormals or inf. So
// Exp16 gives the bits of Exp8 and ExpF32 for every input (checked over all
// 2^32: numerics/exp_check_v4) with no range test or branch, and two vector
// operations fewer per 16 values than the short form's shift-and-add.
#if defined(__AVX512F__)
inline ExpF16 Exp16(ExpF16 x) {
  constexpr uint16_t kAll = 0xFFFF;
  x = __builtin_ia32_maxps512_mask(ExpSplat<ExpF16>(-104.0f), x, ExpF16{}, kAll, 4);
  x = __builtin_ia32_minps512_mask(ExpSplat<ExpF16>(89.0f), x, ExpF16{}, kAll, 4);
  ExpF16 kd, n;
  const ExpF16 p = ExpPoly(x, kd, n);
  return __builtin_ia32_scalefps512_mask(p, n, ExpF16{}, kAll, 4);
}

// 2^(j/32) rounded to f32, j = 0..15 and 16..31: Exp16Softmax's table, the
// two halves vpermt2ps picks from by an index's low 5 bits.
inline constexpr ExpF16 kExp2Table32Lo = {
    0x1.000000p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f,
    0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f, 0x1.29e9e0p+0f,
    0x1.306fe0p+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
    0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f};
inline constexpr ExpF16 kExp2Table32Hi = {
    0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f,
    0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
    0x1.ae89fap+0f, 0x1.b7f770p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
    0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f};

// Softmax's exp on AVX-512F, for lanes <= 0 or NaN only (x - max(x)): 10
// vector operations per 16 values where Exp16 without its clamp to 89 takes
// 12 (one thread's softmax row is bound by the exp's arithmetic). exp(x) =
// 2^floor(n/32) * 2^((n mod 32)/32) * e^r with n = round(x * 32 / ln2): the
// shift 1.5 * 2^18 (ulp 2^-5) leaves m = n/32 exactly and n mod 32 in kd's
// low 5 mantissa bits, which index the table (vpermt2ps); r = x - m * ln2 in
// two Cody-Waite steps (one step errs by m times ln2's f32 rounding: up to
// 5.5 ulp); e^r = 1 + r (c1 + c2 r) on |r| <= ln2/64 (bench/
// exp_softmax_fit.py: 0.9 x 2^-24 relative); y = T + T q, scaled by
// 2^floor(m) in one vscalefps, which rounds once into subnormals. The clamp
// to -104 (vmaxps returns x for a NaN: NaN stays NaN) sends -inf to 0.
// Over every float <= 0 (numerics/exp_softmax_check): at most 1.74 ulp,
// relative error at most 1.65e-7 (the bound is 2e-6), NaN -> NaN,
// -inf -> 0, -0 -> 1, results below half the smallest subnormal -> 0
// (exp_softmax_check also measures the variants not taken).
// Its bits differ from
// Exp16's (and so from v3's Exp8) in the last place for some inputs: an
// x86-64-v4 softmax differs from v3's there. Positive x is not its domain
// (+inf gives NaN).
inline ExpF16 Exp16Softmax(ExpF16 x) {
  constexpr uint16_t kAll = 0xFFFF;
  x = __builtin_ia32_maxps512_mask(ExpSplat<ExpF16>(-104.0f), x, ExpF16{}, kAll, 4);
  const ExpF16 shift = ExpSplat<ExpF16>(0x1.8p18f);
  const ExpF16 kd = ExpFma(x, ExpSplat<ExpF16>(0x1.715476p+0f), shift);  // n/32 + shift
  const ExpF16 m = kd - shift;
  ExpF16 r = ExpFma(m, ExpSplat<ExpF16>(-0x1.62e430p-1f), x);
  r = ExpFma(m, ExpSplat<ExpF16>(0x1.05c610p-29f), r);  // ln2's tail
  const ExpF16 q =
      r * ExpFma(ExpSplat<ExpF16>(0x1.000026p-1f), r, ExpSplat<ExpF16>(0x1.0000f6p+0f));
  const ExpF16 t = __builtin_ia32_vpermt2varps512_mask(ExpBits(kd), kExp2Table32Lo,
                                                       kExp2Table32Hi, kAll);
  return __builtin_ia32_scalefps512_mask(ExpFma(t, q, t), m, ExpF16{}, kAll, 4);
}

// Map8 16 lanes at a time (AVX-512F): the partial last vector is loaded
// and stored under a lane mask (masked-off lanes read as 0 and are not
// written), so results never depend on the tile shape here either.
template <ExpF16 (*F)(ExpF16)>
inline void Map16(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    ExpF16 v;
    __builtin_memcpy(&v, a + i, sizeof v);
    v = F(v);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    const auto m = static_cast<unsigned short>((1u << (n - i)) - 1);
    ExpF16 v = __builtin_ia32_loadups512_mask(a + i, ExpF16{}, m);
    v = F(v);
    __builtin_ia32_storeups512_mask(d + i, v, m);
  }
}
#endif

// d[i] = exp(a[i]) for i < n (d may equal a): 16 lanes with AVX-512F, else
// 8 (the same bits).
inline void ExpMap(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  Map16<Exp16>(d, a, n);
#else
  Map8<Exp8>(d, a, n);
#endif
}

// ExpMap for softmax's exp (every a[i] <= 0 or NaN): Exp16Softmax with
// AVX-512F, every lane (a partial last vector under its mask), else
// Exp8Softmax (a partial last vector padded), so a value's exp never
// depends on where it lies in a row or tile.
inline void ExpSoftmaxMap(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  Map16<Exp16Softmax>(d, a, n);
#else
  Map8<Exp8Softmax>(d, a, n);
#endif
}
#endif

}  // namespace pto_tile

#endif  // PTO_TILE_EXP_H_
