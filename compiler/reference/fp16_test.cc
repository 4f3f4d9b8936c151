#include "compiler/reference/fp16.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace pto::reference {
namespace {

TEST(Fp16Test, KnownValues) {
  EXPECT_EQ(DoubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalf(-2.0), 0xC000);
  EXPECT_EQ(DoubleToHalf(0.0), 0x0000);
  EXPECT_EQ(DoubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(DoubleToHalf(65504.0), 0x7BFF);        // largest finite
  EXPECT_EQ(DoubleToHalf(65519.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalf(65520.0), 0x7C00);        // tie rounds to infinity
  EXPECT_EQ(DoubleToHalf(-1e9), 0xFC00);
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(DoubleToHalf(3 * std::ldexp(1.0, -25)), 0x0002);  // tie to even
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie, even
  EXPECT_EQ(DoubleToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie, even
  EXPECT_EQ(DoubleToHalf(2.0 - std::ldexp(1.0, -12)), 0x4000);  // carries
  EXPECT_TRUE(std::isnan(HalfToFloat(DoubleToHalf(NAN))));
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0xFC00), -INFINITY);
}

TEST(Fp16Test, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    const float f = HalfToFloat(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(DoubleToHalf(f), h) << std::hex << bits;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's own double -> _Float16 conversion is an independent oracle.
TEST(Fp16Test, MatchesCompilerConversion) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-26, 17);
  std::uniform_real_distribution<double> mantissa(1, 2);
  for (int i = 0; i < 200000; ++i) {
    double x = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
    if (i % 2) x = -x;
    const _Float16 h = static_cast<_Float16>(x);
    uint16_t expected;
    static_assert(sizeof(h) == 2);
    __builtin_memcpy(&expected, &h, 2);
    ASSERT_EQ(DoubleToHalf(x), expected) << x;
  }
}
#endif

TEST(Fp16Test, UlpDistance) {
  EXPECT_EQ(HalfUlpDistance(0x3C00, 0x3C00), 0);
  EXPECT_EQ(HalfUlpDistance(0x3C00, 0x3C01), 1);
  EXPECT_EQ(HalfUlpDistance(0x0000, 0x8000), 0);
  EXPECT_EQ(HalfUlpDistance(0x0001, 0x8001), 2);
  EXPECT_EQ(HalfUlpDistance(0x7BFF, 0x7C00), 1);
}

}  // namespace
}  // namespace pto::reference
