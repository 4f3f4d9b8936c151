// PTO tile instructions (pto_tile.h): pto_tile's own f32 erf and erfc
// where the target has FMA (Erf8, Erfc8; Erf16, Erfc16 with AVX-512F).
#ifndef PTO_TILE_ERF_H_
#define PTO_TILE_ERF_H_

#include <stdint.h>

#include "pto_tile_exp.h"

namespace pto_tile {

// erf and erfc on x86-64-v3 (AVX2 + FMA), 8 lanes, branch-free, in place of
// libmvec's erff/erfcf (slow enough to make erfc over 1M values
// compute-bound). erf(|x|) is a degree-6 polynomial on each of 8
// pieces of width 0.55 centred at k * 0.55 (piece 0 is [0, 0.275), the last
// runs to 4.12, where |x| is clamped and the f32 erf is 1): k = round(|x| /
// 0.55) comes out of the 1.5 * 2^23 shift trick as the low bits vpermps
// reads, so each of the 7 coefficients is one vpermps of an 8-float table
// (port 5, beside the FMAs on ports 0/1), and u = |x| - k * 0.55 is one
// FMA. Piece 0 is a polynomial in |x| itself with no constant term,
// so erf(+-0) = +-0 and tiny x keep their relative accuracy. erf(x) takes
// x's sign; erfc(x) = 1 - erf(x) for x <= 2 (exact where erf is near 1),
// ErfcTail8 below for x > 2. The pieces stay within [0, 1] without a clamp,
// so erfc is within [0, 2]. Over all 2^32 inputs the error against glibc's
// double erf/erfc is at most 7.5e-8 for erf and 1.34e-7 for erfc
// (numerics/erf_check; the bound is 1e-6 absolute). 1 - erf alone would carry
// about 6e-8 absolute in erfc's tail (erfc(3.5) 4% off, 0 from x = 3.956);
// the tail form keeps erfc relatively accurate there too: at most 2.96e-7
// relative for every float x in (2, 9.19] (results >= FLT_MIN), subnormal
// results within 2 steps, 0 from 10.0546 as libm's f32 erfc. Coefficients:
// numerics/erf_fit.py. NaN stays NaN (vminps returns its second operand; its
// piece index is 0).
#ifndef PTO_TILE_FAST_ERF
#define PTO_TILE_FAST_ERF PTO_TILE_FAST_EXP
#endif
#if PTO_TILE_FAST_ERF
// sum_j c[j][k] u^j by Horner in FMAs, c[j][k] the coefficient of u^j on
// piece k (the piece per lane: the low 3 bits of k, through vpermps).
inline ExpF8 PiecePoly6(const float (&c)[7][8], ExpI8 k, ExpF8 u) {
  auto coef = [&c, k](int j) {
    ExpF8 v;
    __builtin_memcpy(&v, c[j], sizeof v);
    return __builtin_ia32_permvarsf256(v, k);
  };
  ExpF8 p = coef(6);
  // Unrolled: at -O2 GCC kept a 6-iteration loop (a counter, a branch and
  // a table walk per coefficient; a mask spilled to the stack beside it),
  // a large part of erfc's time.
#pragma GCC unroll 6
  for (int j = 5; j >= 0; --j) p = ExpFma(p, u, coef(j));
  return p;
}

// c[j][k]: the coefficient of u^j on piece k.
alignas(32) inline constexpr float kErfPieces[7][8] = {
    {0.0f, 0x1.206becp-1f, 0x1.c2aa3ep-1f, 0x1.f5f3cap-1f,  // u^0
     0x1.ff0bd6p-1f, 0x1.fff2dp-1f, 0x1.ffff9ap-1f, 0x1.fffffep-1f},
    {0x1.20dd76p+0f, 0x1.aaecbp-1f, 0x1.588e3ep-2f, 0x1.2fb386p-4f,  // u^1
     0x1.245c02p-7f, 0x1.3364d4p-11f, 0x1.610f3p-16f, 0x1.bb1636p-22f},
    {-0x1.933cacp-18f, -0x1.d59d86p-2f, -0x1.7b02f8p-2f, -0x1.f51bf8p-4f,  // u^2
     -0x1.419818p-6f, -0x1.a6a6p-10f, -0x1.233b06p-14f, -0x1.aa6a7ap-20f},
    {-0x1.8101cep-2f, -0x1.c1df96p-4f, 0x1.4611bcp-3f, 0x1.c21c52p-4f,  // u^3
     0x1.a70afap-6f, 0x1.69647ap-9f, 0x1.301844p-13f, 0x1.04f93ep-18f},
    {-0x1.9aee54p-10f, 0x1.76bf06p-3f, 0x1.258992p-5f, -0x1.986108p-5f,  // u^4
     -0x1.66387p-6f, -0x1.aaf308p-9f, -0x1.c6510ap-13f, -0x1.d3aa26p-18f},
    {0x1.f1f666p-4f, -0x1.93a126p-8f, -0x1.fcbf88p-5f, -0x1.c6589ap-11f,  // u^5
     0x1.7377e6p-7f, 0x1.744a2p-9f, 0x1.129eccp-12f, 0x1.6ea98p-17f},
    {-0x1.8c5aa8p-6f, -0x1.78b6a8p-5f, 0x1.a26142p-7f, 0x1.b2dd8ep-7f,  // u^6
     -0x1.3a783ep-9f, -0x1.b624cap-10f, -0x1.d089c8p-13f, -0x1.8e16d4p-17f},
};

// erf(|x|) in [0, 1]; NaN stays NaN.
inline ExpF8 ErfAbs8(ExpF8 x) {
  const ExpF8 ax = ExpFromBits(ExpBits(x) & 0x7FFFFFFF);
  const ExpF8 z = __builtin_ia32_minps256(ExpSplat<ExpF8>(4.12f), ax);
  const ExpF8 shift = ExpSplat<ExpF8>(0x1.8p23f);
  const ExpF8 kd = ExpFma(z, ExpSplat<ExpF8>(1.0f / 0.55f), shift);  // k + shift
  const ExpI8 k = ExpBits(kd);  // vpermps reads the low 3 bits: k
  const ExpF8 u = ExpFma(kd - shift, ExpSplat<ExpF8>(-0.55f), z);
  return PiecePoly6(kErfPieces, k, u);
}

inline ExpF8 Erf8(ExpF8 x) {
  const ExpI8 sign = ExpBits(x) & static_cast<int32_t>(0x80000000u);
  return ExpFromBits(ExpBits(ErfAbs8(x)) | sign);
}
// erfc(x) for x in (2, 10.06], with relative accuracy where 1 - erf has
// few correct digits: exp(-x^2) erfcx(x), erfcx a degree-6 polynomial in
// u = x - (m + 0.5) on each piece [m, m + 1], m = 2..9, fitted for relative
// error (at most 1.4e-7 in f32 Horner form; numerics/erfc_tail_fit.py).
// m = round(x - 0.5) comes out of the shift trick as in ErfAbs8 and vpermps
// reads m mod 8 (piece m sits at index m & 7); x is clamped to [2, 10.06]
// (the f32 erfc is 0 from 10.0546; inf gives 0), the index to 9.99 (the
// subnormal results past it use piece 9). x^2 = h + l exactly (l by FMA)
// and exp(-x^2) = exp(-h) (1 - l): h's rounding alone (up to 2^-18 at
// x = 10) would cost more than the whole budget. exp(-h) is ExpSteps'
// reduction and its former degree-7 polynomial (the one this tail's
// accuracy was checked with over every float) scaled by 2^64 (n + 64 >= -82 keeps it normal)
// and the table by 2^-64, so the one product rounds once into subnormals:
// no range test, no second form. Lanes x <= 2 and NaN are discarded by
// Erfc8. c[j][k]: 2^-64 times the coefficient of u^j on piece m, k = m & 7.
alignas(32) inline constexpr float kErfcTailPieces[7][8] = {
    {0x1.0e078p-68f, 0x1.e3db9cp-69f, 0x1.afbb4p-67f, 0x1.3e0a9ap-67f,  // u^0
     0x1.f5b2ap-68f, 0x1.9d8a9p-68f, 0x1.5f75c4p-68f, 0x1.31743p-68f},
    {-0x1.f57caep-72f, -0x1.93108cp-72f, -0x1.3086fcp-68f, -0x1.5285dcp-69f,  // u^1
     -0x1.aa3ebap-70f, -0x1.238ca8p-70f, -0x1.a6e2dp-71f, -0x1.404456p-71f},
    {0x1.cea23p-75f, 0x1.4dfd34p-75f, 0x1.989592p-70f, 0x1.5d5816p-71f,  // u^2
     0x1.62c12ep-72f, 0x1.95252cp-73f, 0x1.f75ef8p-74f, 0x1.4d07bcp-74f},
    {-0x1.a80e08p-78f, -0x1.134f78p-78f, -0x1.06118p-71f, -0x1.5e4b72p-73f,  // u^3
     -0x1.2187dap-74f, -0x1.1593f4p-75f, -0x1.28766ap-76f, -0x1.57823p-77f},
    {0x1.824174p-81f, 0x1.c38f8ap-82f, 0x1.434214p-73f, 0x1.5624b4p-75f,  // u^4
     0x1.cffe3ep-77f, 0x1.774b2ep-78f, 0x1.59b06p-79f, 0x1.5f890cp-80f},
    {-0x1.5fbf68p-84f, -0x1.723faap-85f, -0x1.8f902ap-75f, -0x1.4e59aap-77f,  // u^5
     -0x1.73c72ap-79f, -0x1.fb4da6p-81f, -0x1.92fd3cp-82f, -0x1.67a98cp-83f},
    {0x1.3c70dap-87f, 0x1.2c9318p-88f, 0x1.c94d8p-77f, 0x1.3680aep-79f,  // u^6
     0x1.1f7cb6p-81f, 0x1.4e1a82p-83f, 0x1.ccac88p-85f, 0x1.6a6746p-86f},
};

inline ExpF8 ErfcTail8(ExpF8 x) {
  const ExpF8 z = __builtin_ia32_minps256(ExpSplat<ExpF8>(10.06f),
                                          __builtin_ia32_maxps256(x, ExpSplat<ExpF8>(2.0f)));
  const ExpF8 zh = __builtin_ia32_minps256(z, ExpSplat<ExpF8>(9.99f)) - 0.5f;  // exact
  const ExpF8 shift = ExpSplat<ExpF8>(0x1.8p23f);
  const ExpF8 kd = zh + shift;  // m + shift
  const ExpI8 k = ExpBits(kd);  // vpermps reads the low 3 bits: m & 7
  const ExpF8 u = zh - (kd - shift);  // x - (m + 0.5), exact
  ExpF8 p = PiecePoly6(kErfcTailPieces, k, u);  // erfcx(z) * 2^-64
  const ExpF8 h = z * z;
  const ExpF8 l = ExpFma(z, z, -h);  // z * z - h, exactly
  const ExpF8 kn = ExpFma(h, ExpSplat<ExpF8>(-0x1.715476p+0f), shift);  // n + shift
  const ExpF8 n = kn - shift;
  ExpF8 r = ExpFma(n, ExpSplat<ExpF8>(-0x1.62e430p-1f), -h);  // exact
  r = ExpFma(n, ExpSplat<ExpF8>(0x1.05c610p-29f), r);
  ExpF8 q = ExpFma(r, ExpSplat<ExpF8>(0x1.a17eaap-13f), ExpSplat<ExpF8>(0x1.6da820p-10f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(0x1.1110a6p-7f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(0x1.555464p-5f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(0x1.555556p-3f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(0.5f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(1.0f));
  q = ExpFma(q, r, ExpSplat<ExpF8>(1.0f));
  const ExpF8 eh = ExpFromBits(ExpBits(q) + ((ExpBits(kn) - (0x4B400000 - 64)) << 23));
  const ExpF8 e = eh * p;  // z = 10.06: 6.2e-46 rounds to 0
  return ExpFma(-e, l, e);
}

// 1 - erf(x), and ErfcTail8 for lanes x > 2. A vector with no such lane
// skips the tail (one movemask test per vector, as Exp8 does: inputs
// within [-2, 2] cost what 1 - erf costs, but for that test); one with
// such a lane computes both and picks per lane, so a lane's result never
// depends on its neighbours (or on the tile shape).
inline ExpF8 Erfc8(ExpF8 x) {
  const ExpF8 v = 1.0f - Erf8(x);
  const ExpI8 tail = x > 2.0f;  // false for NaN
  if (__builtin_expect(__builtin_ia32_movmskps256(reinterpret_cast<ExpF8>(tail)) == 0, 1)) {
    return v;
  }
  return tail ? ErfcTail8(x) : v;
}

#if defined(__AVX512F__)
// 16 lanes at a time (AVX-512F, x86-64-v4). vpermps on zmm reads 16-entry
// tables. Erf16 takes Erf8's pieces, coefficients and steps in the same
// order (kErfPieces16 holds each piece k at k and k + 8), so it gives Erf8's
// bits for every input; ErfcTail16 likewise (the tail's piece m sits at m).
// Erfc16's main path (x <= 2) is its own: erfc itself on 16 signed pieces
// of width 0.37 centred at k * 0.37, k = round(x / 0.37) = -10..5 (x clamped
// below at -3.85, past which the f32 erfc is 2), a degree-5 polynomial in
// u = x - k * 0.37 each (numerics/erfc16_fit.py): k's low 4 bits index the
// tables directly, so there is no |x|, no sign and no 1 - erf, and one
// coefficient fewer: 17 vector operations per 16 values where 1 - Erf16
// takes 22. Over all 2^32 inputs its error against glibc's double erfc is
// at most 1.39e-7 absolute (v3's 1 - erf: 1.34e-7; numerics/erf_check_v4
// check), erfc(+-0) = 1, erfc(-inf) = 2; lanes x > 2 take the tail, as
// Erfc8's do, with its bits.
template <int kCoefs>
struct PieceTable16 {
  float c[kCoefs][16];
};
constexpr PieceTable16<7> Widen16(const float (&c)[7][8]) {
  PieceTable16<7> t{};
  for (int j = 0; j < 7; ++j) {
    for (int i = 0; i < 16; ++i) t.c[j][i] = c[j][i & 7];
  }
  return t;
}
alignas(64) inline constexpr PieceTable16<7> kErfPieces16 = Widen16(kErfPieces);
alignas(64) inline constexpr PieceTable16<7> kErfcTailPieces16 = Widen16(kErfcTailPieces);
// c[j][k & 15]: the coefficient of u^j on Erfc16's piece k (-10..5).
alignas(64) inline constexpr PieceTable16<6> kErfcPieces16 = {{
    {0x1.p+0f, 0x1.339b48p-1f, 0x1.2e68ep-2f, 0x1.dd0c76p-4f,  // u^0
     0x1.29bee4p-5f, 0x1.23460ep-7f, 0x1.fffffep+0f, 0x1.ffffd6p+0f,
     0x1.fffe24p+0f, 0x1.ffefa6p+0f, 0x1.ff911cp+0f, 0x1.fdb974p+0f,
     0x1.f6b208p+0f, 0x1.e22f38p+0f, 0x1.b465c8p+0f, 0x1.66325cp+0f},
    {-0x1.20dd74p+0f, -0x1.f7d058p-1f, -0x1.4e1f4ep-1f, -0x1.510628p-2f,  // u^1
     -0x1.0286f6p-3f, -0x1.2da0a2p-5f, -0x1.5789c8p-20f, -0x1.214d26p-16f,
     -0x1.72a98ap-13f, -0x1.692a3cp-10f, -0x1.0ba026p-7f, -0x1.2da0c4p-5f,
     -0x1.0286f6p-3f, -0x1.510628p-2f, -0x1.4e1f4ep-1f, -0x1.f7d058p-1f},
    {-0x1.e784a6p-48f, 0x1.74c9fcp-2f, 0x1.ee7b66p-2f, 0x1.761b2cp-2f,  // u^2
     0x1.7ea5a8p-3f, 0x1.170384p-4f, -0x1.3d0038p-18f, -0x1.e0a304p-15f,
     -0x1.11fcdcp-11f, -0x1.d37fccp-9f, -0x1.29092ap-6f, -0x1.170512p-4f,
     -0x1.7ea5a8p-3f, -0x1.761b2cp-2f, -0x1.ee7b66p-2f, -0x1.74c9fcp-2f},
    {0x1.812024p-2f, 0x1.e7cf34p-3f, -0x1.52e184p-6f, -0x1.48f37cp-3f,  // u^3
     -0x1.235ae4p-3f, -0x1.25eb48p-4f, -0x1.7612f6p-17f, -0x1.fdce78p-14f,
     -0x1.fe0dp-11f, -0x1.75a17p-8f, -0x1.8b12a8p-6f, -0x1.25dd9ep-4f,
     -0x1.235ae4p-3f, -0x1.48f37cp-3f, -0x1.52e184p-6f, 0x1.e7cf34p-3f},
    {0x1.970b3ep-42f, -0x1.4d98ecp-3f, -0x1.37072ep-3f, -0x1.113dbcp-5f,  // u^4
     0x1.57ddcap-5f, 0x1.640e2cp-5f, -0x1.531c0ep-16f, -0x1.94bc76p-13f,
     -0x1.578454p-10f, -0x1.9e1434p-8f, -0x1.55bfe4p-6f, -0x1.63793cp-5f,
     -0x1.57ddcap-5f, 0x1.113dbcp-5f, 0x1.37072ep-3f, 0x1.4d98ecp-3f},
    {-0x1.c7a692p-4f, -0x1.7d84e8p-5f, 0x1.9c874cp-5f, 0x1.fbab96p-5f,  // u^5
     0x1.1ef94ep-6f, -0x1.451eb2p-7f, -0x1.eb1e38p-16f, -0x1.c5fa82p-13f,
     -0x1.444838p-10f, -0x1.376cc8p-8f, -0x1.6bca5ep-7f, -0x1.55a678p-7f,
     0x1.1ef94ep-6f, 0x1.fbab96p-5f, 0x1.9c874cp-5f, -0x1.7d84e8p-5f},
}};

// sum_j c[j][k] u^j by Horner in FMAs, k per lane (its low 4 bits).
template <int kCoefs>
inline ExpF16 PiecePoly16(const PieceTable16<kCoefs>& t, ExpI16 k, ExpF16 u) {
  auto coef = [&t, k](int j) {
    ExpF16 v;
    __builtin_memcpy(&v, t.c[j], sizeof v);
    return __builtin_ia32_permvarsf512_mask(v, k, v, -1);
  };
  ExpF16 p = coef(kCoefs - 1);
#pragma GCC unroll 8
  for (int j = kCoefs - 2; j >= 0; --j) p = ExpFma(p, u, coef(j));
  return p;
}
inline ExpF16 Min16(ExpF16 a, ExpF16 b) {  // b where either is NaN (vminps)
  return __builtin_ia32_minps512_mask(a, b, a, -1, 4);
}
inline ExpF16 Max16(ExpF16 a, ExpF16 b) {  // b where either is NaN (vmaxps)
  return __builtin_ia32_maxps512_mask(a, b, a, -1, 4);
}

inline ExpF16 ErfAbs16(ExpF16 x) {
  const ExpF16 ax = ExpFromBits(ExpBits(x) & 0x7FFFFFFF);
  const ExpF16 z = Min16(ExpSplat<ExpF16>(4.12f), ax);
  const ExpF16 shift = ExpSplat<ExpF16>(0x1.8p23f);
  const ExpF16 kd = ExpFma(z, ExpSplat<ExpF16>(1.0f / 0.55f), shift);  // k + shift
  const ExpI16 k = ExpBits(kd);  // vpermps reads the low 4 bits: k
  const ExpF16 u = ExpFma(kd - shift, ExpSplat<ExpF16>(-0.55f), z);
  return PiecePoly16(kErfPieces16, k, u);
}

inline ExpF16 Erf16(ExpF16 x) {
  const ExpI16 sign = ExpBits(x) & static_cast<int32_t>(0x80000000u);
  return ExpFromBits(ExpBits(ErfAbs16(x)) | sign);
}

inline ExpF16 ErfcTail16(ExpF16 x) {
  const ExpF16 z = Min16(ExpSplat<ExpF16>(10.06f), Max16(x, ExpSplat<ExpF16>(2.0f)));
  const ExpF16 zh = Min16(z, ExpSplat<ExpF16>(9.99f)) - 0.5f;  // exact
  const ExpF16 shift = ExpSplat<ExpF16>(0x1.8p23f);
  const ExpF16 kd = zh + shift;  // m + shift
  const ExpI16 k = ExpBits(kd);  // vpermps reads the low 4 bits: m
  const ExpF16 u = zh - (kd - shift);  // x - (m + 0.5), exact
  ExpF16 p = PiecePoly16(kErfcTailPieces16, k, u);  // erfcx(z) * 2^-64
  const ExpF16 h = z * z;
  const ExpF16 l = ExpFma(z, z, -h);  // z * z - h, exactly
  const ExpF16 kn = ExpFma(h, ExpSplat<ExpF16>(-0x1.715476p+0f), shift);  // n + shift
  const ExpF16 n = kn - shift;
  ExpF16 r = ExpFma(n, ExpSplat<ExpF16>(-0x1.62e430p-1f), -h);  // exact
  r = ExpFma(n, ExpSplat<ExpF16>(0x1.05c610p-29f), r);
  ExpF16 q = ExpFma(r, ExpSplat<ExpF16>(0x1.a17eaap-13f), ExpSplat<ExpF16>(0x1.6da820p-10f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(0x1.1110a6p-7f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(0x1.555464p-5f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(0x1.555556p-3f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(0.5f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(1.0f));
  q = ExpFma(q, r, ExpSplat<ExpF16>(1.0f));
  const ExpF16 eh = ExpFromBits(ExpBits(q) + ((ExpBits(kn) - (0x4B400000 - 64)) << 23));
  const ExpF16 e = eh * p;
  return ExpFma(-e, l, e);
}

// erfc for x <= 2 (Erfc16's main path; any value for larger x, which the
// tail replaces). NaN stays NaN: vmaxps returns its second operand.
inline ExpF16 ErfcHead16(ExpF16 x) {
  const ExpF16 z = Max16(ExpSplat<ExpF16>(-3.85f), x);
  const ExpF16 shift = ExpSplat<ExpF16>(0x1.8p23f);
  const ExpF16 kd = ExpFma(z, ExpSplat<ExpF16>(1.0f / 0.37f), shift);  // k + shift
  const ExpI16 k = ExpBits(kd);  // vpermps reads the low 4 bits: k mod 16
  const ExpF16 u = ExpFma(kd - shift, ExpSplat<ExpF16>(-0.37f), z);
  return PiecePoly16(kErfcPieces16, k, u);
}

// One compare into a mask register; a vector with no lane x > 2 skips the
// tail, one with such a lane blends the two per lane (as Erfc8).
inline ExpF16 Erfc16(ExpF16 x) {
  const ExpF16 v = ErfcHead16(x);
  const unsigned short tail =
      __builtin_ia32_cmpps512_mask(x, ExpSplat<ExpF16>(2.0f), 0x1E /* _CMP_GT_OQ */, -1, 4);
  if (__builtin_expect(tail == 0, 1)) return v;
  return __builtin_ia32_blendmps_512_mask(v, ErfcTail16(x), tail);
}
#endif

#endif

}  // namespace pto_tile

#endif  // PTO_TILE_ERF_H_
