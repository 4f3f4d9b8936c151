// PTO tile instructions for host targets: what generated kernel code calls.
//
// This header is embedded into the compiler and written next to each
// generated source file, so kernels never depend on the source tree. It is
// self-contained C++17 that includes only <stdint.h> and calls compiler
// builtins instead of <cmath>/<cstring> (it is parsed for every kernel, and
// those headers would dominate a small kernel's compile time).
//
// Layout: a UB tile is a dense row-major array of its extents, of its
// values' storage type (Elem<T>::S: f32 for FP32, FP16, BF16, BOOL, INT8,
// INT16, UINT8; int64 for INT32, INT64; double for DOUBLE). A GM
// buffer is a dense row-major array of its element type; a load or store
// addresses the tile's region through the buffer's strides, with extents
// padded to four dims (leading 1s). Inner loops run over contiguous memory
// with __restrict pointers so the C++ compiler can vectorize them.
//
// f16 (IEEE binary16) computes in f32: loads widen exactly, and every
// instruction with an f16 destination rounds its result to nearest even
// (overflow to inf, NaN stays NaN), with integer and f32 operations only (no
// _Float16 needed). Stores of f16 tiles are then exact. bf16 works the same
// way. TCVT converts between all of these (CvtTo, torch's rules). Where the
// target has F16C (x86-64-v3), f16 loads, stores and result rounding run 8
// at a time with vcvtph2ps/vcvtps2ph (16 at a time with AVX-512F,
// x86-64-v4), bit-identical to the scalar path.
//
// Row reductions (contiguous dim) keep 16 partial results per row (see
// ReduceRow): sums differ from left-to-right order by rounding only.
#ifndef PTO_TILE_H_
#define PTO_TILE_H_

#include <stdint.h>
#include <type_traits>

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

// d[i] = FloatToBf16(s[i]) for i < n. With AVX2, 16 values at a time: one
// unordered compare per 16 sends a group holding a NaN to the scalar form
// (which keeps NaN quiet); the others round to nearest even as integers and
// pack, ~16 operations per 16 values where the auto-vectorized scalar form
// took ~30 (its NaN test and blend on every value).
inline void FloatsToBf16s(uint16_t* __restrict d, const float* __restrict s, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
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

// d[i] = HalfToFloat(s[i]) for i < n.
inline void HalvesToFloats(float* __restrict d, const uint16_t* __restrict s,
                           int64_t n) {
  int64_t i = 0;
#if PTO_TILE_F16C_ZMM
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    *reinterpret_cast<F32x16U*>(d + i) =
        HalfToFloat16(*reinterpret_cast<const I16x16U*>(s + i));
  }
#endif
#if PTO_TILE_F16C
  for (const int64_t end = n - n % 8; i < end; i += 8) {
    *reinterpret_cast<F32x8U*>(d + i) =
        HalfToFloat8(*reinterpret_cast<const I16x8U*>(s + i));
  }
#endif
  for (; i < n; ++i) d[i] = HalfToFloat(s[i]);
}

// d[i] = FloatToHalf(s[i]) for i < n.
inline void FloatsToHalves(uint16_t* __restrict d, const float* __restrict s,
                           int64_t n) {
  int64_t i = 0;
#if PTO_TILE_F16C_ZMM
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    *reinterpret_cast<I16x16U*>(d + i) =
        FloatToHalf16(*reinterpret_cast<const F32x16U*>(s + i));
  }
#endif
#if PTO_TILE_F16C
  for (const int64_t end = n - n % 8; i < end; i += 8) {
    *reinterpret_cast<I16x8U*>(d + i) =
        FloatToHalf8(*reinterpret_cast<const F32x8U*>(s + i));
  }
#endif
  for (; i < n; ++i) d[i] = FloatToHalf(s[i]);
}

// d[i] = HalfToFloat(FloatToHalf(d[i])) for i < n: rounds f32 values to f16
// precision in place.
inline void RoundToHalves(float* __restrict d, int64_t n) {
  int64_t i = 0;
#if PTO_TILE_F16C_ZMM
  for (const int64_t end = n - n % 16; i < end; i += 16) {
    F32x16U* p = reinterpret_cast<F32x16U*>(d + i);
    *p = HalfToFloat16(FloatToHalf16(*p));
  }
#endif
#if PTO_TILE_F16C
  for (const int64_t end = n - n % 8; i < end; i += 8) {
    F32x8U* p = reinterpret_cast<F32x8U*>(d + i);
    *p = HalfToFloat8(FloatToHalf8(*p));
  }
#endif
  for (; i < n; ++i) d[i] = HalfToFloat(FloatToHalf(d[i]));
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
};

