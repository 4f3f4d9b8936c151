// PTO tile instructions (pto_tile.h): element types and conversions. The
// GM element types (half, bf16, boolean and the C integer types), the UB
// storage type each computes in (Elem<T>), the conversions between them
// (CvtTo: TCVT, torch's rules), runs of f16/bf16 conversions, and the
// rounding of an f32 result to its tile's type (Round, RoundTile).
//
// f16 (IEEE binary16) computes in f32: loads widen exactly, and every
// instruction with an f16 destination rounds its result to nearest even
// (overflow to inf, NaN stays NaN), with integer and f32 operations only (no
// _Float16 needed). Stores of f16 tiles are then exact. bf16 works the same
// way. Where the target has F16C (x86-64-v3), f16 loads, stores and result
// rounding run 8 at a time with vcvtph2ps/vcvtps2ph (16 at a time with
// AVX-512F, x86-64-v4), bit-identical to the scalar path.
#ifndef PTO_TILE_CONVERT_H_
#define PTO_TILE_CONVERT_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_fp8.h"

namespace pto_tile {

struct half {
  uint16_t bits;
};

inline float FloatFromBits(uint32_t w) {
  float f;
  __builtin_memcpy(&f, &w, sizeof f);
  return f;
}

inline uint32_t BitsFromFloat(float f) {
  uint32_t w;
  __builtin_memcpy(&w, &f, sizeof w);
  return w;
}

// Exact binary16 -> binary32 (normals, subnormals, inf, NaN).
inline float HalfToFloat(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  // Normals, inf, NaN: shift exponent and mantissa into place, rebias by
  // scaling with 2^-112.
  const uint32_t exp_offset = 0xE0u << 23;
  const float normalized =
      FloatFromBits((two_w >> 4) + exp_offset) * 0x1.0p-112f;
  // Subnormals: build 0.5 + m * 2^-24 exactly and subtract 0.5.
  const uint32_t magic_mask = 126u << 23;
  const float denormalized = FloatFromBits((two_w >> 17) | magic_mask) - 0.5f;
  // Select without branches so loops over tiles vectorize.
  const uint32_t is_denormal = 0u - static_cast<uint32_t>(two_w < (1u << 27));
  const uint32_t result = sign | (BitsFromFloat(denormalized) & is_denormal) |
                          (BitsFromFloat(normalized) & ~is_denormal);
  return FloatFromBits(result);
}

// binary32 -> binary16, round to nearest even. The f32 additions below round
// in the default rounding mode (to nearest even), which is what performs the
// binary16 rounding; the code must not be compiled with -ffast-math.
inline uint16_t FloatToHalf(float f) {
  const float scale_to_inf = 0x1.0p+112f;
  const float scale_to_zero = 0x1.0p-110f;
  float base = (__builtin_fabsf(f) * scale_to_inf) * scale_to_zero;
  const uint32_t w = BitsFromFloat(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  const uint32_t small = 0u - static_cast<uint32_t>(bias < 0x71000000u);
  bias = (bias & ~small) | (0x71000000u & small);
  base = FloatFromBits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = BitsFromFloat(base);
  const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissa_bits = bits & 0x00000FFFu;
  const uint32_t nonsign = exp_bits + mantissa_bits;
  const uint32_t is_nan = 0u - static_cast<uint32_t>(shl1_w > 0xFF000000u);
  return static_cast<uint16_t>((sign >> 16) | (0x7E00u & is_nan) |
                               (nonsign & ~is_nan));
}

// bfloat16: the upper half of a binary32; rounds to nearest even.
inline float Bf16ToFloat(uint16_t b) {
  return FloatFromBits(static_cast<uint32_t>(b) << 16);
}
inline uint16_t FloatToBf16(float f) {
  const uint32_t w = BitsFromFloat(f);
  const uint32_t is_nan = 0u - static_cast<uint32_t>((w & 0x7FFFFFFFu) > 0x7F800000u);
  const uint32_t rounded = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
  const uint32_t quiet = (w >> 16) | 0x40u;
  return static_cast<uint16_t>((quiet & is_nan) | (rounded & ~is_nan));
}

struct bf16 {
  uint16_t bits;
};

// d[i] = FloatToBf16(s[i]) for i < n, 16 values at a time with AVX-512F
// (one zmm load, a compare into a mask, rounding as integers, vpmovdw) or
// AVX2 (two ymm halves and a shuffle): a group holding a NaN goes through
// the scalar form (which keeps NaN quiet); the others round to nearest even
// as integers, ~16 operations per 16 values where the auto-vectorized
// scalar form took ~30 (its NaN test and blend on every value). Each form
// reads its 16 values with loads as wide as the stores that wrote them, so
// store-to-load forwarding holds between a tile's ops.
inline void FloatsToBf16s(uint16_t* __restrict d, const float* __restrict s, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  typedef float F16v __attribute__((vector_size(64)));
  typedef uint32_t U16v __attribute__((vector_size(64)));
  typedef short I16x16 __attribute__((vector_size(32)));
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    F16v a;
    __builtin_memcpy(&a, s + i, sizeof a);
    if (__builtin_ia32_cmpps512_mask(a, a, 3 /* _CMP_UNORD_Q */, -1, 4) != 0) {
      for (int64_t k = i; k < i + 16; ++k) d[k] = FloatToBf16(s[k]);
      continue;
    }
    const U16v w = reinterpret_cast<U16v>(a);
    const U16v r = (w + 0x7FFFu + ((w >> 16) & 1u)) >> 16;
    const I16x16 packed = __builtin_ia32_pmovdw512_mask(
        reinterpret_cast<__attribute__((vector_size(64))) int>(r), I16x16{}, -1);
    __builtin_memcpy(d + i, &packed, sizeof packed);
  }
#elif defined(__AVX2__)
  typedef float F8 __attribute__((vector_size(32)));
  typedef uint32_t U8 __attribute__((vector_size(32)));
  typedef uint16_t U16 __attribute__((vector_size(32)));
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    F8 a, b;
    __builtin_memcpy(&a, s + i, sizeof a);
    __builtin_memcpy(&b, s + i + 8, sizeof b);
    if (__builtin_ia32_movmskps256(__builtin_ia32_cmpps256(a, b, 3 /* _CMP_UNORD_Q */)) != 0) {
      for (int64_t k = i; k < i + 16; ++k) d[k] = FloatToBf16(s[k]);
      continue;
    }
    const U8 wa = reinterpret_cast<U8>(a), wb = reinterpret_cast<U8>(b);
    const U8 ra = (wa + 0x7FFFu + ((wa >> 16) & 1u)) >> 16;
    const U8 rb = (wb + 0x7FFFu + ((wb >> 16) & 1u)) >> 16;
    const U16 packed = __builtin_shufflevector(reinterpret_cast<U16>(ra), reinterpret_cast<U16>(rb),
                                               0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                               28, 30);
    __builtin_memcpy(d + i, &packed, sizeof packed);
  }
#endif
  for (; i < n; ++i) d[i] = FloatToBf16(s[i]);
}

