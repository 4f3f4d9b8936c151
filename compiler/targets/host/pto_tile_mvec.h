// PTO tile instructions (pto_tile.h): glibc's vector math library. The
// libmvec variants of the target's vector width and maps of them over runs
// of f32 values (MvecMap, MvecMap2; MvecMapDouble, MvecMapDouble2 through
// the double variants).
#ifndef PTO_TILE_MVEC_H_
#define PTO_TILE_MVEC_H_

#include <stdint.h>

namespace pto_tile {

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

}  // namespace pto_tile

#endif  // PTO_TILE_MVEC_H_
