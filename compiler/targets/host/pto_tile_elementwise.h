// PTO tile instructions (pto_tile.h): f32 elementwise instructions.
// Arithmetic, comparisons and transcendentals (through pto_tile_mvec.h,
// pto_tile_exp.h and pto_tile_erf.h) over N-element tiles, each binary one
// also in a Rows form over row and column operands.
#ifndef PTO_TILE_ELEMENTWISE_H_
#define PTO_TILE_ELEMENTWISE_H_

#include <stdint.h>

#include "pto_tile_convert.h"
#include "pto_tile_mvec.h"
#include "pto_tile_exp.h"
#include "pto_tile_erf.h"

namespace pto_tile {

// for (i < N) d[i] = Round<D>::Apply(EXPR): computed, then rounded.

#define PTO_TILE_ROUNDED_LOOP(N, D, EXPR)                                  \
  for (int64_t i = 0; i < N; ++i) d[i] = (EXPR);                           \
  RoundTile<D>(d, N);

// Elementwise instructions over N-element tiles; D is the destination tile's
// type. Sources may alias each other (add(x, x)) but never the destination.
//
// A binary instruction NAME(x, y) = EXPR also has a form NAME##Rows over an
// R x C tile whose sources each have a layout kA/kB: kFull (R x C), kRow
// (R values, one per row: a fused reduction's result, repeated along its
// row) or kCol (C values, one per column: a broadcast [C] operand read in
// place from GM, repeated down the rows).
constexpr int kFull = 0, kRow = 1, kCol = 2;
// Row r of a Rows-form source of layout kLayout over rows of C values (a
// kRow source: a pointer to that row's one value).
template <int kLayout, int64_t C>
inline const float* SourceRow(const float* a, int64_t r) {
  return a + (kLayout == kRow ? r : kLayout == kCol ? 0 : r * C);
}
template <typename F, int64_t R, int64_t C, int kA, int kB, typename D>
inline void BinaryRows(float* __restrict d, const float* __restrict a,
                       const float* __restrict b) {
  for (int64_t r = 0; r < R; ++r) {
    float* __restrict dr = d + r * C;
    const float* __restrict ar = SourceRow<kA, C>(a, r);
    const float* __restrict br = SourceRow<kB, C>(b, r);
    for (int64_t i = 0; i < C; ++i) {
      dr[i] = F::Apply(ar[kA == kRow ? 0 : i], br[kB == kRow ? 0 : i]);
    }
    RoundTile<D>(dr, C);
  }
}
#define PTO_TILE_BINARY(NAME, EXPR)                                        \
  struct NAME##Fn {                                                        \
    static float Apply(float x, float y) { return EXPR; }                  \
  };                                                                       \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a,         \
                   const float* __restrict b) {                            \
    PTO_TILE_ROUNDED_LOOP(N, D, NAME##Fn::Apply(a[i], b[i]));              \
  }                                                                        \
  template <int64_t R, int64_t C, int kA, int kB, typename D = float>      \
  inline void NAME##Rows(float* __restrict d, const float* __restrict a,   \
                         const float* __restrict b) {                      \
    BinaryRows<NAME##Fn, R, C, kA, kB, D>(d, a, b);                        \
  }
#define PTO_TILE_SCALAR(NAME, EXPR)                                        \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a,         \
                   float s) {                                              \
    PTO_TILE_ROUNDED_LOOP(N, D, EXPR);                                     \
  }
#define PTO_TILE_UNARY(NAME, EXPR)                                         \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a) {       \
    PTO_TILE_ROUNDED_LOOP(N, D, EXPR);                                     \
  }

// Comparisons read tiles of any storage type S and write 1.0f or 0.0f; a
// scalar compares in double against integer or double tiles (x < 1.5 must
// not become x < 1; a DOUBLE x < 0.1 must not compare with f32 0.1).
template <typename S>
struct CmpType {
  using T = double;
};
template <>
struct CmpType<float> {
  using T = float;
};
#define PTO_TILE_COMPARE(NAME, OP)                                         \
  template <int64_t N, typename D = float, typename S>                     \
  inline void NAME(float* __restrict d, const S* __restrict a,             \
                   const S* __restrict b) {                                \
    for (int64_t i = 0; i < N; ++i) d[i] = a[i] OP b[i] ? 1.0f : 0.0f;     \
  }