// Runs of f16 conversions: 8 at a time with F16C's vcvtph2ps/vcvtps2ph when
// the target has them (x86-64-v3), else the scalar functions above. Both
// give the same bits: vcvtps2ph rounds to nearest even (immediate 0), and a
// NaN is first replaced by the quiet NaN of its sign, so it converts to
// sign | 0x7E00 as FloatToHalf does. PTO_TILE_F16C may be predefined (0/1)
// to choose a path (tests build both).
#ifndef PTO_TILE_F16C
#if defined(__F16C__)
#define PTO_TILE_F16C 1
#else
#define PTO_TILE_F16C 0
#endif
#endif

#if PTO_TILE_F16C
typedef float F32x8 __attribute__((vector_size(32)));
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef short I16x8 __attribute__((vector_size(16)));
typedef float F32x8U __attribute__((vector_size(32), aligned(4)));
typedef short I16x8U __attribute__((vector_size(16), aligned(2)));

// A vector without NaN (one compare and movmskps) is returned as it is.
inline F32x8 CanonicalNan8(F32x8 v) {
  const I32x8 bits = reinterpret_cast<I32x8>(v);
  const I32x8 is_nan = v != v;  // all ones in NaN lanes
  if (__builtin_expect(__builtin_ia32_movmskps256(reinterpret_cast<F32x8>(is_nan)) == 0, 1)) {
    return v;
  }
  const I32x8 quiet = (bits & static_cast<int32_t>(0x80000000u)) | 0x7FC00000;
  return reinterpret_cast<F32x8>((quiet & is_nan) | (bits & ~is_nan));
}
inline I16x8 FloatToHalf8(F32x8 v) {
  return __builtin_ia32_vcvtps2ph256(CanonicalNan8(v), 0);
}
inline F32x8 HalfToFloat8(I16x8 h) { return __builtin_ia32_vcvtph2ps256(h); }
#endif

