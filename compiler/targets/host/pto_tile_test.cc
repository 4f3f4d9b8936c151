// The tile header's arithmetic: exact f16 conversions and the tile loops.
#include "compiler/targets/host/pto_tile.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace {

using pto_tile::BitsFromFloat;
using pto_tile::FloatFromBits;
using pto_tile::FloatToHalf;
using pto_tile::HalfToFloat;

// Reference binary16 value of bits h, by the definition of the format.
double HalfValue(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(man, -24);
  else if (exp == 31) v = man ? std::nan("") : INFINITY;
  else v = std::ldexp(1024 + man, exp - 25);
  return sign ? -v : v;
}

// Reference round-to-nearest-even of f to binary16, by search over the
// finite positive halves (exact in double).
uint16_t ReferenceToHalf(float f) {
  if (std::isnan(f)) return 0x7e00 | (std::signbit(f) ? 0x8000 : 0);
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  // Halfway between the largest finite half (65504) and 2^16 rounds to inf.
  if (a >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0;
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    if (HalfValue(h) <= a) lo = h;
    else break;
  }
  const double dlo = a - HalfValue(lo);
  if (lo == 0x7bff) return sign | lo;  // below 65520: stays finite
  const double dhi = HalfValue(lo + 1) - a;
  if (dlo < dhi) return sign | lo;
  if (dhi < dlo) return sign | (lo + 1);
  return sign | ((lo & 1) ? lo + 1 : lo);  // tie: even mantissa
}

TEST(PtoTileTest, HalfToFloatIsExactForEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    const double want = HalfValue(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << h;
    } else {
      EXPECT_EQ(static_cast<double>(f), want) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(PtoTileTest, RoundTripPreservesEveryNonNanHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) continue;  // NaN
    EXPECT_EQ(FloatToHalf(HalfToFloat(b)), b) << h;
  }
}

TEST(PtoTileTest, FloatToHalfRoundsToNearestEven) {
  std::vector<float> cases = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f,
                              1e-8f, -1e-8f, 5.9604645e-8f, 2.9802322e-8f,
                              2.9802326e-8f, 6.1035156e-5f, INFINITY, -INFINITY,
                              1e30f, -1e30f, std::numeric_limits<float>::denorm_min()};
  // Exact ties between neighbouring halves, and one float either side.
  for (uint16_t h : {0x0000, 0x0001, 0x03fe, 0x03ff, 0x0400, 0x3c00, 0x3c01,
                     0x7bfe}) {
    const double mid = (HalfValue(h) + HalfValue(h + 1)) / 2;
    const float m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid);
    cases.push_back(m);
    cases.push_back(std::nextafter(m, 0.0f));
    cases.push_back(std::nextafter(m, INFINITY));
    cases.push_back(-m);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    // Random bit patterns in and around the binary16 range.
    uint32_t exp = 100 + rng() % 50;
    cases.push_back(FloatFromBits((rng() & 0x80000000u) | (exp << 23) |
                                  (rng() & 0x7fffff)));
  }
  for (float f : cases) {
    EXPECT_EQ(FloatToHalf(f), ReferenceToHalf(f))
        << f << " bits " << std::hex << BitsFromFloat(f);
  }
  EXPECT_EQ(FloatToHalf(std::nanf("")) & 0x7c00, 0x7c00);
  EXPECT_NE(FloatToHalf(std::nanf("")) & 0x3ff, 0);
}

#if defined(__FLT16_MAX__) && !defined(__clang__)
TEST(PtoTileTest, AgreesWithCompilerFloat16) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    const float f = FloatFromBits(rng());
    if (std::isnan(f)) continue;
    _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    ASSERT_EQ(FloatToHalf(f), bits) << f;
  }
}
#endif

TEST(PtoTileTest, LoadStoreAddressStridedRegions) {
  // GM f32[3,5]; tile [2,3] at offset (1,2).
  float gm[15];
  for (int i = 0; i < 15; ++i) gm[i] = static_cast<float>(i);
  float ub[6];
  pto_tile::TLoad<float, 1, 1, 2, 3>(ub, gm + 1 * 5 + 2, 0, 0, 5);
  const float want[6] = {7, 8, 9, 12, 13, 14};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(ub[i], want[i]);
  float doubled[6];
  pto_tile::TMulS<6>(doubled, ub, 2.0f);
  float out[15] = {};
  pto_tile::TStore<float, 1, 1, 2, 3>(out + 1 * 5 + 2, doubled, 0, 0, 5);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 5; ++c) {
      const bool inside = r >= 1 && c >= 2;
      EXPECT_EQ(out[r * 5 + c], inside ? 2 * gm[r * 5 + c] : 0) << r << "," << c;
    }
  }
}

TEST(PtoTileTest, ReversedScalarForms) {
  const float a[2] = {4, 8};
  float d[2];
  pto_tile::TRSubS<2>(d, a, 1.0f);
  EXPECT_EQ(d[0], -3);
  EXPECT_EQ(d[1], -7);
  pto_tile::TRDivS<2>(d, a, 2.0f);
  EXPECT_EQ(d[0], 0.5f);
  EXPECT_EQ(d[1], 0.25f);
}

}  // namespace