#define PTO_TILE_COMPARE_SCALAR(NAME, OP)                                  \
  template <int64_t N, typename D = float, typename S>                     \
  inline void NAME(float* __restrict d, const S* __restrict a,             \
                   typename CmpType<S>::T s) {                             \
    using C = typename CmpType<S>::T;                                      \
    for (int64_t i = 0; i < N; ++i) {                                      \
      d[i] = static_cast<C>(a[i]) OP static_cast<C>(s) ? 1.0f : 0.0f;      \
    }                                                                      \
  }

// A unary transcendental: FN through libmvec where available, else the
// scalar builtin.
#if PTO_TILE_MVEC
#define PTO_TILE_UNARY_MVEC(NAME, FN)                                      \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a) {       \
    MvecMap<PTO_TILE_MVEC_FN(FN)>(d, a, N);                                \
    RoundTile<D>(d, N);                                                    \
  }
#else
#define PTO_TILE_UNARY_MVEC(NAME, FN) PTO_TILE_UNARY(NAME, __builtin_##FN(a[i]))
#endif

// floor_divide and remainder of floats as torch computes them (c10's
// div_floor_floating and remainder: fmod plus a correction, the remainder
// taking the divisor's sign), so results match torch bit for bit; a zero
// divisor gives a / b (inf or NaN) and fmod's NaN.
template <typename F>
inline F FloorDivOf(F a, F b) {
  if (b == 0) return a / b;
  const F mod = __builtin_fmod(a, b);
  F div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= F(1);
  if (div == 0) return __builtin_copysign(F(0), a / b);
  F floordiv = __builtin_floor(div);
  if (div - floordiv > F(0.5)) floordiv += F(1);
  return floordiv;
}
template <typename F>
inline F RemOf(F a, F b) {
  F mod = __builtin_fmod(a, b);
  if (mod != 0 && (b < 0) != (mod < 0)) mod += b;
  return mod;
}
inline float FloorDivF(float a, float b) { return FloorDivOf<float>(a, b); }
inline float RemF(float a, float b) { return RemOf<float>(a, b); }

// maximum/minimum propagate NaN from either side (numpy, torch).
inline float Max(float x, float y) { return (x != x || x > y) ? x : y; }
inline float Min(float x, float y) { return (x != x || x < y) ? x : y; }
inline float Bool(bool c) { return c ? 1.0f : 0.0f; }

