// PTO tile instructions (pto_tile.h): the OCP FP8 storage types. Each is one
// byte in GM; a UB tile holds its values as f32 (every FP8 value is an f32),
// so loads decode exactly and stores of UB values encode exactly. Only a
// conversion rounds (TCVT to an FP8 tile, CvtTo in pto_tile_convert.h):
//
//   fp8e4m3  OCP E4M3 ("fn"): bias 7, 3 mantissa bits, no infinities; NaN is
//            0x7f/0xff; largest finite 448; subnormals down to 2^-9. From f32:
//            round to nearest even; a result past 448 (|x| >= 464 rounds up
//            past it) and +-inf give NaN of x's sign.
//   fp8e5m2  OCP E5M2: bias 15, 2 mantissa bits, IEEE-like: inf 0x7c/0xfc,
//            NaN above it; largest finite 57344; subnormals down to 2^-16.
//            From f32: round to nearest even, overflow to inf, NaN to 0x7e
//            of x's sign.
//   fp8e8m0  OCP E8M0 scale: 2^(code - 127) for codes 0..254, 0xff NaN; no
//            sign and no zero. From f32: the sign is dropped, |x| rounds to
//            the nearest power of two (ties, 1.5 * 2^e, to the even code),
//            values below 2^-127 (zero included) give 2^-127, a result past
//            2^127 and inf/NaN give NaN.
//
// Saturating conversions (pypto.cast's satmode) clamp to the largest finite
// value before the conversion.
#ifndef PTO_TILE_FP8_H_
#define PTO_TILE_FP8_H_

#include <stdint.h>

namespace pto_tile {

struct fp8e4m3 {
  uint8_t bits;
};
struct fp8e5m2 {
  uint8_t bits;
};
struct fp8e8m0 {
  uint8_t bits;
};

namespace fp8_detail {

inline float F32(uint32_t w) {
  float f;
  __builtin_memcpy(&f, &w, sizeof f);
  return f;
}
inline uint32_t Bits(float f) {
  uint32_t w;
  __builtin_memcpy(&w, &f, sizeof w);
  return w;
}
// 2^e as an f32, for -126 <= e <= 127.
inline float Pow2(int e) { return F32(static_cast<uint32_t>(e + 127) << 23); }

// A sign-magnitude float format of one byte: M mantissa bits, exponent bias
// B; kFn: E4M3's "fn" form (no infinities, only all-ones is NaN).
template <int M, int B, bool kFn>
struct Format {
  static constexpr int kMinExp = 1 - B;  // of the smallest normal
  static constexpr uint8_t kNan = kFn ? 0x7f : 0x7e;
  static constexpr uint8_t kInf = kFn ? 0x7f : 0x7c;  // fn: NaN
  static constexpr uint8_t kMaxCode = kFn ? 0x7e : 0x7b;

  static float Decode(uint8_t c) {
    const uint32_t sign = static_cast<uint32_t>(c & 0x80) << 24;
    const int e = (c >> M) & ((1 << (7 - M)) - 1);
    const uint32_t m = c & ((1u << M) - 1);
    const int all_ones = (1 << (7 - M)) - 1;
    if (kFn ? (c & 0x7f) == 0x7f : e == all_ones) {
      return F32(sign | (kFn || m != 0 ? 0x7FC00000u : 0x7F800000u));
    }
    if (e == 0) {
      const float v = static_cast<float>(m) * Pow2(kMinExp - M);
      return F32(sign | Bits(v));
    }
    return F32(sign | (static_cast<uint32_t>(e - B + 127) << 23) | (m << (23 - M)));
  }

  static uint8_t Encode(float f) {
    const uint32_t w = Bits(f);
    const uint8_t sign = static_cast<uint8_t>((w >> 24) & 0x80);
    const uint32_t a = w & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | kNan;
    if (a == 0x7F800000u) return sign | kInf;
    const float x = F32(a);
    int e = static_cast<int>(a >> 23) - 127;  // f32 subnormals: -127
    if (e < kMinExp) e = kMinExp;
    // |x| / quantum is below 2^(M + 2): exact; rint rounds to nearest even
    // (the default rounding mode; no -ffast-math).
    const float q = Pow2(e - M);
    const float r = __builtin_rintf(x / q) * q;
    if (r > Decode(kMaxCode)) return sign | kInf;
    if (r < Pow2(kMinExp)) {
      return sign | static_cast<uint8_t>(r / Pow2(kMinExp - M));
    }
    const int re = static_cast<int>(Bits(r) >> 23) - 127;
    const uint32_t m = (Bits(r) >> (23 - M)) & ((1u << M) - 1);
    return sign | static_cast<uint8_t>((static_cast<uint32_t>(re + B) << M) | m);
  }
};

using E4M3 = Format<3, 7, true>;
using E5M2 = Format<2, 15, false>;

}  // namespace fp8_detail

inline float Fp8E4M3ToFloat(uint8_t c) { return fp8_detail::E4M3::Decode(c); }
inline uint8_t FloatToFp8E4M3(float f) { return fp8_detail::E4M3::Encode(f); }
inline float Fp8E5M2ToFloat(uint8_t c) { return fp8_detail::E5M2::Decode(c); }
inline uint8_t FloatToFp8E5M2(float f) { return fp8_detail::E5M2::Encode(f); }

inline float Fp8E8M0ToFloat(uint8_t c) {
  if (c == 0xFF) return fp8_detail::F32(0x7FC00000u);
  if (c == 0) return fp8_detail::F32(0x00400000u);  // 2^-127, an f32 subnormal
  return fp8_detail::F32(static_cast<uint32_t>(c) << 23);
}

inline uint8_t FloatToFp8E8M0(float f) {
  const uint32_t a = fp8_detail::Bits(f) & 0x7FFFFFFFu;
  if (a >= 0x7F800000u) return 0xFF;
  if (a < 0x00800000u) return a > 0x00600000u ? 1 : 0;  // between 2^-127 and 2^-126
  uint32_t e = a >> 23;
  const uint32_t m = a & 0x7FFFFFu;
  if (m > 0x400000u || (m == 0x400000u && (e & 1u) != 0)) ++e;
  return e >= 0xFF ? 0xFF : static_cast<uint8_t>(e);
}

}  // namespace pto_tile

#endif  // PTO_TILE_FP8_H_
