// pto_tile.h's scans (TCumSum, TCumProd) and TRedLast against a plain loop
// in index order over the same accumulator: along an outer dim (the
// vectorized rows) and along the contiguous dim (double rows in 4 x 4
// blocks with AVX, the _v3 twin, and their leftover columns and rows; the
// one-row loop), seeded by a carry, on double, f32 and int64 tiles, with
// NaN, inf and int64 wrapping; the bits must be equal.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compiler/targets/host/pto_tile_scan.h"
#include "gtest/gtest.h"

namespace {

// The scan of the [outer, len, inner] tile `a` along len, seeded by
// carry[outer][inner], one operation per element in index order.
template <typename S, typename Op>
std::vector<S> Expected(const std::vector<S>& a, const std::vector<S>& carry, int64_t outer,
                        int64_t len, int64_t inner, Op op) {
  std::vector<S> d(a.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      S acc = carry[o * inner + j];
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + k) * inner + j;
        acc = op(acc, a[at]);
        d[at] = acc;
      }
    }
  }
  return d;
}

template <typename S>
bool SameBits(const std::vector<S>& x, const std::vector<S>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(S)) == 0;
}

template <typename S>
std::vector<S> Values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<S> v(n);
  if constexpr (std::is_integral_v<S>) {
    std::uniform_int_distribution<int64_t> dist(std::numeric_limits<int64_t>::min(),
                                                std::numeric_limits<int64_t>::max());
    for (S& x : v) x = dist(rng);
  } else {
    std::uniform_real_distribution<double> dist(-2, 2);
    for (S& x : v) x = static_cast<S>(dist(rng));
  }
  return v;
}

const auto kAdd = [](auto a, auto b) { return a + b; };
const auto kMul = [](auto a, auto b) { return a * b; };

// A [3, 5, 7] tile (padded [1, 3, 5, 7]) scanned along dim 1 (K = 2): the
// outer-dim form, 7 lanes per row.
template <typename S>
void CheckOuterDim() {
  const std::vector<S> a = Values<S>(3 * 5 * 7, 1), carry = Values<S>(3 * 7, 2);
  std::vector<S> got(a.size());
  pto_tile::TCumSum<1, 3, 5, 7, 2>(got.data(), a.data(), carry.data());
  EXPECT_TRUE(SameBits(got, Expected(a, carry, 3, 5, 7, kAdd)));
  pto_tile::TCumProd<1, 3, 5, 7, 2>(got.data(), a.data(), carry.data());
  EXPECT_TRUE(SameBits(got, Expected(a, carry, 3, 5, 7, kMul)));
}

// A [19, 33] tile scanned along its rows (K = 3): four blocks of four rows
// (eight blocks of columns and one column more) and three rows one at a
// time.
template <typename S>
void CheckContiguousDim() {
  const std::vector<S> a = Values<S>(19 * 33, 3), carry = Values<S>(19, 4);
  std::vector<S> got(a.size());
  pto_tile::TCumSum<1, 1, 19, 33, 3>(got.data(), a.data(), carry.data());
  EXPECT_TRUE(SameBits(got, Expected(a, carry, 19, 33, 1, kAdd)));
  pto_tile::TCumProd<1, 1, 19, 33, 3>(got.data(), a.data(), carry.data());
  EXPECT_TRUE(SameBits(got, Expected(a, carry, 19, 33, 1, kMul)));
}

TEST(PtoTileScan, DoubleMatchesTheLoopBitForBit) {
  CheckOuterDim<double>();
  CheckContiguousDim<double>();
}

TEST(PtoTileScan, FloatMatchesTheLoopBitForBit) {
  CheckOuterDim<float>();
  CheckContiguousDim<float>();
}

TEST(PtoTileScan, Int64WrapsLikeTorch) {
  // (The reference loop wraps through uint64: signed overflow is undefined.)
  const std::vector<int64_t> a = Values<int64_t>(19 * 33, 5), carry = Values<int64_t>(19, 6);
  std::vector<int64_t> got(a.size());
  auto wrap_add = [](int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  };
  auto wrap_mul = [](int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  };
  pto_tile::TCumSum<1, 1, 19, 33, 3>(got.data(), a.data(), carry.data());
  EXPECT_EQ(got, Expected(a, carry, 19, 33, 1, wrap_add));
  pto_tile::TCumProd<1, 1, 19, 33, 3>(got.data(), a.data(), carry.data());
  EXPECT_EQ(got, Expected(a, carry, 19, 33, 1, wrap_mul));
  const std::vector<int64_t> rows_carry = Values<int64_t>(3 * 19, 7);
  pto_tile::TCumSum<1, 3, 11, 19, 2>(got.data(), a.data(), rows_carry.data());
  EXPECT_EQ(got, Expected(a, rows_carry, 3, 11, 19, wrap_add));
}

TEST(PtoTileScan, NanAndInfCarryForward) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Two rows of 4 (the contiguous dim): a NaN poisons the rest of its row
  // only; inf - inf is NaN; the carry seeds each row.
  const std::vector<double> a = {1, nan, 2, 3, inf, 1, -inf, 5};
  const std::vector<double> carry = {10, -1};
  std::vector<double> got(8);
  pto_tile::TCumSum<1, 1, 2, 4, 3>(got.data(), a.data(), carry.data());
  EXPECT_EQ(got[0], 11);
  for (int k = 1; k < 4; ++k) EXPECT_TRUE(std::isnan(got[k])) << k;
  EXPECT_EQ(got[4], inf);
  EXPECT_EQ(got[5], inf);
  EXPECT_TRUE(std::isnan(got[6]));
  EXPECT_TRUE(std::isnan(got[7]));
}

TEST(PtoTileScan, RedLastTakesTheLastSlice) {
  std::vector<double> a(2 * 3 * 4);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<double>(k);
  std::vector<double> got(8);
  pto_tile::TRedLast<1, 2, 3, 4, 2>(got.data(), a.data());  // along dim 1 of [2, 3, 4]
  EXPECT_EQ(got, (std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23}));
  pto_tile::TRedLast<1, 1, 6, 4, 3>(got.data(), a.data());  // along the rows of [6, 4]
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 6),
            (std::vector<double>{3, 7, 11, 15, 19, 23}));
}

}  // namespace
