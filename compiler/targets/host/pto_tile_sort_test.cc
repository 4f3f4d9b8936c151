// pto_tile.h's MSort against std::stable_sort with torch's order (NaN the
// largest, -0.0 tying 0.0, ties in input order): rows short enough for the
// insertion sort and long enough for the radix sort (and its heap scratch),
// both directions, FP32 with NaN/inf/-0.0 and many ties, FP16, BF16, INT8,
// INT32 and INT64 at their extremes, DOUBLE, a sorted dim other than the
// last, a tile that holds a later chunk of the positions, and the selection
// of the first few ranks of a longer row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_sort.h"
#include "gtest/gtest.h"

namespace {

template <typename T>
auto ValueOf(T v) {
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                std::is_same_v<T, double>) {
    return v;
  } else {
    return pto_tile::Elem<T>::Load(v);
  }
}

// torch.sort(stable=True)'s positions of `row`.
template <typename T>
std::vector<int64_t> StablePositions(const std::vector<T>& row, bool descending) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const auto x = ValueOf(row[a]), y = ValueOf(row[b]);
    const bool xn = x != x, yn = y != y;  // NaN: the largest
    if (descending) return xn ? !yn : (!yn && x > y);
    return yn ? !xn : (!xn && x < y);
  });
  return order;
}

// MSort of one row of n elements (the tile [1, 1, 1, E] at position
// offset `ok`) against the stable sort's positions ok .. ok + E - 1.
template <typename T, int64_t E>
void CheckRow(const std::vector<T>& row, bool descending, int64_t ok = 0) {
  const int64_t n = static_cast<int64_t>(row.size());
  std::vector<int64_t> got(E, -1);
  if (descending) {
    pto_tile::MSort<T, 1, 1, 1, E, 3, true>(got.data(), row.data(), 0, 0, 0, ok, n, n, n, n);
  } else {
    pto_tile::MSort<T, 1, 1, 1, E, 3, false>(got.data(), row.data(), 0, 0, 0, ok, n, n, n, n);
  }
  const std::vector<int64_t> want = StablePositions(row, descending);
  for (int64_t j = 0; j < E; ++j) {
    ASSERT_EQ(got[j], want[ok + j]) << "n=" << n << " descending=" << descending
                                    << " position " << ok + j;
  }
}

std::vector<float> SpecialFloats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(0, 9);
  std::normal_distribution<float> normal;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> row(n);
  for (float& v : row) {
    switch (pick(rng)) {
      case 0: v = nan; break;
      case 1: v = -nan; break;
      case 2: v = pick(rng) < 5 ? -0.0f : 0.0f; break;
      case 3: v = pick(rng) < 5 ? inf : -inf; break;
      case 4: v = static_cast<float>(pick(rng)); break;  // many ties
      default: v = normal(rng);
    }
  }
  return row;
}

TEST(PtoTileSortTest, Fp32SpecialValuesEveryLengthBothWays) {
  for (bool descending : {false, true}) {
    CheckRow<float, 1>(SpecialFloats(1, 1), descending);
    CheckRow<float, 5>(SpecialFloats(5, 2), descending);
    CheckRow<float, 32>(SpecialFloats(32, 3), descending);    // the insertion sort's longest
    CheckRow<float, 33>(SpecialFloats(33, 4), descending);    // the radix sort's shortest
    CheckRow<float, 512>(SpecialFloats(512, 5), descending);  // stack scratch
    CheckRow<float, 10000>(SpecialFloats(10000, 6), descending);  // heap scratch
    CheckRow<float, 8>(SpecialFloats(10000, 7), descending);  // top 8
  }
}

TEST(PtoTileSortTest, AllEqualAndAllNanKeepInputOrder) {
  CheckRow<float, 100>(std::vector<float>(100, 2.5f), true);
  CheckRow<float, 100>(std::vector<float>(100, std::nanf("")), false);
  std::vector<float> zeros(64);
  for (int i = 0; i < 64; ++i) zeros[i] = i % 3 == 0 ? -0.0f : 0.0f;
  CheckRow<float, 64>(zeros, true);
}

TEST(PtoTileSortTest, ALaterChunkOfPositions) {
  CheckRow<float, 100>(SpecialFloats(1000, 8), true, 300);
  CheckRow<float, 7>(SpecialFloats(20, 9), false, 13);
}

// Chunks of the ranks of long rows: the filter by the keys' top bits (a
// chunk in the middle, at the start, at the end; 64-bit keys; both ways),
// and rows whose keys share their top bits (the whole row sorted instead).
TEST(PtoTileSortTest, ChunksOfALongRowSortOnlyTheirKeys) {
  for (bool descending : {false, true}) {
    const std::vector<float> row = SpecialFloats(20000, 17);
    CheckRow<float, 500>(row, descending, 3000);
    CheckRow<float, 4096>(row, descending, 0);
    CheckRow<float, 4096>(row, descending, 15904);  // the last 4096
    std::vector<float> narrow(9000);                 // every key in a few buckets
    for (size_t i = 0; i < narrow.size(); ++i) narrow[i] = 1.0f + (i * 7919 % 1000) * 1e-4f;
    CheckRow<float, 1000>(narrow, descending, 4000);
    CheckRow<float, 1000>(std::vector<float>(9000, 3.0f), descending, 2000);  // all tied
    std::vector<int64_t> wide(12000);
    for (size_t i = 0; i < wide.size(); ++i) {
      wide[i] = static_cast<int64_t>((i * 2654435761u) % 100003) * (int64_t{1} << 40) -
                (int64_t{1} << 61);
    }
    CheckRow<int64_t, 777>(wide, descending, 5000);
  }
}