PTO_TILE_BINARY(TAdd, x + y)
PTO_TILE_BINARY(TSub, x - y)
PTO_TILE_BINARY(TMul, x * y)
PTO_TILE_BINARY(TDiv, x / y)
// pow: libmvec's vector powf where available (within 0.62 ulp over 45M
// sampled pairs at 4 and 8 lanes, against glibc powf's 0.52, with the same
// results for every pair of specials: NaN, +-inf, +-0, negative bases,
// integer exponents; numerics/mvec_pow.cc), faster than scalar powf. x ** 2
// is x * x: exact before its one rounding, as powf's result is.
#if PTO_TILE_MVEC
template <int64_t N, typename D = float>
inline void TPow(float* __restrict d, const float* __restrict a, const float* __restrict b) {
  MvecMap2<PTO_TILE_MVEC_FN2(powf), 1, 1>(d, a, b, N);
  RoundTile<D>(d, N);
}
template <int64_t R, int64_t C, int kA, int kB, typename D = float>
inline void TPowRows(float* __restrict d, const float* __restrict a,
                     const float* __restrict b) {
  for (int64_t r = 0; r < R; ++r) {
    float* __restrict dr = d + r * C;
    MvecMap2<PTO_TILE_MVEC_FN2(powf), kA == kRow ? 0 : 1, kB == kRow ? 0 : 1>(
        dr, SourceRow<kA, C>(a, r), SourceRow<kB, C>(b, r), C);
    RoundTile<D>(dr, C);
  }
}
template <int64_t N, typename D = float>
inline void TPowS(float* __restrict d, const float* __restrict a, float s) {
  if (s == 2.0f) {
    for (int64_t i = 0; i < N; ++i) d[i] = a[i] * a[i];
  } else {
    MvecMap2<PTO_TILE_MVEC_FN2(powf), 1, 0>(d, a, &s, N);
  }
  RoundTile<D>(d, N);
}
template <int64_t N, typename D = float>
inline void TRPowS(float* __restrict d, const float* __restrict a, float s) {
  MvecMap2<PTO_TILE_MVEC_FN2(powf), 0, 1>(d, &s, a, N);
  RoundTile<D>(d, N);
}
#else
PTO_TILE_BINARY(TPow, __builtin_powf(x, y))
PTO_TILE_SCALAR(TPowS, s == 2.0f ? a[i] * a[i] : __builtin_powf(a[i], s))
PTO_TILE_SCALAR(TRPowS, __builtin_powf(s, a[i]))
#endif
PTO_TILE_BINARY(TMax, Max(x, y))
PTO_TILE_BINARY(TMin, Min(x, y))
PTO_TILE_BINARY(TFloorDiv, FloorDivF(x, y))
PTO_TILE_BINARY(TRem, RemF(x, y))
PTO_TILE_COMPARE(TCmpEq, ==)
PTO_TILE_COMPARE(TCmpNe, !=)
PTO_TILE_COMPARE(TCmpLt, <)
PTO_TILE_COMPARE(TCmpLe, <=)
PTO_TILE_COMPARE(TCmpGt, >)
PTO_TILE_COMPARE(TCmpGe, >=)
PTO_TILE_SCALAR(TAddS, a[i] + s)
PTO_TILE_SCALAR(TSubS, a[i] - s)
PTO_TILE_SCALAR(TMulS, a[i] * s)
PTO_TILE_SCALAR(TDivS, a[i] / s)
PTO_TILE_SCALAR(TRSubS, s - a[i])
PTO_TILE_SCALAR(TRDivS, s / a[i])
PTO_TILE_SCALAR(TMaxS, Max(a[i], s))
PTO_TILE_SCALAR(TMinS, Min(a[i], s))
PTO_TILE_COMPARE_SCALAR(TCmpEqS, ==)
PTO_TILE_COMPARE_SCALAR(TCmpNeS, !=)
PTO_TILE_COMPARE_SCALAR(TCmpLtS, <)
PTO_TILE_COMPARE_SCALAR(TCmpLeS, <=)
PTO_TILE_COMPARE_SCALAR(TCmpGtS, >)
PTO_TILE_COMPARE_SCALAR(TCmpGeS, >=)
// exp: ExpMap where the target has FMA (x86-64-v3; faithful, within 0.896
// ulp). Elsewhere libmvec's double exp rounded to f32 (MvecMapDouble), the
// correctly rounded result in practice, as glibc's scalar expf gives it.
template <int64_t N, typename D = float>
inline void TExp(float* __restrict d, const float* __restrict a) {
#if PTO_TILE_FAST_EXP
  ExpMap(d, a, N);
  RoundTile<D>(d, N);
#elif PTO_TILE_MVEC
  MvecMapDouble<PTO_TILE_MVEC_DFN(exp)>(d, a, N);
  RoundTile<D>(d, N);
#else
  PTO_TILE_ROUNDED_LOOP(N, D, __builtin_expf(a[i]));
#endif
}
// TEXPSOFTMAX: exp of a tile whose every value is <= 0 or NaN (the lowering
// proved it: softmax's x - max(x), lower/softmax_exp.h). With AVX-512F and
// FMA softmax's exp (ExpSoftmaxMap: Exp16Softmax), the bits TSoftmaxRow,
// TSubExpSumRow<C, true> and TSubExpSumRowN<true> give each value, so a
// softmax computed a whole tile at a time, or from per-tile partials of a
// row spanning several tiles, has the row form's exp; elsewhere TExp.
template <int64_t N, typename D = float>
inline void TExpSoftmax(float* __restrict d, const float* __restrict a) {
#if PTO_TILE_FAST_EXP
  ExpSoftmaxMap(d, a, N);
  RoundTile<D>(d, N);
#else
  TExp<N, D>(d, a);
#endif
}
PTO_TILE_UNARY_MVEC(TExp2, exp2f)
PTO_TILE_UNARY_MVEC(TExpM1, expm1f)
PTO_TILE_UNARY_MVEC(TLog, logf)
PTO_TILE_UNARY_MVEC(TLog2, log2f)
PTO_TILE_UNARY_MVEC(TLog10, log10f)
PTO_TILE_UNARY_MVEC(TLog1P, log1pf)
PTO_TILE_UNARY(TSqrt, __builtin_sqrtf(a[i]))
PTO_TILE_UNARY(TRsqrt, 1.0f / __builtin_sqrtf(a[i]))
PTO_TILE_UNARY(TRecip, 1.0f / a[i])
PTO_TILE_UNARY(TNeg, -a[i])
PTO_TILE_UNARY(TAbs, __builtin_fabsf(a[i]))
// As torch: relu(-0.0) = -0.0, relu(NaN) = NaN.
PTO_TILE_UNARY(TRelu, a[i] < 0.0f ? 0.0f : a[i])
// With e = exp(-|x|) <= 1, nothing overflows: 1 / (1 + e) for x >= 0 and
// e / (1 + e) for x < 0, so sigmoid of a large negative x is a tiny number
// (down to subnormals), not 1 / inf = 0.
inline float SigmoidOf(float x, float e) {  // e = exp(-|x|)
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : x < 0.0f ? e * r : x;  // NaN stays NaN
}
#if PTO_TILE_FAST_EXP
// SigmoidOf a vector at a time, its exp ExpMap's (Exp8, or Exp16 with
// AVX-512F): the same bits. Both candidates computed and picked by selects;
// GCC left SigmoidOf's loop scalar (a branch and a vdivss per value).
template <typename V, V (*Exp)(V)>
inline V SigmoidVec(V x) {
  const V neg_abs = ExpFromBits(ExpBits(x) | static_cast<int32_t>(0x80000000u));
  const V e = Exp(neg_abs);
  const V r = 1.0f / (1.0f + e);
  const V picked = x < 0.0f ? e * r : r;
  return x != x ? x : picked;  // NaN stays NaN
}
inline ExpF8 Sigmoid8(ExpF8 x) { return SigmoidVec<ExpF8, Exp8>(x); }
#if defined(__AVX512F__)
inline ExpF16 Sigmoid16(ExpF16 x) { return SigmoidVec<ExpF16, Exp16>(x); }
#endif
#endif
template <int64_t N, typename D = float>
inline void TSigmoid(float* __restrict d, const float* __restrict a) {
#if PTO_TILE_FAST_EXP
#if defined(__AVX512F__)
  Map16<Sigmoid16>(d, a, N);
#else
  Map8<Sigmoid8>(d, a, N);
#endif
  RoundTile<D>(d, N);
#elif PTO_TILE_MVEC
  for (int64_t i = 0; i < N; ++i) d[i] = -__builtin_fabsf(a[i]);
  MvecMapDouble<PTO_TILE_MVEC_DFN(exp)>(d, d, N);
  PTO_TILE_ROUNDED_LOOP(N, D, SigmoidOf(a[i], d[i]));
#else
  PTO_TILE_ROUNDED_LOOP(N, D, SigmoidOf(a[i], __builtin_expf(-__builtin_fabsf(a[i]))));
#endif
}
PTO_TILE_UNARY_MVEC(TTanh, tanhf)
// erf, erfc: Erf8/Erfc8 where the target has FMA (x86-64-v3; Erf16/Erfc16,
// the same bits 16 lanes at a time, with AVX-512F, x86-64-v4; 1e-6
// absolute, erfc also 3e-7 relative for x > 2, pto_tile_erf.h), elsewhere
// libmvec's or libm's.
#if PTO_TILE_FAST_ERF
template <int64_t N, typename D = float>
inline void TErf(float* __restrict d, const float* __restrict a) {
#if defined(__AVX512F__)
  Map16<Erf16>(d, a, N);
#else
  Map8<Erf8>(d, a, N);
#endif
  RoundTile<D>(d, N);
}
template <int64_t N, typename D = float>
inline void TErfc(float* __restrict d, const float* __restrict a) {
#if defined(__AVX512F__)
  Map16<Erfc16>(d, a, N);
#else
  Map8<Erfc8>(d, a, N);
#endif
  RoundTile<D>(d, N);
}
#else
PTO_TILE_UNARY_MVEC(TErf, erff)
PTO_TILE_UNARY_MVEC(TErfc, erfcf)
#endif
// sign(+-0) = +0, sign(NaN) = NaN (numpy, torch).
PTO_TILE_UNARY(TSign, a[i] > 0.0f ? 1.0f
                      : a[i] < 0.0f ? -1.0f
                      : a[i] == 0.0f ? 0.0f : a[i])
