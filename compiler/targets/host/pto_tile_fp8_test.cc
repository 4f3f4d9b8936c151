// pto_tile_fp8.h's conversions (what kernels run) against the reference's
// (compiler/reference/fp8.h, double arithmetic): every code decodes to the
// same value, and f32 values at, around and between every pair of
// neighbouring codes encode to the same code. The Python suite checks both
// against a numpy decoder of its own (test_fp8.py).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "compiler/reference/fp8.h"
#include "compiler/targets/host/pto_tile.h"
#include "gtest/gtest.h"

namespace {

using pto::v1::DataType;

float Decode(uint8_t c, DataType t) {
  switch (t) {
    case pto::v1::DT_FP8E4M3: return pto_tile::Fp8E4M3ToFloat(c);
    case pto::v1::DT_FP8E5M2: return pto_tile::Fp8E5M2ToFloat(c);
    default: return pto_tile::Fp8E8M0ToFloat(c);
  }
}

uint8_t Encode(float f, DataType t) {
  switch (t) {
    case pto::v1::DT_FP8E4M3: return pto_tile::FloatToFp8E4M3(f);
    case pto::v1::DT_FP8E5M2: return pto_tile::FloatToFp8E5M2(f);
    default: return pto_tile::FloatToFp8E8M0(f);
  }
}

class Fp8Test : public testing::TestWithParam<DataType> {};

TEST_P(Fp8Test, EveryCodeDecodesAsTheReferenceAndRoundTrips) {
  const DataType t = GetParam();
  for (int c = 0; c < 256; ++c) {
    const double want = pto::reference::Fp8ToDouble(static_cast<uint8_t>(c), t);
    const float got = Decode(static_cast<uint8_t>(c), t);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), want) << c;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << c;
    if (std::isfinite(want)) {
      EXPECT_EQ(Encode(got, t), c) << c;
      EXPECT_EQ(pto::reference::DoubleToFp8(want, t), c) << c;
    }
  }
}

TEST_P(Fp8Test, EncodingMatchesTheReferenceAroundEveryCode) {
  const DataType t = GetParam();
  for (int c = 0; c < 256; ++c) {
    const float v = Decode(static_cast<uint8_t>(c), t);
    if (!std::isfinite(v)) continue;
    const float next = Decode(static_cast<uint8_t>(c + 1), t);
    std::vector<float> probes = {v, std::nextafter(v, INFINITY), std::nextafter(v, -INFINITY),
                                 v * 1.0625f, v * 0.9375f, v * 1.5f, v * 2.5f, -v};
    if (std::isfinite(next)) {
      const float mid = static_cast<float>((static_cast<double>(v) + next) / 2);  // ties
      probes.insert(probes.end(), {mid, std::nextafter(mid, INFINITY),
                                   std::nextafter(mid, -INFINITY), -mid});
    }
    for (float f : probes) {
      const uint8_t want = pto::reference::DoubleToFp8(f, t);
      const uint8_t got = Encode(f, t);
      if (std::isnan(pto::reference::Fp8ToDouble(want, t))) {
        EXPECT_TRUE(std::isnan(Decode(got, t))) << f;
      } else {
        EXPECT_EQ(got, want) << "code " << c << " value " << f;
      }
    }
  }
}

TEST_P(Fp8Test, SpecialValues) {
  const DataType t = GetParam();
  for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 1e38f, -1e38f, 3e-39f}) {
    const uint8_t want = pto::reference::DoubleToFp8(f, t);
    const uint8_t got = Encode(f, t);
    if (std::isnan(pto::reference::Fp8ToDouble(want, t))) {
      EXPECT_TRUE(std::isnan(Decode(got, t))) << f;
    } else {
      EXPECT_EQ(got, want) << f;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Fp8Test,
                         testing::Values(pto::v1::DT_FP8E4M3, pto::v1::DT_FP8E5M2,
                                         pto::v1::DT_FP8E8M0));

TEST(Fp8, E4M3Facts) {
  EXPECT_EQ(pto_tile::Fp8E4M3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(pto_tile::FloatToFp8E4M3(464.0f), 0x7E);        // tie to even: 448
  EXPECT_EQ(pto_tile::FloatToFp8E4M3(464.5f) & 0x7F, 0x7F);  // past: NaN
  EXPECT_EQ(pto_tile::FloatToFp8E4M3(-INFINITY), 0xFF);
  EXPECT_EQ(pto_tile::Fp8E4M3ToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(pto_tile::FloatToFp8E4M3(std::ldexp(1.0f, -10)), 0x00);  // tie to even: 0
  EXPECT_EQ(pto_tile::FloatToFp8E4M3(std::ldexp(3.0f, -10)), 0x02);  // tie to even: 2^-8
}

TEST(Fp8, E5M2Facts) {
  EXPECT_EQ(pto_tile::Fp8E5M2ToFloat(0x7B), 57344.0f);
  EXPECT_EQ(pto_tile::FloatToFp8E5M2(61440.0f), 0x7C);  // tie rounds to even: inf
  EXPECT_EQ(pto_tile::FloatToFp8E5M2(61439.0f), 0x7B);
  EXPECT_EQ(pto_tile::FloatToFp8E5M2(NAN) & 0x7F, 0x7E);
  EXPECT_EQ(pto_tile::Fp8E5M2ToFloat(0x01), std::ldexp(1.0f, -16));
}

TEST(Fp8, E8M0Facts) {
  EXPECT_EQ(pto_tile::Fp8E8M0ToFloat(127), 1.0f);
  EXPECT_EQ(pto_tile::Fp8E8M0ToFloat(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(pto_tile::Fp8E8M0ToFloat(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(pto_tile::Fp8E8M0ToFloat(255)));
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(-4.0f), 129);  // the sign is dropped
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(0.0f), 0);
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(3.0f), 128);   // 1.5 * 2^1: tie to the even code
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(6.0f), 130);   // 1.5 * 2^2: tie to the even code
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(3.1f), 129);
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(INFINITY), 255);
  EXPECT_EQ(pto_tile::FloatToFp8E8M0(3.4e38f), 255);  // rounds past 2^127
}

}  // namespace