// The first few ranks of a longer row: the selection (ties, NaN, -0.0;
// 32-bit and 64-bit keys; a chunk after the first; the largest need).
TEST(PtoTileSortTest, TheFirstRanksOfALongRowBySelection) {
  for (bool descending : {false, true}) {
    CheckRow<float, 1>(SpecialFloats(3000, 13), descending);
    CheckRow<float, 7>(SpecialFloats(100, 14), descending, 20);
    CheckRow<float, 32>(SpecialFloats(33, 15), descending);
    CheckRow<float, 32>(std::vector<float>(500, 1.0f), descending);
    std::vector<int64_t> wide(700);
    for (size_t i = 0; i < wide.size(); ++i) {
      wide[i] = static_cast<int64_t>((i * 37) % 11) * (int64_t{1} << 50) - 3;
    }
    CheckRow<int64_t, 16>(wide, descending);
  }
}

TEST(PtoTileSortTest, HalfAndBf16) {
  const std::vector<float> f = SpecialFloats(3000, 10);
  std::vector<pto_tile::half> h(f.size());
  std::vector<pto_tile::bf16> b(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    h[i] = pto_tile::Elem<pto_tile::half>::Store(f[i]);
    b[i] = pto_tile::Elem<pto_tile::bf16>::Store(f[i]);
  }
  for (bool descending : {false, true}) {
    CheckRow<pto_tile::half, 3000>(h, descending);
    CheckRow<pto_tile::bf16, 3000>(b, descending);
  }
}

TEST(PtoTileSortTest, IntegersAtTheirExtremesAndDouble) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-50, 50);
  std::vector<int32_t> i32(2000);
  std::vector<int64_t> i64(2000);
  std::vector<int8_t> i8(40);
  std::vector<double> f64(2000);
  for (size_t i = 0; i < i32.size(); ++i) {
    i32[i] = small(rng);
    i64[i] = small(rng) * (int64_t{1} << 40);
    f64[i] = small(rng) * 0.25;
  }
  for (int8_t& v : i8) v = static_cast<int8_t>(small(rng));
  i32[5] = std::numeric_limits<int32_t>::min();
  i32[6] = std::numeric_limits<int32_t>::max();
  i64[5] = std::numeric_limits<int64_t>::min();
  i64[6] = std::numeric_limits<int64_t>::max();
  i64[7] = std::numeric_limits<int64_t>::max() - 1;
  f64[3] = std::nan("");
  f64[4] = -0.0;
  for (bool descending : {false, true}) {
    CheckRow<int32_t, 2000>(i32, descending);
    CheckRow<int64_t, 2000>(i64, descending);
    CheckRow<int8_t, 40>(i8, descending);
    CheckRow<double, 2000>(f64, descending);
  }
}

// A [2, 50, 3] buffer sorted along dim 1 (padded: K = 2), the tile
// [1, 2, 20, 2] at offsets (0, 0, 10, 1): positions 10..29 of rows
// (b, :, c) for b in 0..1, c in 1..2.
TEST(PtoTileSortTest, AlongAnInnerDimWithStrides) {
  const std::vector<float> gm = SpecialFloats(2 * 50 * 3, 12);
  std::vector<int64_t> got(2 * 20 * 2, -1);
  pto_tile::MSort<float, 1, 2, 20, 2, 2, true>(got.data(), gm.data(), 0, 0, 10, 1, 300, 150,
                                               3, 50);
  for (int b = 0; b < 2; ++b) {
    for (int c = 0; c < 2; ++c) {
      std::vector<float> row(50);
      for (int j = 0; j < 50; ++j) row[j] = gm[b * 150 + j * 3 + (c + 1)];
      const std::vector<int64_t> want = StablePositions(row, true);
      for (int j = 0; j < 20; ++j) {
        EXPECT_EQ(got[(b * 20 + j) * 2 + c], want[10 + j]) << b << " " << c << " " << j;
      }
    }
  }
}

// MSortN: the tile [1, 1, 4, 8] over a buffer [3, 11] along dim 1 (padded:
// K = 3), with run-time extents. Rows 1..2 (a tail of 2 of the tile's 4
// rows) and positions 8..10 (3 of 8: the row ends at 11) are written; the
// rest of the tile keeps what it held. A chunk that starts past the row's
// end writes zeros.
TEST(PtoTileSortTest, RunTimeExtentsWriteOnlyTheTail) {
  const std::vector<float> gm = SpecialFloats(3 * 11, 16);
  std::vector<int64_t> got(4 * 8, -1);
  pto_tile::MSortN<float, 1, 1, 4, 8, 3, false>(got.data(), gm.data(), 0, 0, 1, 8, 33, 33, 11,
                                                11, 1, 1, 2, 3);
  for (int r = 0; r < 4; ++r) {
    std::vector<int64_t> want(11, -1);
    if (r < 2) {
      want = StablePositions(
          std::vector<float>(gm.begin() + (1 + r) * 11, gm.begin() + (2 + r) * 11), false);
    }
    for (int j = 0; j < 8; ++j) {
      EXPECT_EQ(got[r * 8 + j], r < 2 && j < 3 ? want[8 + j] : -1) << r << " " << j;
    }
  }
  std::vector<int64_t> past(8, -1);
  pto_tile::MSortN<float, 1, 1, 1, 8, 3, true>(past.data(), gm.data(), 0, 0, 0, 16, 33, 33, 11,
                                               11, 1, 1, 1, 5);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(past[j], j < 5 ? 0 : -1) << j;
}

}  // namespace