// With AVX-512F (x86-64-v4) the runs go 16 at a time first, through the zmm
// forms of the same instructions (vcvtph2ps/vcvtps2ph zmm, immediate 0, NaN
// made the quiet NaN of its sign first): the same bits as the 8-lane and
// scalar forms, half the instructions per value.
#if PTO_TILE_F16C && defined(__AVX512F__)
#define PTO_TILE_F16C_ZMM 1
typedef float F32x16 __attribute__((vector_size(64)));
typedef int32_t I32x16 __attribute__((vector_size(64)));
typedef short I16x16 __attribute__((vector_size(32)));
typedef float F32x16U __attribute__((vector_size(64), aligned(4)));
typedef short I16x16U __attribute__((vector_size(32), aligned(2)));

// One compare into a mask register and, only where a lane is NaN, one
// masked vpternlogd: (bits & sign) | quiet NaN.
inline F32x16 CanonicalNan16(F32x16 v) {
  const unsigned short is_nan =
      __builtin_ia32_cmpps512_mask(v, v, 3 /* _CMP_UNORD_Q */, -1, 4);
  if (__builtin_expect(is_nan == 0, 1)) return v;
  const I32x16 sign = I32x16{} + static_cast<int32_t>(0x80000000u);
  const I32x16 quiet = I32x16{} + 0x7FC00000;
  return reinterpret_cast<F32x16>(__builtin_ia32_pternlogd512_mask(
      reinterpret_cast<I32x16>(v), sign, quiet, 0xEA /* (a & b) | c */, is_nan));
}
inline I16x16 FloatToHalf16(F32x16 v) {
  return __builtin_ia32_vcvtps2ph512_mask(CanonicalNan16(v), 0, I16x16{}, -1);
}
inline F32x16 HalfToFloat16(I16x16 h) {
  return __builtin_ia32_vcvtph2ps512_mask(h, F32x16{}, -1, 4 /* current rounding: exact */);
}
#else
#define PTO_TILE_F16C_ZMM 0
#endif

// A run of n values through a conversion Op, the widest vectors first:
// Op::Lanes16 on each group of 16 where Op::kLanes16 (the target has the
// instructions that form uses), then Op::Lanes8 on each group of 8 where
// Op::kLanes8, then Op::One on each value left (every value where Op has
// neither). Each form is given the pointers p advanced to its first value
// and gives the bits of Op::One, so a value's result does not depend on
// where it lies in the run.
template <typename Op, typename... P>
inline void VectorRun(int64_t n, P... p) {
  int64_t i = 0;
  if constexpr (Op::kLanes16) {
    for (const int64_t end = n - n % 16; i < end; i += 16) Op::Lanes16((p + i)...);
  }
  if constexpr (Op::kLanes8) {
    for (const int64_t end = n - n % 8; i < end; i += 8) Op::Lanes8((p + i)...);
  }
  for (; i < n; ++i) Op::One((p + i)...);
}

