// PTO tile instructions (pto_tile.h): elementwise instructions on int64
// and double tiles (INT32, INT64 and DOUBLE tensors).
#ifndef PTO_TILE_INT_H_
#define PTO_TILE_INT_H_

#include <stdint.h>

#include "pto_tile_convert.h"
#include "pto_tile_elementwise.h"

namespace pto_tile {

// Integer and double arithmetic (add sub mul maximum minimum neg abs on
// INT32, INT64 and DOUBLE tensors): the same instruction names over int64 or
// double tiles. Integers compute in two's complement on uint64 (wrapping, as
// torch does) and D (int32_t for INT32 tensors) wraps the result to the
// tensor's width, so a tile keeps holding values of its dtype. Doubles
// compute in double; maximum/minimum propagate NaN as for f32.
inline uint64_t IntFloorDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return 0 - static_cast<uint64_t>(a);  // MIN // -1 wraps
  const int64_t q = a / b, r = a % b;
  return static_cast<uint64_t>(r != 0 && (r < 0) != (b < 0) ? q - 1 : q);
}
inline uint64_t IntRem(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  const int64_t r = a % b;
  return static_cast<uint64_t>(r != 0 && (r < 0) != (b < 0) ? r + b : r);
}
inline uint64_t IntFmod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return static_cast<uint64_t>(a % b);
}
inline uint64_t IntGcd(uint64_t a, uint64_t b) {
  a = static_cast<int64_t>(a) < 0 ? 0 - a : a;
  b = static_cast<int64_t>(b) < 0 ? 0 - b : b;
  while (a != 0) {
    const uint64_t c = a;
    a = b % a;
    b = c;
  }
  return b;
}
// Shifts as torch's on x86: the count taken modulo 32 for types up to 32
// bits (torch shifts them as int), modulo 64 for INT64.
template <typename D>
constexpr int64_t kShiftMask = sizeof(D) <= 4 ? 31 : 63;
template <typename D>
inline uint64_t IntShl(uint64_t a, int64_t count) {
  return a << (count & kShiftMask<D>);
}
template <typename D>
inline uint64_t IntShr(int64_t a, int64_t count) {
  return static_cast<uint64_t>(a >> (count & kShiftMask<D>));
}
template <typename D>
inline int64_t WrapResult(uint64_t v) {
  if constexpr (sizeof(D) < sizeof(int64_t)) {
    return WrapTo<D>(static_cast<int64_t>(v));
  } else {
    return static_cast<int64_t>(v);
  }
}
#define PTO_TILE_INT_BINARY(NAME, EXPR)                                    \
  template <int64_t N, typename D = int64_t>                               \
  inline void NAME(int64_t* __restrict d, const int64_t* __restrict a,     \
                   const int64_t* __restrict b) {                          \
    for (int64_t i = 0; i < N; ++i) {                                      \
      const uint64_t x = static_cast<uint64_t>(a[i]);                      \
      const uint64_t y = static_cast<uint64_t>(b[i]);                      \
      d[i] = WrapResult<D>(EXPR);                                          \
    }                                                                      \
  }
#define PTO_TILE_INT_UNARY(NAME, EXPR)                                     \
  template <int64_t N, typename D = int64_t>                               \
  inline void NAME(int64_t* __restrict d, const int64_t* __restrict a) {   \
    for (int64_t i = 0; i < N; ++i) {                                      \
      const uint64_t x = static_cast<uint64_t>(a[i]);                      \
      d[i] = WrapResult<D>(EXPR);                                          \
    }                                                                      \
  }
PTO_TILE_INT_BINARY(TAdd, x + y)
PTO_TILE_INT_BINARY(TSub, x - y)
PTO_TILE_INT_BINARY(TMul, x * y)
PTO_TILE_INT_BINARY(TMax, static_cast<int64_t>(x) > static_cast<int64_t>(y) ? x : y)
PTO_TILE_INT_BINARY(TMin, static_cast<int64_t>(x) < static_cast<int64_t>(y) ? x : y)
// Floor division and remainder (torch's div_floor_integer, remainder); a
// zero divisor gives 0 (torch raises) and MIN // -1 wraps to MIN (remainder
// 0), computed on uint64 so nothing overflows.
PTO_TILE_INT_BINARY(TFloorDiv, IntFloorDiv(static_cast<int64_t>(x), static_cast<int64_t>(y)))
PTO_TILE_INT_BINARY(TRem, IntRem(static_cast<int64_t>(x), static_cast<int64_t>(y)))
PTO_TILE_INT_UNARY(TNeg, 0 - x)
PTO_TILE_INT_UNARY(TAbs, static_cast<int64_t>(x) < 0 ? 0 - x : x)
// C fmod of integers (the sign of the dividend; a zero divisor gives 0,
// where torch raises; MIN fmod -1 is 0).
PTO_TILE_INT_BINARY(TFmod, IntFmod(static_cast<int64_t>(x), static_cast<int64_t>(y)))
// gcd of |x| and |y| (torch's calc_gcd: gcd(0, 0) = 0; |MIN| wraps to MIN).
PTO_TILE_INT_BINARY(TGcd, IntGcd(x, y))
// Bitwise ops on the two's complement values; shifts as torch's (IntShl).
PTO_TILE_INT_BINARY(TAnd, x & y)
PTO_TILE_INT_BINARY(TOr, x | y)
PTO_TILE_INT_BINARY(TXor, x ^ y)
PTO_TILE_INT_UNARY(TNot, ~x)
PTO_TILE_INT_BINARY(TShl, IntShl<D>(x, static_cast<int64_t>(y)))
PTO_TILE_INT_BINARY(TShr, IntShr<D>(static_cast<int64_t>(x), static_cast<int64_t>(y)))
#undef PTO_TILE_INT_BINARY
#undef PTO_TILE_INT_UNARY