PTO_TILE_UNARY(TFloor, __builtin_floorf(a[i]))
PTO_TILE_UNARY(TCeil, __builtin_ceilf(a[i]))
// Half to even: rint in the default rounding mode.
PTO_TILE_UNARY(TRound, __builtin_rintf(a[i]))
PTO_TILE_UNARY(TTrunc, __builtin_truncf(a[i]))
PTO_TILE_UNARY_MVEC(TSin, sinf)
PTO_TILE_UNARY_MVEC(TCos, cosf)

// Trigonometric and hyperbolic functions, cbrt, atan2 and hypot: computed in
// double (libmvec's double functions, a few double ulps, where available;
// else the scalar double builtins) and rounded once to f32, so the f32
// result is within 1 ulp of the exact one (in practice the correctly
// rounded one), and FP16/BF16 results the float64 result rounded to the
// type. NaN, +-inf and +-0 give what C99 gives (asin(2) NaN, atanh(1) inf,
// atan2(+-0, -0) +-pi, hypot(inf, NaN) inf).
#if PTO_TILE_MVEC
#define PTO_TILE_UNARY_DOUBLE(NAME, FN)                                    \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a) {       \
    MvecMapDouble<PTO_TILE_MVEC_DFN(FN)>(d, a, N);                         \
    RoundTile<D>(d, N);                                                    \
  }