// The f16 runs' forms (VectorRun): 16 lanes with PTO_TILE_F16C_ZMM, 8 with
// PTO_TILE_F16C, else one value at a time.
struct HalfToFloatRun {  // HalvesToFloats
  static constexpr bool kLanes16 = PTO_TILE_F16C_ZMM, kLanes8 = PTO_TILE_F16C;
#if PTO_TILE_F16C_ZMM
  static void Lanes16(float* d, const uint16_t* s) {
    *reinterpret_cast<F32x16U*>(d) = HalfToFloat16(*reinterpret_cast<const I16x16U*>(s));
  }
#endif
#if PTO_TILE_F16C
  static void Lanes8(float* d, const uint16_t* s) {
    *reinterpret_cast<F32x8U*>(d) = HalfToFloat8(*reinterpret_cast<const I16x8U*>(s));
  }
#endif
  static void One(float* d, const uint16_t* s) { *d = HalfToFloat(*s); }
};
struct FloatToHalfRun {  // FloatsToHalves
  static constexpr bool kLanes16 = PTO_TILE_F16C_ZMM, kLanes8 = PTO_TILE_F16C;
#if PTO_TILE_F16C_ZMM
  static void Lanes16(uint16_t* d, const float* s) {
    *reinterpret_cast<I16x16U*>(d) = FloatToHalf16(*reinterpret_cast<const F32x16U*>(s));
  }
#endif
#if PTO_TILE_F16C
  static void Lanes8(uint16_t* d, const float* s) {
    *reinterpret_cast<I16x8U*>(d) = FloatToHalf8(*reinterpret_cast<const F32x8U*>(s));
  }
#endif
  static void One(uint16_t* d, const float* s) { *d = FloatToHalf(*s); }
};
struct RoundToHalfRun {  // RoundToHalves, in place
  static constexpr bool kLanes16 = PTO_TILE_F16C_ZMM, kLanes8 = PTO_TILE_F16C;
#if PTO_TILE_F16C_ZMM
  static void Lanes16(float* d) {
    F32x16U* p = reinterpret_cast<F32x16U*>(d);
    *p = HalfToFloat16(FloatToHalf16(*p));
  }
#endif
#if PTO_TILE_F16C
  static void Lanes8(float* d) {
    F32x8U* p = reinterpret_cast<F32x8U*>(d);
    *p = HalfToFloat8(FloatToHalf8(*p));
  }
#endif
  static void One(float* d) { *d = HalfToFloat(FloatToHalf(*d)); }
};

// d[i] = HalfToFloat(s[i]) for i < n.
inline void HalvesToFloats(float* __restrict d, const uint16_t* __restrict s,
                           int64_t n) {
  VectorRun<HalfToFloatRun>(n, d, s);
}

// d[i] = FloatToHalf(s[i]) for i < n.
inline void FloatsToHalves(uint16_t* __restrict d, const float* __restrict s,
                           int64_t n) {
  VectorRun<FloatToHalfRun>(n, d, s);
}

// d[i] = HalfToFloat(FloatToHalf(d[i])) for i < n: rounds f32 values to f16
// precision in place.
inline void RoundToHalves(float* __restrict d, int64_t n) {
  VectorRun<RoundToHalfRun>(n, d);
}

// BOOL in GM: one byte, 0 or 1 (numpy, torch).
struct boolean {
  uint8_t v;
};

// Integer conversions follow torch on x86: a float truncates toward zero to
// int64 (NaN and out-of-range values give INT64_MIN, as cvttsd2si does),
// then wraps to the target width (-1.0 -> uint8 255, 300.0 -> uint8 44).
inline int64_t ToInt64(double v) {
  return (v != v || v >= 0x1p63 || v < -0x1p63) ? INT64_MIN
                                                  : static_cast<int64_t>(v);
}
inline int64_t ToInt64(float v) { return ToInt64(static_cast<double>(v)); }
inline int64_t ToInt64(int64_t v) { return v; }
// INT8, INT16 and INT32 results of a float truncate to 32 bits first, as
// torch's conversions do on x86 (cvttss2si/cvttsd2si on 32 bits: NaN and
// values outside int32 give INT32_MIN, so 3e9 -> int32 -2147483648 and
// -> int8 0); integers (int64 storage) wrap as before.
inline int64_t ToInt32Bits(double v) {
  return (v != v || v >= 0x1p31 || v < -0x1p31) ? INT32_MIN : static_cast<int64_t>(v);
}
inline int64_t ToInt32Bits(float v) { return ToInt32Bits(static_cast<double>(v)); }
inline int64_t ToInt32Bits(int64_t v) { return v; }
template <typename I>
inline int64_t WrapTo(int64_t v) {
  return static_cast<int64_t>(static_cast<I>(static_cast<uint64_t>(v)));
}

// Elem<T>: a GM element type T, its UB storage type S (f32 for every type
// that f32 holds exactly, and for FP16/BF16 which compute in f32; int64 for
// INT32/INT64; double for DOUBLE), and the conversions between them. Values
// in UB are always representable in their dtype, so Store is exact.
template <typename T>
struct Elem;

template <>
struct Elem<float> {
  using S = float;
  static float Load(float v) { return v; }
  static float Store(float v) { return v; }
};

