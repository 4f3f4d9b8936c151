// PTO tile instructions (pto_tile.h): MGATHER and MSCATTER, tiles
// addressed through index tiles.
#ifndef PTO_TILE_INDEX_H_
#define PTO_TILE_INDEX_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_convert.h"

namespace pto_tile {

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

// dst[i] = buffer[o + i with dim K = idx[i]] (torch.gather, index_select)
// for the elements i < (x0, x1, x2, x3) of the tile (a tail's extents; the
// tile's layout stays E0..E3, the rest of dst is left as it is). Along dim 3
// (K == 3) a gather within the row; otherwise a row whose indices are all
// equal (index_select: the index repeats along the row) is one contiguous
// copy.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K>
inline void MGatherN(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                     const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                     int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n, int64_t x0,
                     int64_t x1, int64_t x2, int64_t x3) {
  using S = typename Elem<T>::S;
  const int64_t sk = K == 0 ? s0 : K == 1 ? s1 : K == 2 ? s2 : 1;
  for (int64_t i0 = 0; i0 < x0; ++i0) {
    for (int64_t i1 = 0; i1 < x1; ++i1) {
      for (int64_t i2 = 0; i2 < x2; ++i2) {
        const int64_t r = ((i0 * E1 + i1) * E2 + i2) * E3;
        const int64_t* __restrict ix = idx + r;
        S* __restrict out = dst + r;
        const T* __restrict row =
            src + IndexedRowBase<K>(o0, o1, o2, o3, i0, i1, i2, s0, s1, s2);
        if constexpr (K == 3) {
          for (int64_t j = 0; j < x3; ++j) {
            const int64_t k = ix[j];
            out[j] = static_cast<uint64_t>(k) < static_cast<uint64_t>(n)
                         ? Elem<T>::Load(row[k]) : S(0);
          }
        } else {
          bool uniform = true;
          for (int64_t j = 1; j < x3; ++j) uniform = uniform && ix[j] == ix[0];
          if (uniform) {
            const int64_t k = ix[0];
            if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) {
              for (int64_t j = 0; j < x3; ++j) out[j] = S(0);
              continue;
            }
            const T* __restrict from = row + k * sk;
            if constexpr (IsHalf<T>::kValue) {
              HalvesToFloats(out, reinterpret_cast<const uint16_t*>(from), x3);
            } else {
              for (int64_t j = 0; j < x3; ++j) out[j] = Elem<T>::Load(from[j]);
            }
            continue;
          }
          for (int64_t j = 0; j < x3; ++j) {
            const int64_t k = ix[j];
            out[j] = static_cast<uint64_t>(k) < static_cast<uint64_t>(n)
                         ? Elem<T>::Load(row[k * sk + j]) : S(0);
          }
        }
      }
    }
  }
}

// MGatherN over the whole tile.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K>
inline void MGather(typename Elem<T>::S* __restrict dst, const T* __restrict src,
                    const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                    int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n) {
  MGatherN<T, E0, E1, E2, E3, K>(dst, src, idx, o0, o1, o2, o3, s0, s1, s2, n, E0, E1, E2, E3);
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

// buffer[o + i with dim K = idx[i]] (op R)= src[i] for the elements i <
// (x0, x1, x2, x3) of the tile (a tail's extents; the tile's layout stays
// E0..E3), in row-major order (a repeated index: the last write wins, or
// every value is combined in that order).
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, int R>
inline void MScatterN(T* dst, const typename Elem<T>::S* __restrict src,
                      const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                      int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n, int64_t x0,
                      int64_t x1, int64_t x2, int64_t x3) {
  const int64_t sk = K == 0 ? s0 : K == 1 ? s1 : K == 2 ? s2 : 1;
  for (int64_t i0 = 0; i0 < x0; ++i0) {
    for (int64_t i1 = 0; i1 < x1; ++i1) {
      for (int64_t i2 = 0; i2 < x2; ++i2) {
        const int64_t r = ((i0 * E1 + i1) * E2 + i2) * E3;
        T* row = dst + IndexedRowBase<K>(o0, o1, o2, o3, i0, i1, i2, s0, s1, s2);
        for (int64_t j = 0; j < x3; ++j) {
          const int64_t k = idx[r + j];
          if (static_cast<uint64_t>(k) >= static_cast<uint64_t>(n)) continue;
          T* at = row + k * sk + (K == 3 ? 0 : j);
          *at = Elem<T>::Store(ScatterCombine<R>(Elem<T>::Load(*at), src[r + j]));
        }
      }
    }
  }
}

// MScatterN over the whole tile.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, int R>
inline void MScatter(T* dst, const typename Elem<T>::S* __restrict src,
                     const int64_t* __restrict idx, int64_t o0, int64_t o1, int64_t o2,
                     int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n) {
  MScatterN<T, E0, E1, E2, E3, K, R>(dst, src, idx, o0, o1, o2, o3, s0, s1, s2, n, E0, E1, E2,
                                     E3);
}

}  // namespace pto_tile

#endif  // PTO_TILE_INDEX_H_