#define PTO_TILE_BINARY_DOUBLE(NAME, FN)                                   \
  template <int64_t N, typename D = float>                                 \
  inline void NAME(float* __restrict d, const float* __restrict a,         \
                   const float* __restrict b) {                            \
    MvecMapDouble2<PTO_TILE_MVEC_DFN2(FN), 1, 1>(d, a, b, N);              \
    RoundTile<D>(d, N);                                                    \
  }                                                                        \
  template <int64_t R, int64_t C, int kA, int kB, typename D = float>      \
  inline void NAME##Rows(float* __restrict d, const float* __restrict a,   \
                         const float* __restrict b) {                      \
    for (int64_t r = 0; r < R; ++r) {                                      \
      float* __restrict dr = d + r * C;                                    \
      MvecMapDouble2<PTO_TILE_MVEC_DFN2(FN), kA == kRow ? 0 : 1,           \
                     kB == kRow ? 0 : 1>(dr, SourceRow<kA, C>(a, r),       \
                                         SourceRow<kB, C>(b, r), C);       \
      RoundTile<D>(dr, C);                                                 \
    }                                                                      \
  }
#else
#define PTO_TILE_UNARY_DOUBLE(NAME, FN)                                    \
  PTO_TILE_UNARY(NAME, static_cast<float>(__builtin_##FN(static_cast<double>(a[i]))))
#define PTO_TILE_BINARY_DOUBLE(NAME, FN)                                   \
  PTO_TILE_BINARY(NAME, static_cast<float>(__builtin_##FN(static_cast<double>(x), \
                                                          static_cast<double>(y))))
#endif
PTO_TILE_UNARY_DOUBLE(TTan, tan)
PTO_TILE_UNARY_DOUBLE(TAsin, asin)
PTO_TILE_UNARY_DOUBLE(TAcos, acos)
PTO_TILE_UNARY_DOUBLE(TAtan, atan)
PTO_TILE_UNARY_DOUBLE(TSinh, sinh)
PTO_TILE_UNARY_DOUBLE(TCosh, cosh)
PTO_TILE_UNARY_DOUBLE(TAsinh, asinh)
PTO_TILE_UNARY_DOUBLE(TAcosh, acosh)
PTO_TILE_UNARY_DOUBLE(TAtanh, atanh)
PTO_TILE_UNARY_DOUBLE(TCbrt, cbrt)
PTO_TILE_BINARY_DOUBLE(TAtan2, atan2)
PTO_TILE_BINARY_DOUBLE(THypot, hypot)
#undef PTO_TILE_UNARY_DOUBLE
#undef PTO_TILE_BINARY_DOUBLE

// C fmod (the sign of the dividend; exact; x fmod 0 is NaN), glibc's
// fmodf's bits. Where |x / y| < 2^24 and y is finite (every quotient a
// kernel is likely to meet) it is computed branch-free in double, so the
// loop vectorizes: q = trunc(x / y) is exact or one off, q * y and x - q * y
// are exact (48 and at most 27 significant bits), one step moves a
// remainder of the wrong sign or of |y| or more back, and the zero takes x's
// sign. Other lanes (a quotient of 2^24 or more, inf, NaN, y = 0 or inf)
// are recomputed by fmodf.
inline float FmodDirect(float xf, float yf) {
  const double x = xf, y = yf;
  double r = x - __builtin_trunc(x / y) * y;
  const double ay = __builtin_fabs(y);
  const double s = __builtin_copysign(ay, x);
  // Both candidates computed, then selected: no branch, so it vectorizes.
  const double up = r + s;
  r = (r != 0) & ((r < 0) != (x < 0)) ? up : r;
  const double down = r - s;
  r = __builtin_fabs(r) >= ay ? down : r;
  return __builtin_copysignf(static_cast<float>(r), xf);
}
inline bool FmodIsDirect(float x, float y) {
  return __builtin_fabsf(x) < 0x1p24f * __builtin_fabsf(y) &&
         __builtin_fabsf(y) < __builtin_inff();
}
struct TFmodFn {
  static float Apply(float x, float y) { return FmodDirect(x, y); }
};
// d[i] = fmodf(a[i], b[i]) where FmodDirect does not apply (kAStep/kBStep
// 0: that operand is one value).
template <int kAStep, int kBStep>
inline void FmodOthers(float* __restrict d, const float* __restrict a,
                       const float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = a[i * kAStep], y = b[i * kBStep];
    if (!FmodIsDirect(x, y)) d[i] = __builtin_fmodf(x, y);
  }
}
template <int64_t N, typename D = float>
inline void TFmod(float* __restrict d, const float* __restrict a, const float* __restrict b) {
  for (int64_t i = 0; i < N; ++i) d[i] = FmodDirect(a[i], b[i]);
  FmodOthers<1, 1>(d, a, b, N);
  RoundTile<D>(d, N);
}
template <int64_t R, int64_t C, int kA, int kB, typename D = float>
inline void TFmodRows(float* __restrict d, const float* __restrict a,
                      const float* __restrict b) {
  BinaryRows<TFmodFn, R, C, kA, kB, float>(d, a, b);
  for (int64_t r = 0; r < R; ++r) {
    FmodOthers<kA == kRow ? 0 : 1, kB == kRow ? 0 : 1>(d + r * C, SourceRow<kA, C>(a, r),
                                                       SourceRow<kB, C>(b, r), C);
    RoundTile<D>(d + r * C, C);
  }
}

// signbit: 1.0f where the sign bit is set (-0.0, -inf, a negative NaN).
PTO_TILE_UNARY(TSignbit, __builtin_signbit(a[i]) ? 1.0f : 0.0f)

// dst = min(max(a, lo), hi) (numpy clip; NaN stays NaN).
template <int64_t N, typename D = float>
inline void TClip(float* __restrict d, const float* __restrict a, float lo,
                  float hi) {
  PTO_TILE_ROUNDED_LOOP(N, D, Min(Max(a[i], lo), hi));
}

#undef PTO_TILE_COMPARE
#undef PTO_TILE_COMPARE_SCALAR
#undef PTO_TILE_BINARY
#undef PTO_TILE_SCALAR
#undef PTO_TILE_UNARY
#undef PTO_TILE_UNARY_MVEC
#undef PTO_TILE_ROUNDED_LOOP

}  // namespace pto_tile

#endif  // PTO_TILE_ELEMENTWISE_H_