#define PTO_TILE_DOUBLE_BINARY(NAME, EXPR)                                 \
  template <int64_t N, typename D = double>                                \
  inline void NAME(double* __restrict d, const double* __restrict a,       \
                   const double* __restrict b) {                           \
    for (int64_t i = 0; i < N; ++i) {                                      \
      const double x = a[i], y = b[i];                                     \
      d[i] = (EXPR);                                                       \
    }                                                                      \
  }
PTO_TILE_DOUBLE_BINARY(TAdd, x + y)
PTO_TILE_DOUBLE_BINARY(TSub, x - y)
PTO_TILE_DOUBLE_BINARY(TMul, x * y)
PTO_TILE_DOUBLE_BINARY(TDiv, x / y)
PTO_TILE_DOUBLE_BINARY(TPow, __builtin_pow(x, y))
PTO_TILE_DOUBLE_BINARY(TMax, (x != x || x > y) ? x : y)
PTO_TILE_DOUBLE_BINARY(TMin, (x != x || x < y) ? x : y)
PTO_TILE_DOUBLE_BINARY(TFloorDiv, FloorDivOf<double>(x, y))
PTO_TILE_DOUBLE_BINARY(TRem, RemOf<double>(x, y))
PTO_TILE_DOUBLE_BINARY(TFmod, __builtin_fmod(x, y))
#undef PTO_TILE_DOUBLE_BINARY
template <int64_t N, typename D = double>
inline void TNeg(double* __restrict d, const double* __restrict a) {
  for (int64_t i = 0; i < N; ++i) d[i] = -a[i];
}
template <int64_t N, typename D = double>
inline void TAbs(double* __restrict d, const double* __restrict a) {
  for (int64_t i = 0; i < N; ++i) d[i] = __builtin_fabs(a[i]);
}

// DOUBLE with a scalar: the scalar is a double immediate (x * 0.1 keeps
// double precision; f32 tiles take f32 immediates).
#define PTO_TILE_DOUBLE_SCALAR(NAME, EXPR)                                 \
  template <int64_t N, typename D = double>                                \
  inline void NAME(double* __restrict d, const double* __restrict a,       \
                   double s) {                                             \
    for (int64_t i = 0; i < N; ++i) {                                      \
      const double x = a[i];                                               \
      d[i] = (EXPR);                                                       \
    }                                                                      \
  }
PTO_TILE_DOUBLE_SCALAR(TAddS, x + s)
PTO_TILE_DOUBLE_SCALAR(TSubS, x - s)
PTO_TILE_DOUBLE_SCALAR(TMulS, x * s)
PTO_TILE_DOUBLE_SCALAR(TDivS, x / s)
PTO_TILE_DOUBLE_SCALAR(TRSubS, s - x)
PTO_TILE_DOUBLE_SCALAR(TRDivS, s / x)
PTO_TILE_DOUBLE_SCALAR(TPowS, __builtin_pow(x, s))
PTO_TILE_DOUBLE_SCALAR(TRPowS, __builtin_pow(s, x))
PTO_TILE_DOUBLE_SCALAR(TMaxS, (x != x || x > s) ? x : s)
PTO_TILE_DOUBLE_SCALAR(TMinS, (x != x || x < s) ? x : s)
#undef PTO_TILE_DOUBLE_SCALAR

// sign and clip on int64 tiles (INT32, INT64: results stay in the dtype's
// range) and double tiles. clip's bounds arrive as double immediates: an
// integer bound is exact up to 2**53, and -inf/inf (an absent bound) clips
// nothing; NaN stays NaN for doubles.
template <int64_t N, typename D = int64_t>
inline void TSign(int64_t* __restrict d, const int64_t* __restrict a) {
  for (int64_t i = 0; i < N; ++i) d[i] = (a[i] > 0) - (a[i] < 0);
}
template <int64_t N, typename D = double>
inline void TSign(double* __restrict d, const double* __restrict a) {
  for (int64_t i = 0; i < N; ++i) {
    const double x = a[i];
    d[i] = x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
  }
}
template <int64_t N, typename D = int64_t>
inline void TClip(int64_t* __restrict d, const int64_t* __restrict a, double lo,
                  double hi) {
  // Integer bounds: the smallest integer >= lo, the largest <= hi, held
  // within int64 (a bound past the range clips nothing).
  const int64_t l = lo <= -0x1p63 ? INT64_MIN : lo >= 0x1p63 ? INT64_MAX
                    : static_cast<int64_t>(__builtin_ceil(lo));
  const int64_t h = hi >= 0x1p63 ? INT64_MAX : hi <= -0x1p63 ? INT64_MIN
                    : static_cast<int64_t>(__builtin_floor(hi));
  for (int64_t i = 0; i < N; ++i) {
    const int64_t x = a[i] < l ? l : a[i];
    d[i] = x > h ? h : x;
  }
}
template <int64_t N, typename D = double>
inline void TClip(double* __restrict d, const double* __restrict a, double lo,
                  double hi) {
  for (int64_t i = 0; i < N; ++i) {
    const double x = a[i];
    const double y = (x != x || x > lo) ? x : lo;
    d[i] = (y != y || y < hi) ? y : hi;
  }
}

}  // namespace pto_tile

#endif  // PTO_TILE_INT_H_