template <>
struct Elem<boolean> {
  using S = float;
  static float Load(boolean v) { return v.v != 0 ? 1.0f : 0.0f; }
  static boolean Store(float v) { return boolean{static_cast<uint8_t>(v != 0.0f)}; }
};

template <>
struct Elem<half> {
  using S = float;
  static float Load(half v) { return HalfToFloat(v.bits); }
  static half Store(float v) { return half{FloatToHalf(v)}; }
  // d[i] = Store(s[i]) for i < n, vectorized (pto_cube.h's TSTORE).
  static void StoreRun(half* d, const float* s, int64_t n) {
    FloatsToHalves(reinterpret_cast<uint16_t*>(d), s, n);
  }
};

template <>
struct Elem<bf16> {
  using S = float;
  static float Load(bf16 v) { return Bf16ToFloat(v.bits); }
  static bf16 Store(float v) { return bf16{FloatToBf16(v)}; }
  static void StoreRun(bf16* d, const float* s, int64_t n) {
    FloatsToBf16s(reinterpret_cast<uint16_t*>(d), s, n);
  }
};

#define PTO_TILE_FP8(T, DECODE, ENCODE)                                     \
  template <>                                                              \
  struct Elem<T> {                                                         \
    using S = float;                                                       \
    static float Load(T v) { return DECODE(v.bits); }                     \
    static T Store(float v) { return T{ENCODE(v)}; }                       \
  };                                                                       \
  template <>                                                              \
  struct CvtTo<T> {                                                        \
    template <typename V> static float Apply(V v) {                        \
      return DECODE(ENCODE(static_cast<float>(v)));                        \
    }                                                                      \
  };

#define PTO_TILE_SMALL_INT(T)                                              \
  template <>                                                              \
  struct Elem<T> {                                                         \
    using S = float;                                                       \
    static float Load(T v) { return static_cast<float>(v); }              \
    static T Store(float v) { return static_cast<T>(v); }                  \
  };
PTO_TILE_SMALL_INT(int8_t)
PTO_TILE_SMALL_INT(int16_t)
PTO_TILE_SMALL_INT(uint8_t)
#undef PTO_TILE_SMALL_INT

template <>
struct Elem<int32_t> {
  using S = int64_t;
  static int64_t Load(int32_t v) { return v; }
  static int32_t Store(int64_t v) { return static_cast<int32_t>(v); }
};

template <>
struct Elem<int64_t> {
  using S = int64_t;
  static int64_t Load(int64_t v) { return v; }
  static int64_t Store(int64_t v) { return v; }
};

template <>
struct Elem<double> {
  using S = double;
  static double Load(double v) { return v; }
  static double Store(double v) { return v; }
};

// CvtTo<D>::Apply(v): the value of a D tile holding `v` converted to D
// (TCVT): floats round to nearest even, integers per ToInt64 (UINT8, INT64)
// or ToInt32Bits (INT8, INT16, INT32) and WrapTo, BOOL
// is v != 0 (NaN is true).
template <typename D>
struct CvtTo;
template <>
struct CvtTo<float> {
  template <typename V> static float Apply(V v) { return static_cast<float>(v); }
};
template <>
struct CvtTo<double> {
  template <typename V> static double Apply(V v) { return static_cast<double>(v); }
};
template <>
struct CvtTo<half> {
  template <typename V> static float Apply(V v) {
    return HalfToFloat(FloatToHalf(static_cast<float>(v)));
  }
};
template <>
struct CvtTo<bf16> {
  template <typename V> static float Apply(V v) {
    return Bf16ToFloat(FloatToBf16(static_cast<float>(v)));
  }
};
template <>
struct CvtTo<boolean> {
  template <typename V> static float Apply(V v) { return v != 0 ? 1.0f : 0.0f; }
};
#define PTO_TILE_CVT_INT(T, TO_INT)                                        \
  template <>                                                              \
  struct CvtTo<T> {                                                        \
    template <typename V> static typename Elem<T>::S Apply(V v) {          \
      return static_cast<typename Elem<T>::S>(WrapTo<T>(TO_INT(v)));       \
    }                                                                      \
  };
PTO_TILE_CVT_INT(int8_t, ToInt32Bits)
PTO_TILE_CVT_INT(int16_t, ToInt32Bits)
PTO_TILE_CVT_INT(uint8_t, ToInt64)
PTO_TILE_CVT_INT(int32_t, ToInt32Bits)
PTO_TILE_CVT_INT(int64_t, ToInt64)
#undef PTO_TILE_CVT_INT

