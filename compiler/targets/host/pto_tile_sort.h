// PTO tile instruction (pto_tile.h): MSORT, the positions that sort whole
// rows of a GM buffer.
//
// Each value becomes an unsigned key whose integer order is the value order
// torch's sort uses: NaN the largest (every NaN the same key, so NaNs tie),
// -0.0 and 0.0 the same key, integers by value; descending complements the
// key. A stable sort by key then gives torch.sort(stable=True)'s positions:
// ties keep their input order in both directions. Short rows take an
// insertion sort; longer ones an LSD radix sort by bytes (one histogram pass
// over the keys, then one scatter pass per byte in which the keys differ),
// O(n) per row and stable by construction. A tile that needs only the first
// few ranks of a longer row (topk's small k) takes a selection instead: one
// pass keeping the smallest keys seen, one compare per key once it is full.
// A tile that needs another part of the ranks of a long row (a chunk of
// positions: each chunk's task sorts the row again) sorts only the keys
// whose top bits can hold those ranks, when they are at most half the row.
#ifndef PTO_TILE_SORT_H_
#define PTO_TILE_SORT_H_

#include <stdint.h>
#include <type_traits>

#include "pto_tile_index.h"

namespace pto_tile {
namespace sort_internal {

inline uint32_t FloatKey(float f) {
  if (f != f) return 0xFFFFFFFFu;  // NaN: the largest
  if (f == 0.0f) f = 0.0f;         // -0.0 ties 0.0
  uint32_t b;
  __builtin_memcpy(&b, &f, 4);
  return (b & 0x80000000u) != 0 ? ~b : (b | 0x80000000u);
}

inline uint64_t DoubleKey(double f) {
  if (f != f) return ~uint64_t{0};
  if (f == 0.0) f = 0.0;
  uint64_t b;
  __builtin_memcpy(&b, &f, 8);
  const uint64_t sign = uint64_t{1} << 63;
  return (b & sign) != 0 ? ~b : (b | sign);
}

// SortKey<T>::Of(v): the key of GM element v (K: uint32_t or uint64_t).
// FP16, BF16, INT8, INT16, UINT8 and BOOL go through their exact f32 value.
template <typename T>
struct SortKey {
  using K = uint32_t;
  static K Of(T v) { return FloatKey(Elem<T>::Load(v)); }
};
template <>
struct SortKey<int32_t> {
  using K = uint32_t;
  static K Of(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
};
template <>
struct SortKey<int64_t> {
  using K = uint64_t;
  static K Of(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
};
template <>
struct SortKey<double> {
  using K = uint64_t;
  static K Of(double v) { return DoubleKey(v); }
};

// Rows up to this long take the insertion sort.
constexpr int64_t kInsertionRow = 32;

// Sorts (key[i], idx[i]), i < n, stably by key; key2/idx2 are scratch of n
// each. Returns where the sorted indices are (idx or idx2).
template <typename K>
inline const uint32_t* SortByKey(K* key, uint32_t* idx, K* key2, uint32_t* idx2, int64_t n) {
  if (n <= kInsertionRow) {
    for (int64_t i = 1; i < n; ++i) {
      const K k = key[i];
      const uint32_t x = idx[i];
      int64_t j = i;
      for (; j > 0 && key[j - 1] > k; --j) {  // strict: equal keys stay in order
        key[j] = key[j - 1];
        idx[j] = idx[j - 1];
      }
      key[j] = k;
      idx[j] = x;
    }
    return idx;
  }
  constexpr int kBytes = sizeof(K);
  uint32_t count[kBytes][256];
  for (int b = 0; b < kBytes; ++b) {
    for (int d = 0; d < 256; ++d) count[b][d] = 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    const K k = key[i];
    for (int b = 0; b < kBytes; ++b) ++count[b][(k >> (8 * b)) & 0xFF];
  }
  for (int b = 0; b < kBytes; ++b) {
    const int shift = 8 * b;
    // Every key has the same byte here: this pass would not move anything.
    if (count[b][(key[0] >> shift) & 0xFF] == static_cast<uint32_t>(n)) continue;
    uint32_t at[256];
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      at[d] = sum;
      sum += count[b][d];
    }
    for (int64_t i = 0; i < n; ++i) {
      const K k = key[i];
      const uint32_t to = at[(k >> shift) & 0xFF]++;
      key2[to] = k;
      idx2[to] = idx[i];
    }
    K* tk = key;
    key = key2;
    key2 = tk;
    uint32_t* ti = idx;
    idx = idx2;
    idx2 = ti;
  }
  return idx;
}

// The first `need` positions of a row of n > need keys, when need is at
// most this: a selection.
constexpr int64_t kSelectMax = 32;

// Keeps the `need` smallest of keys arriving in input order, sorted in
// best/best_idx (`*m` of them so far): a key enters only below the largest
// kept, after every kept key equal to it, so ties keep their input order.
template <typename K>
inline void Keep(K k, uint32_t i, int64_t need, K* best, uint32_t* best_idx, int64_t* m) {
  if (*m == need && !(k < best[need - 1])) return;
  int64_t j = *m < need ? (*m)++ : need - 1;
  for (; j > 0 && best[j - 1] > k; --j) {
    best[j] = best[j - 1];
    best_idx[j] = best_idx[j - 1];
  }
  best[j] = k;
  best_idx[j] = i;
}

// Rows longer than this whose tile needs only some of their ranks (a
// chunk of positions) sort only the keys that can hold those ranks.
constexpr int64_t kFilterMin = 4096;
// The top bits of a key that bucket it for that filter.
constexpr int kFilterBits = 11;

// The stable order of ranks [first, need) of the n keys key[i] (positions
// idx[i] = i; key2/idx2 scratch of n each): one pass buckets the keys by
// their top kFilterBits, a second keeps, in input order, the keys in the
// buckets that hold those ranks, and only they are sorted. Returns where
// the sorted positions are, and in *below how many keys rank before them
// (rank r is then order[r - *below]); when the kept keys would be more than
// half of the row, it sorts the whole row (*below 0).
template <typename K>
inline const uint32_t* SortRanks(K* key, uint32_t* idx, K* key2, uint32_t* idx2, int64_t n,
                                 int64_t first, int64_t need, int64_t* below) {
  *below = 0;
  if (n < kFilterMin || first >= need || (first == 0 && need >= n)) {
    return SortByKey(key, idx, key2, idx2, n);
  }
  constexpr int kShift = static_cast<int>(8 * sizeof(K)) - kFilterBits;
  uint32_t count[1 << kFilterBits] = {};
  for (int64_t i = 0; i < n; ++i) ++count[key[i] >> kShift];
  int64_t lo = 0, before = 0;
  while (before + count[lo] <= first) before += count[lo++];
  int64_t hi = lo, through = before + count[lo];
  while (through < need) through += count[++hi];
  const int64_t m = through - before;
  if (2 * m > n) return SortByKey(key, idx, key2, idx2, n);
  int64_t t = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = static_cast<int64_t>(key[i] >> kShift);
    if (b < lo || b > hi) continue;
    key2[t] = key[i];
    idx2[t] = idx[i];
    ++t;
  }
  *below = before;
  return SortByKey(key2, idx2, key, idx, m);
}

}  // namespace sort_internal

// MSORT: for every row of the tile (its offsets o0..o3 plus its element
// coordinates in the dims other than K), the buffer's row along dim K (n
// elements, stride s_K; dim 3 contiguous) is sorted stably (Desc: largest
// first), and element j along K of the tile gets the position (0 .. n-1)
// of the row's element ranked o_K + j (0 past the row's end). The tile is
// dense row-major int64; only its elements below (x0, x1, x2, x3) are
// written (a tail's extents; the layout stays E0..E3). The strides, n and
// the extents are run-time values: one function serves every size.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, bool Desc>
inline void MSortN(int64_t* __restrict dst, const T* __restrict src, int64_t o0, int64_t o1,
                   int64_t o2, int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n,
                   int64_t x0, int64_t x1, int64_t x2, int64_t x3) {
  using Key = typename sort_internal::SortKey<T>::K;
  const int64_t sk = K == 0 ? s0 : K == 1 ? s1 : K == 2 ? s2 : 1;
  const int64_t ok = K == 0 ? o0 : K == 1 ? o1 : K == 2 ? o2 : o3;
  const int64_t xk = K == 0 ? x0 : K == 1 ? x1 : K == 2 ? x2 : x3;
  constexpr int64_t kT2 = E3, kT1 = E2 * E3, kT0 = E1 * E2 * E3;
  constexpr int64_t kTk = K == 0 ? kT0 : K == 1 ? kT1 : K == 2 ? kT2 : 1;
  // The tile's positions need the row's first `need` ranks.
  const int64_t need = ok + xk < n ? ok + xk : n;
  if (need <= 0) {  // the tile lies past the rows' end
    for (int64_t i0 = 0; i0 < x0; ++i0) {
      for (int64_t i1 = 0; i1 < x1; ++i1) {
        for (int64_t i2 = 0; i2 < x2; ++i2) {
          for (int64_t i3 = 0; i3 < x3; ++i3) dst[i0 * kT0 + i1 * kT1 + i2 * kT2 + i3] = 0;
        }
      }
    }
    return;
  }
  const bool select = need <= sort_internal::kSelectMax && need < n;
  constexpr int64_t kStack = 512;
  Key key_stack[2 * kStack];
  uint32_t idx_stack[2 * kStack];
  Key* key = key_stack;
  uint32_t* idx = idx_stack;
  void* heap = nullptr;
  if (!select && n > kStack) {
    heap = __builtin_malloc(static_cast<unsigned long>(n) * 2 * (sizeof(Key) + 4));
    key = static_cast<Key*>(heap);
    idx = reinterpret_cast<uint32_t*>(key + 2 * n);
  }
  for (int64_t i0 = 0; i0 < (K == 0 ? 1 : x0); ++i0) {
    for (int64_t i1 = 0; i1 < (K == 1 ? 1 : x1); ++i1) {
      for (int64_t i2 = 0; i2 < (K == 2 ? 1 : x2); ++i2) {
        for (int64_t i3 = 0; i3 < (K == 3 ? 1 : x3); ++i3) {
          const T* row = src + IndexedRowBase<K>(o0, o1, o2, o3, i0, i1, i2, s0, s1, s2) +
                         (K == 3 ? 0 : i3);
          const uint32_t* order;
          int64_t below = 0;  // the ranks before order[0]
          if (select) {
            int64_t m = 0;
            for (int64_t j = 0; j < n; ++j) {
              const Key k = sort_internal::SortKey<T>::Of(row[j * sk]);
              sort_internal::Keep(Desc ? static_cast<Key>(~k) : k, static_cast<uint32_t>(j),
                                  need, key, idx, &m);
            }
            order = idx;
          } else {
            for (int64_t j = 0; j < n; ++j) {
              const Key k = sort_internal::SortKey<T>::Of(row[j * sk]);
              key[j] = Desc ? static_cast<Key>(~k) : k;
              idx[j] = static_cast<uint32_t>(j);
            }
            order = sort_internal::SortRanks(key, idx, key + n, idx + n, n, ok, need, &below);
          }
          int64_t* out = dst + i0 * kT0 + i1 * kT1 + i2 * kT2 + i3;
          for (int64_t j = 0; j < xk; ++j) {
            const int64_t r = ok + j;
            out[j * kTk] = r < n ? static_cast<int64_t>(order[r - below]) : 0;
          }
        }
      }
    }
  }
  if (heap != nullptr) __builtin_free(heap);
}

// MSortN over the whole tile.
template <typename T, int64_t E0, int64_t E1, int64_t E2, int64_t E3, int K, bool Desc>
inline void MSort(int64_t* __restrict dst, const T* __restrict src, int64_t o0, int64_t o1,
                  int64_t o2, int64_t o3, int64_t s0, int64_t s1, int64_t s2, int64_t n) {
  MSortN<T, E0, E1, E2, E3, K, Desc>(dst, src, o0, o1, o2, o3, s0, s1, s2, n, E0, E1, E2, E3);
}

}  // namespace pto_tile

#endif  // PTO_TILE_SORT_H_