template <>
struct Elem<bf16> {
  using S = float;
  static float Load(bf16 v) { return Bf16ToFloat(v.bits); }
  static bf16 Store(float v) { return bf16{FloatToBf16(v)}; }
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

template <typename T>
struct IsHalf {
  static constexpr bool kValue = false;
};
template <>
struct IsHalf<half> {
  static constexpr bool kValue = true;
};

// UB tile <- GM region. `src` points at the region's first element; s0..s2
// are the GM strides (in elements) of the padded dims 0..2 (dim 3 is
// contiguous). A broadcast operand (numpy broadcasting) has stride 0 in the
// dims it is broadcast along; kBcast3 says dim 3 is one (its one element is
// repeated along the row).
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3,
          bool kBcast3 = false>
inline void TLoad(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                  int64_t s0, int64_t s1, int64_t s2) {
  for (int64_t i0 = 0; i0 < E0; ++i0) {
    for (int64_t i1 = 0; i1 < E1; ++i1) {
      for (int64_t i2 = 0; i2 < E2; ++i2) {
        const T* __restrict row = src + i0 * s0 + i1 * s1 + i2 * s2;
        typename Elem<T>::S* __restrict out =
            dst + ((i0 * E1 + i1) * E2 + i2) * E3;
        if constexpr (IsHalf<T>::kValue && !kBcast3) {
          HalvesToFloats(out, reinterpret_cast<const uint16_t*>(row), E3);
        } else {
          for (int64_t j = 0; j < E3; ++j) {
            out[j] = Elem<T>::Load(row[kBcast3 ? 0 : j]);
          }
        }
      }
    }
  }
}

#if defined(__AVX__)
// out[r * C + j] = src[j * ld + r] for r < R, j < C (R, C multiples of 8):
// 8 x 8 blocks, each 8 vector loads along src's rows, an in-register
// transpose (unpack, 64-bit interleave, 128-bit halves) and 8 vector stores
// along out's rows, where element by element every load and store was
// scalar and the stores 4 KiB-aliased the loads.
template <int64_t R, int64_t C>
inline void Transpose8Blocks(float* __restrict out, const float* __restrict src, int64_t ld) {
  typedef float V8 __attribute__((vector_size(32)));
  for (int64_t j0 = 0; j0 < C; j0 += 8) {
    for (int64_t r0 = 0; r0 < R; r0 += 8) {
      V8 v[8];
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) __builtin_memcpy(&v[k], src + (j0 + k) * ld + r0, sizeof(V8));
      V8 t[8], u[8];
#pragma GCC unroll 4
      for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shufflevector(v[k], v[k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[k + 1] = __builtin_shufflevector(v[k], v[k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
#pragma GCC unroll 2
      for (int k = 0; k < 8; k += 4) {
        u[k] = __builtin_shufflevector(t[k], t[k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 1] = __builtin_shufflevector(t[k], t[k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        u[k + 2] = __builtin_shufflevector(t[k + 1], t[k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
        u[k + 3] = __builtin_shufflevector(t[k + 1], t[k + 3], 2, 3, 10, 11, 6, 7, 14, 15);
      }
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const V8 lo = __builtin_shufflevector(u[k], u[k + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        const V8 hi = __builtin_shufflevector(u[k], u[k + 4], 4, 5, 6, 7, 12, 13, 14, 15);
        __builtin_memcpy(out + (r0 + k) * C + j0, &lo, sizeof(V8));
        __builtin_memcpy(out + (r0 + k + 4) * C + j0, &hi, sizeof(V8));
      }
    }
  }
}
#endif

// TLoad whose innermost dim has GM stride s3 (a transposed or permuted
// operand: x.T's rows are x's columns). Where dim 2 is the nearer one in GM
// (s2 < s3: a transpose), the copy walks GM along dim 2, a run of E2 nearby
// values per j, writing down the tile's column j: walking along j instead
// read one value from each of E3 GM rows s3 apart, which for a power-of-two
// row length all fall in one L1 set and evict each other (every read then
// comes from L2). An f32 transpose (dim 2 contiguous in GM) with both tile
// dims multiples of 8 moves 8 x 8 blocks through registers
// (Transpose8Blocks, with AVX), which is faster still.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3>
inline void TLoadStrided(typename Elem<T>::S* __restrict dst,
                         const T* __restrict src, int64_t s0, int64_t s1,
                         int64_t s2, int64_t s3) {
  if (E2 > 1 && s2 < s3) {
#if defined(__AVX__)
    if constexpr (std::is_same_v<T, float> && E2 % 8 == 0 && E3 % 8 == 0) {
      if (s2 == 1) {
        for (int64_t i0 = 0; i0 < E0; ++i0) {
          for (int64_t i1 = 0; i1 < E1; ++i1) {
            Transpose8Blocks<E2, E3>(dst + (i0 * E1 + i1) * E2 * E3, src + i0 * s0 + i1 * s1, s3);
          }
        }
        return;
      }
    }
#endif
    for (int64_t i0 = 0; i0 < E0; ++i0) {
      for (int64_t i1 = 0; i1 < E1; ++i1) {
        const T* __restrict block = src + i0 * s0 + i1 * s1;
        typename Elem<T>::S* __restrict out = dst + (i0 * E1 + i1) * E2 * E3;
        for (int64_t j = 0; j < E3; ++j) {
          for (int64_t i2 = 0; i2 < E2; ++i2) {
            out[i2 * E3 + j] = Elem<T>::Load(block[j * s3 + i2 * s2]);
          }
        }
      }
    }
    return;
  }
  for (int64_t i0 = 0; i0 < E0; ++i0) {
    for (int64_t i1 = 0; i1 < E1; ++i1) {
      for (int64_t i2 = 0; i2 < E2; ++i2) {
        const T* __restrict row = src + i0 * s0 + i1 * s1 + i2 * s2;
        typename Elem<T>::S* __restrict out =
            dst + ((i0 * E1 + i1) * E2 + i2) * E3;
        for (int64_t j = 0; j < E3; ++j) out[j] = Elem<T>::Load(row[j * s3]);
      }
    }
  }
}

// GM region <- UB tile (rounding to T).
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3>
inline void TStore(T* __restrict dst, const typename Elem<T>::S* __restrict src,
                   int64_t s0, int64_t s1, int64_t s2) {
  for (int64_t i0 = 0; i0 < E0; ++i0) {
    for (int64_t i1 = 0; i1 < E1; ++i1) {
      for (int64_t i2 = 0; i2 < E2; ++i2) {
        T* __restrict row = dst + i0 * s0 + i1 * s1 + i2 * s2;
        const typename Elem<T>::S* __restrict in =
            src + ((i0 * E1 + i1) * E2 + i2) * E3;
        if constexpr (IsHalf<T>::kValue) {
          FloatsToHalves(reinterpret_cast<uint16_t*>(row), in, E3);
        } else if constexpr (std::is_same_v<T, bf16>) {
          FloatsToBf16s(reinterpret_cast<uint16_t*>(row), in, E3);
        } else {
          for (int64_t j = 0; j < E3; ++j) row[j] = Elem<T>::Store(in[j]);
        }
      }
    }
  }
}

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
// precision in place, 16 at a time with AVX2 as FloatsToBf16s rounds them
// (a group holding a NaN through the scalar form).
inline void RoundToBf16s(float* __restrict d, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__)
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

// Transcendentals through glibc's vector math library (libmvec; kernels
// link with -lmvec): 16 lanes with AVX-512F (_ZGVeN16v_erfcf), 8 with AVX2
// (_ZGVdN8v_erfcf), else 4 with SSE (_ZGVbN4v_erfcf). A tile's last partial chunk is padded with zeros and goes
// through the same vector function, so an element's result never depends
// on the tile shape or on where the element sits in its tile. libmvec's
// float functions are within 4 ulp of the exact result (the bounds are
// 2e-6 relative for transcendentals, 1e-6 absolute for erf/erfc) and
// handle NaN, +-inf, +-0 and subnormals as the scalar ones do.
// PTO_TILE_MVEC may be predefined to 0 to use the scalar builtins.
#ifndef PTO_TILE_MVEC
#if defined(__x86_64__) && defined(__GLIBC__)
#define PTO_TILE_MVEC 1
#else
#define PTO_TILE_MVEC 0
#endif
#endif

#if PTO_TILE_MVEC
#if defined(__AVX512F__)
// x86-64-v4: libmvec's AVX-512 variants (_ZGVeN16v_logf, glibc 2.35+ for
// most; 2.22 for exp/log/sin/cos), 16 lanes. Over every 509th float they are
// within 3.81 ulp as the AVX2 ones are (log10f 3.14, expm1f 2.25 against
// 2.34, 1.66), give the same NaN/inf/+-0 results and 1.2-2.4x their speed
// on one thread; bits differ from v3's in 0-27% of inputs (log10f most).
typedef float MvecF __attribute__((vector_size(64)));
typedef double MvecD __attribute__((vector_size(64)));
typedef float MvecDF __attribute__((vector_size(32)));  // MvecD's lanes as f32
#define PTO_TILE_MVEC_FN(f) _ZGVeN16v_##f
#define PTO_TILE_MVEC_FN2(f) _ZGVeN16vv_##f
#define PTO_TILE_MVEC_DFN(f) _ZGVeN8v_##f
#define PTO_TILE_MVEC_DFN2(f) _ZGVeN8vv_##f
#elif defined(__AVX2__)
typedef float MvecF __attribute__((vector_size(32)));
typedef double MvecD __attribute__((vector_size(32)));
typedef float MvecDF __attribute__((vector_size(16)));  // MvecD's lanes as f32
#define PTO_TILE_MVEC_FN(f) _ZGVdN8v_##f
#define PTO_TILE_MVEC_FN2(f) _ZGVdN8vv_##f
#define PTO_TILE_MVEC_DFN(f) _ZGVdN4v_##f
#define PTO_TILE_MVEC_DFN2(f) _ZGVdN4vv_##f
#else
typedef float MvecF __attribute__((vector_size(16)));
typedef double MvecD __attribute__((vector_size(16)));
typedef float MvecDF __attribute__((vector_size(8)));
#define PTO_TILE_MVEC_FN(f) _ZGVbN4v_##f
#define PTO_TILE_MVEC_FN2(f) _ZGVbN4vv_##f
#define PTO_TILE_MVEC_DFN(f) _ZGVbN2v_##f
#define PTO_TILE_MVEC_DFN2(f) _ZGVbN2vv_##f
#endif
constexpr int64_t kMvecLanes = sizeof(MvecF) / sizeof(float);
constexpr int64_t kMvecDLanes = sizeof(MvecD) / sizeof(double);
extern "C" {
MvecD PTO_TILE_MVEC_DFN(exp)(MvecD);
// Trigonometric and hyperbolic functions in double (glibc 2.35+), rounded
// to f32 by MvecMapDouble/MvecMapDouble2.
#define PTO_TILE_MVEC_DECLARE_D(f) MvecD PTO_TILE_MVEC_DFN(f)(MvecD);
PTO_TILE_MVEC_DECLARE_D(tan)
PTO_TILE_MVEC_DECLARE_D(asin)
PTO_TILE_MVEC_DECLARE_D(acos)
PTO_TILE_MVEC_DECLARE_D(atan)
PTO_TILE_MVEC_DECLARE_D(sinh)
PTO_TILE_MVEC_DECLARE_D(cosh)
PTO_TILE_MVEC_DECLARE_D(asinh)
PTO_TILE_MVEC_DECLARE_D(acosh)
PTO_TILE_MVEC_DECLARE_D(atanh)
PTO_TILE_MVEC_DECLARE_D(cbrt)
#undef PTO_TILE_MVEC_DECLARE_D
MvecD PTO_TILE_MVEC_DFN2(atan2)(MvecD, MvecD);
MvecD PTO_TILE_MVEC_DFN2(hypot)(MvecD, MvecD);
#define PTO_TILE_MVEC_DECLARE(f) MvecF PTO_TILE_MVEC_FN(f)(MvecF);
PTO_TILE_MVEC_DECLARE(exp2f)
PTO_TILE_MVEC_DECLARE(expm1f)
PTO_TILE_MVEC_DECLARE(logf)
PTO_TILE_MVEC_DECLARE(log2f)
PTO_TILE_MVEC_DECLARE(log10f)
PTO_TILE_MVEC_DECLARE(log1pf)
PTO_TILE_MVEC_DECLARE(tanhf)
PTO_TILE_MVEC_DECLARE(erff)
PTO_TILE_MVEC_DECLARE(erfcf)
PTO_TILE_MVEC_DECLARE(sinf)
PTO_TILE_MVEC_DECLARE(cosf)
#undef PTO_TILE_MVEC_DECLARE
MvecF PTO_TILE_MVEC_FN2(powf)(MvecF, MvecF);
}

// d[i] = F(a[i]) for i < n, kMvecLanes at a time (d may equal a).
template <MvecF (*F)(MvecF)>
inline void MvecMap(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + kMvecLanes <= n; i += kMvecLanes) {
    MvecF v;
    __builtin_memcpy(&v, a + i, sizeof v);
    v = F(v);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    MvecF v = {};
    __builtin_memcpy(&v, a + i, (n - i) * sizeof(float));
    v = F(v);
    __builtin_memcpy(d + i, &v, (n - i) * sizeof(float));
  }
}

// d[i] = F(a[i], b[i]) for i < n, kMvecLanes at a time (d may equal a or
// b). kAStep/kBStep 0: that operand is one value, repeated (a scalar, or a
// row tile's value along its row). A partial last vector is padded with
// ones, so an element's result does not depend on where it sits.
template <MvecF (*F)(MvecF, MvecF), int kAStep, int kBStep>
inline void MvecMap2(float* d, const float* a, const float* b, int64_t n) {
  MvecF va = MvecF{} + a[0], vb = MvecF{} + b[0];
  int64_t i = 0;
  for (; i + kMvecLanes <= n; i += kMvecLanes) {
    if constexpr (kAStep != 0) __builtin_memcpy(&va, a + i, sizeof va);
    if constexpr (kBStep != 0) __builtin_memcpy(&vb, b + i, sizeof vb);
    const MvecF v = F(va, vb);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    const auto bytes = static_cast<unsigned long>(n - i) * sizeof(float);
    if constexpr (kAStep != 0) {
      va = MvecF{} + 1.0f;
      __builtin_memcpy(&va, a + i, bytes);
    }
    if constexpr (kBStep != 0) {
      vb = MvecF{} + 1.0f;
      __builtin_memcpy(&vb, b + i, bytes);
    }
    const MvecF v = F(va, vb);
    __builtin_memcpy(d + i, &v, bytes);
  }
}

// d[i] = (float)F((double)a[i]) for i < n, kMvecDLanes at a time (d may
// equal a): F's error in double (a few double ulps) is far below half an
// f32 ulp, so the f32 result is the correctly rounded one in practice (exp:
// no difference over 70M sampled floats), as glibc's scalar expf is.
template <MvecD (*F)(MvecD)>
inline void MvecMapDouble(float* d, const float* a, int64_t n) {
  int64_t i = 0;
  for (; i + kMvecDLanes <= n; i += kMvecDLanes) {
    MvecDF v;
    __builtin_memcpy(&v, a + i, sizeof v);
    v = __builtin_convertvector(F(__builtin_convertvector(v, MvecD)), MvecDF);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    MvecDF v = {};
    __builtin_memcpy(&v, a + i, (n - i) * sizeof(float));
    v = __builtin_convertvector(F(__builtin_convertvector(v, MvecD)), MvecDF);
    __builtin_memcpy(d + i, &v, (n - i) * sizeof(float));
  }
}

// d[i] = (float)F((double)a[i], (double)b[i]) for i < n, kMvecDLanes at a
// time, as MvecMapDouble (d may equal a or b). kAStep/kBStep 0: that operand
// is one value, repeated (a row tile's value along its row); a partial last
// vector is padded with ones.
template <MvecD (*F)(MvecD, MvecD), int kAStep, int kBStep>
inline void MvecMapDouble2(float* d, const float* a, const float* b, int64_t n) {
  MvecD va = MvecD{} + static_cast<double>(a[0]), vb = MvecD{} + static_cast<double>(b[0]);
  int64_t i = 0;
  for (; i + kMvecDLanes <= n; i += kMvecDLanes) {
    MvecDF fa, fb;
    if constexpr (kAStep != 0) {
      __builtin_memcpy(&fa, a + i, sizeof fa);
      va = __builtin_convertvector(fa, MvecD);
    }
    if constexpr (kBStep != 0) {
      __builtin_memcpy(&fb, b + i, sizeof fb);
      vb = __builtin_convertvector(fb, MvecD);
    }
    const MvecDF v = __builtin_convertvector(F(va, vb), MvecDF);
    __builtin_memcpy(d + i, &v, sizeof v);
  }
  if (i < n) {
    const auto bytes = static_cast<unsigned long>(n - i) * sizeof(float);
    MvecDF fa = MvecDF{} + 1.0f, fb = MvecDF{} + 1.0f;
    if constexpr (kAStep != 0) {
      __builtin_memcpy(&fa, a + i, bytes);
      va = __builtin_convertvector(fa, MvecD);
    }
    if constexpr (kBStep != 0) {
      __builtin_memcpy(&fb, b + i, bytes);
      vb = __builtin_convertvector(fb, MvecD);
    }
    const MvecDF v = __builtin_convertvector(F(va, vb), MvecDF);
    __builtin_memcpy(d + i, &v, bytes);
  }
}
#endif

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
// absolute, erfc also 3e-7 relative for x > 2, see above), elsewhere
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

// Copies and selects work on tiles of any storage type S.
template <int64_t N, typename D = float, typename S>
inline void TMov(S* __restrict d, const S* __restrict a) {
  for (int64_t i = 0; i < N; ++i) d[i] = a[i];
}

// dst = c ? a : b (c holds 0.0f or 1.0f).
template <int64_t N, typename D = float, typename S>
inline void TSel(S* __restrict d, const float* __restrict c,
                 const S* __restrict a, const S* __restrict b) {
  // Both operands loaded unconditionally: a select GCC vectorizes (a blend);
  // a[i] and b[i] read only on their branch kept it a scalar loop with a
  // branch per value, mispredicted on mixed conditions.
  for (int64_t i = 0; i < N; ++i) {
    const S x = a[i], y = b[i];
    d[i] = c[i] != 0.0f ? x : y;
  }
}

// dst = v converted to D (TFILL: full, zeros, ones). v is an f32 immediate
// for f32 tiles, a double one for int64 and double tiles (exact to 2**53).
template <int64_t N, typename D, typename DS, typename V>
inline void TFill(DS* __restrict d, V v) {
  const DS x = CvtTo<D>::Apply(v);
  for (int64_t i = 0; i < N; ++i) d[i] = x;
}

// dst[i] = start + step * (base + i) in double, converted to D (TARANGE;
// base is the tile's offset in the rank-1 tensor). start and step are
// doubles whatever D: an INT32/INT64 arange past 2**24 and a DOUBLE one
// with a fractional step are exact, as torch's and numpy's.
template <int64_t N, typename D, typename DS>
inline void TArange(DS* __restrict d, double start, double step, int64_t base) {
  for (int64_t i = 0; i < N; ++i) {
    d[i] = CvtTo<D>::Apply(start + step * static_cast<double>(base + i));
  }
}

// dst = a converted to D (TCVT; see CvtTo).
template <int64_t N, typename D, typename DS, typename SS>
inline void TCvt(DS* __restrict d, const SS* __restrict a) {
  if constexpr (IsHalf<D>::kValue) {
    for (int64_t i = 0; i < N; ++i) d[i] = static_cast<float>(a[i]);
    RoundToHalves(d, N);
  } else if constexpr (std::is_same_v<SS, float> &&
                       (std::is_same_v<D, int8_t> || std::is_same_v<D, int16_t> ||
                        std::is_same_v<D, int32_t> || std::is_same_v<D, uint8_t>)) {
    // f32 -> INT8/INT16/INT32: ToInt32Bits is vcvttps2dq's result (truncated;
    // NaN and values outside int32 give INT32_MIN), then wrapped to D, 8
    // values at a time with AVX (ToInt32Bits goes through double per value).
    // UINT8 wraps ToInt64's result, whose low byte is vcvttps2dq's: a float
    // outside int32 is a multiple of 256, as INT32_MIN is (NaN: 0 both).
    int64_t i = 0;
#if defined(__AVX__)
    typedef float F8 __attribute__((vector_size(32)));
    typedef int32_t I8 __attribute__((vector_size(32)));
    typedef DS S8 __attribute__((vector_size(8 * sizeof(DS))));
    constexpr int kShift = 32 - 8 * static_cast<int>(sizeof(D));
    for (; i + 8 <= N; i += 8) {
      F8 v;
      __builtin_memcpy(&v, a + i, sizeof v);
      I8 q = __builtin_ia32_cvttps2dq256(v);
      if constexpr (std::is_same_v<D, uint8_t>) {
        q &= 0xFF;
      } else if constexpr (kShift > 0) {
        q = (q << kShift) >> kShift;
      }
      const S8 w = __builtin_convertvector(q, S8);
      __builtin_memcpy(d + i, &w, sizeof w);
    }
#endif
    for (; i < N; ++i) d[i] = CvtTo<D>::Apply(a[i]);
  } else {
    for (int64_t i = 0; i < N; ++i) d[i] = CvtTo<D>::Apply(a[i]);
  }
}

// dst = min(max(a, lo), hi) (numpy clip; NaN stays NaN).
template <int64_t N, typename D = float>
inline void TClip(float* __restrict d, const float* __restrict a, float lo,
                  float hi) {
  PTO_TILE_ROUNDED_LOOP(N, D, Min(Max(a[i], lo), hi));
}

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

#undef PTO_TILE_COMPARE
#undef PTO_TILE_COMPARE_SCALAR
#undef PTO_TILE_BINARY
#undef PTO_TILE_SCALAR
#undef PTO_TILE_UNARY
#undef PTO_TILE_UNARY_MVEC
#undef PTO_TILE_ROUNDED_LOOP

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

// MGATHER and MSCATTER: a tile addressed in a GM buffer through an index
// tile, along one dim K of the padded 4-dim space. Element i of the tile
// (offsets o0..o3 of the task, GM strides s0..s2 of the buffer; dim 3 is
// contiguous) stands for the buffer element at o + i with its coordinate in
// dim K replaced by idx[i]; n is the buffer's extent in dim K. An index
// outside [0, n) reads 0 (MGATHER) or writes nothing (MSCATTER): the front
// end checks a parameter's indices at launch, and no index ever addresses
// memory outside the buffer.

// Where the other dims of element (i0, i1, i2, 0) put it in the buffer.
template <int K>
inline int64_t IndexedRowBase(int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t i0,
                              int64_t i1, int64_t i2, int64_t s0, int64_t s1, int64_t s2) {
  return (K == 0 ? 0 : (o0 + i0) * s0) + (K == 1 ? 0 : (o1 + i1) * s1) +
         (K == 2 ? 0 : (o2 + i2) * s2) + (K == 3 ? 0 : o3);
}

// dst[i] = buffer[o + i with dim K = idx[i]] (torch.gather, index_select).
// Along dim 3 (K == 3) a gather within the row; otherwise a row whose
// indices are all equal (index_select: the index repeats along the row) is
// one contiguous copy.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K>
inline void MGather(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                    const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                    int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n) {
  using S = typename Elem<T>::S;
  const int64_t sk = K == 0 ? s0 : K == 1 ? s1 : K == 2 ? s2 : 1;
  for (int64_t i0 = 0; i0 < E0; ++i0) {
    for (int64_t i1 = 0; i1 < E1; ++i1) {
      for (int64_t i2 = 0; i2 < E2; ++i2) {
        const int64_t r = ((i0 * E1 + i1) * E2 + i2) * E3;
        const int64_t* __restrict ix = idx + r;
        S* __restrict out = dst + r;
        const T* __restrict row =
            src + IndexedRowBase<K>(o0, o1, o2, o3, i0, i1, i2, s0, s1, s2);
        if constexpr (K == 3) {
          for (int64_t j = 0; j < E3; ++j) {
            const int64_t k = ix[j];
            out[j] = static_cast<uint64_t>(k) < static_cast<uint64_t>(n)
                         ? Elem<T>::Load(row[k]) : S(0);
          }
        } else {
          bool uniform = true;
          for (int64_t j = 1; j < E3; ++j) uniform = uniform && ix[j] == ix[0];
          if (uniform) {
            const int64_t k = ix[0];
            if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) {
              for (int64_t j = 0; j < E3; ++j) out[j] = S(0);
              continue;
            }
            const T* __restrict from = row + k * sk;
            if constexpr (IsHalf<T>::kValue) {
              HalvesToFloats(out, reinterpret_cast<const uint16_t*>(from), E3);
            } else {
              for (int64_t j = 0; j < E3; ++j) out[j] = Elem<T>::Load(from[j]);
            }
            continue;
          }
          for (int64_t j = 0; j < E3; ++j) {
            const int64_t k = ix[j];
            out[j] = static_cast<uint64_t>(k) < static_cast<uint64_t>(n)
                         ? Elem<T>::Load(row[k * sk + j]) : S(0);
          }
        }
      }
    }
  }
}

// MSCATTER's combinations (R: 0 replace, 1 add, 2 multiply) of the element
// `a` it lands on with the value `b`, in the tile's storage type; integers
// wrap (two's complement, as torch's), and Elem<T>::Store wraps INT32.
template <int R, typename S>
inline S ScatterCombine(S a, S b) {
  if constexpr (R == 0) {
    return b;
  } else if constexpr (std::is_same_v<S, int64_t>) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    return static_cast<int64_t>(R == 1 ? x + y : x * y);
  } else {
    return R == 1 ? a + b : a * b;
  }
}

// buffer[o + i with dim K = idx[i]] (op R)= src[i] for every element i of
// the tile, in row-major order (a repeated index: the last write wins, or
// every value is combined in that order).
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, int R>
inline void MScatter(T* dst, const typename Elem<T>::S* __restrict src,
                     const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                     int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n) {
  const int64_t sk = K == 0 ? s0 : K == 1 ? s1 : K == 2 ? s2 : 1;
  for (int64_t i0 = 0; i0 < E0; ++i0) {
    for (int64_t i1 = 0; i1 < E1; ++i1) {
      for (int64_t i2 = 0; i2 < E2; ++i2) {
        const int64_t r = ((i0 * E1 + i1) * E2 + i2) * E3;
        T* row = dst + IndexedRowBase<K>(o0, o1, o2, o3, i0, i1, i2, s0, s1, s2);
        for (int64_t j = 0; j < E3; ++j) {
          const int64_t k = idx[r + j];
          if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) continue;
          T* at = row + k * sk + (K == 3 ? 0 : j);
          *at = Elem<T>::Store(ScatterCombine<R>(Elem<T>::Load(*at), src[r + j]));
        }
      }
    }
  }
}

// Tiles with run-time extents (a tail whose extent depends
// on a loop index, x[i:min(i+64, n)]). The UB tile keeps its static shape
// E0..E3; TLoadN reads only n0..n3 (<= E) of it from GM and sets the rest
// to `pad` (0, or the identity of the reduction that reads the tile: -inf
// for a max, 1 for a product), so every instruction runs on the whole tile
// with finite padding, and TStoreN writes back n0..n3. s3 is the innermost
// GM stride (0: dim 3 is broadcast, its one element repeated).
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3>
inline void TLoadN(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                   int64_t s0, int64_t s1, int64_t s2, int64_t s3, int64_t n0,
                   int64_t n1, int64_t n2, int64_t n3,
                   typename Elem<T>::S pad = 0) {
  for (int64_t i = 0; i < E0 * E1 * E2 * E3; ++i) dst[i] = pad;
  for (int64_t i0 = 0; i0 < n0; ++i0) {
    for (int64_t i1 = 0; i1 < n1; ++i1) {
      for (int64_t i2 = 0; i2 < n2; ++i2) {
        const T* __restrict row = src + i0 * s0 + i1 * s1 + i2 * s2;
        typename Elem<T>::S* __restrict out = dst + ((i0 * E1 + i1) * E2 + i2) * E3;
        for (int64_t j = 0; j < n3; ++j) out[j] = Elem<T>::Load(row[j * s3]);
      }
    }
  }
}

template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3>
inline void TStoreN(T* __restrict dst, const typename Elem<T>::S* __restrict src,
                    int64_t s0, int64_t s1, int64_t s2, int64_t n0, int64_t n1,
                    int64_t n2, int64_t n3) {
  for (int64_t i0 = 0; i0 < n0; ++i0) {
    for (int64_t i1 = 0; i1 < n1; ++i1) {
      for (int64_t i2 = 0; i2 < n2; ++i2) {
        T* __restrict row = dst + i0 * s0 + i1 * s1 + i2 * s2;
        const typename Elem<T>::S* __restrict in = src + ((i0 * E1 + i1) * E2 + i2) * E3;
        for (int64_t j = 0; j < n3; ++j) row[j] = Elem<T>::Store(in[j]);
      }
    }
  }
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

#endif  // PTO_TILE_H_
