// PTO tile instructions (pto_tile.h): moving tiles. Loads and stores
// between a GM region and a UB tile (TLoad, TLoadStrided, TStore; TLoadN and
// TStoreN for run-time extents) and copies within UB (TMov, TSel, TFill,
// TArange, TCvt, TReshape).
#ifndef PTO_TILE_MOVES_H_
#define PTO_TILE_MOVES_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_convert.h"

namespace pto_tile {

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

// dst = the bits of each S-typed value of a read as a D (TRESHAPE between
// element types of one size: torch's x.view(dtype)). Each value goes to its
// GM form (Elem<S>::Store), whose bytes are reinterpreted and loaded back
// as D (Elem<D>::Load). UB holds FP16/BF16 as f32, so an FP16 NaN reaches
// GM as the quiet NaN of its sign and a BF16 NaN quieted, as every store of
// them does.
template <int64_t N, typename D, typename S, typename DS, typename SS>
inline void TReshape(DS* __restrict d, const SS* __restrict a) {
  static_assert(sizeof(D) == sizeof(S), "TRESHAPE: element types of one size");
  for (int64_t i = 0; i < N; ++i) {
    const S from = Elem<S>::Store(a[i]);
    D to;
    __builtin_memcpy(&to, &from, sizeof to);
    d[i] = Elem<D>::Load(to);
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

}  // namespace pto_tile

#endif  // PTO_TILE_MOVES_H_