// FP8 (pto_tile_fp8.h): f32 in UB; a conversion rounds to nearest even.
PTO_TILE_FP8(fp8e4m3, Fp8E4M3ToFloat, FloatToFp8E4M3)
PTO_TILE_FP8(fp8e5m2, Fp8E5M2ToFloat, FloatToFp8E5M2)
PTO_TILE_FP8(fp8e8m0, Fp8E8M0ToFloat, FloatToFp8E8M0)
#undef PTO_TILE_FP8

template <typename T>
struct IsHalf {
  static constexpr bool kValue = false;
};
template <>
struct IsHalf<half> {
  static constexpr bool kValue = true;
};

// The precision of a UB tile's values: a tile of type D holds f32 numbers
// that are exactly representable in D. Arithmetic computes in f32 and rounds
// its result to the destination tile's type, so an f16 intermediate is
// rounded the same way whether it stays in UB or goes through GM.
template <typename D>
struct Round;

template <>
struct Round<float> {
  static float Apply(float v) { return v; }
};

template <>
struct Round<half> {
  static float Apply(float v) { return HalfToFloat(FloatToHalf(v)); }
};

template <>
struct Round<bf16> {
  static float Apply(float v) { return Bf16ToFloat(FloatToBf16(v)); }
};

// d[i] = Round<bf16>::Apply(d[i]) for i < n: f32 results rounded to bf16
// precision in place, 16 at a time as FloatsToBf16s rounds them (a group
// holding a NaN through the scalar form). With AVX-512F one zmm store per
// 16: the next op of the tile reads them with zmm loads, which two ymm
// stores could not forward.
inline void RoundToBf16s(float* __restrict d, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  typedef float F16v __attribute__((vector_size(64)));
  typedef uint32_t U16v __attribute__((vector_size(64)));
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    F16v a;
    __builtin_memcpy(&a, d + i, sizeof a);
    if (__builtin_ia32_cmpps512_mask(a, a, 3 /* _CMP_UNORD_Q */, -1, 4) != 0) {
      for (int64_t k = i; k < i + 16; ++k) d[k] = Round<bf16>::Apply(d[k]);
      continue;
    }
    const U16v w = reinterpret_cast<U16v>(a);
    const U16v r = (w + 0x7FFFu + ((w >> 16) & 1u)) & 0xFFFF0000u;
    __builtin_memcpy(d + i, &r, sizeof r);
  }
#elif defined(__AVX2__)
  typedef float F8 __attribute__((vector_size(32)));
  typedef uint32_t U8 __attribute__((vector_size(32)));
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    F8 a, b;
    __builtin_memcpy(&a, d + i, sizeof a);
    __builtin_memcpy(&b, d + i + 8, sizeof b);
    if (__builtin_ia32_movmskps256(__builtin_ia32_cmpps256(a, b, 3 /* _CMP_UNORD_Q */)) != 0) {
      for (int64_t k = i; k < i + 16; ++k) d[k] = Round<bf16>::Apply(d[k]);
      continue;
    }
    const U8 wa = reinterpret_cast<U8>(a), wb = reinterpret_cast<U8>(b);
    const U8 ra = (wa + 0x7FFFu + ((wa >> 16) & 1u)) & 0xFFFF0000u;
    const U8 rb = (wb + 0x7FFFu + ((wb >> 16) & 1u)) & 0xFFFF0000u;
    __builtin_memcpy(d + i, &ra, sizeof ra);
    __builtin_memcpy(d + i + 8, &rb, sizeof rb);
  }
#endif
  for (; i < n; ++i) d[i] = Round<bf16>::Apply(d[i]);
}

// Rounds n f32 results in place to D's precision (f16 in runs, see
// RoundToHalves; bf16; f32: nothing).
template <typename D>
inline void RoundTile(float* __restrict d, int64_t n) {
  if constexpr (IsHalf<D>::kValue) {
    RoundToHalves(d, n);
  } else if constexpr (std::is_same_v<D, bf16>) {
    RoundToBf16s(d, n);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = Round<D>::Apply(d[i]);
  }
}

}  // namespace pto_tile

#endif  // PTO_TILE_CONVERT_H_
