// pto_tile.h's f32 erf/erfc on x86-64-v3 (Erf8/Erfc8 through TErf/TErfc),
// built with that ISA level as kernels for the host-x86_64-v3 target are:
// within 2e-7 absolute of glibc's double erf/erfc (the bound is 1e-6)
// over 2^22 inputs spread over every binade of both signs (subnormals
// included), a dense sweep of [-4.5, 4.5] and the floats around each piece
// boundary; the bound is 1.4-2.7x the exhaustive maximum (7.5e-8 erf,
// 1.34e-7 erfc, 1.39e-7 for v4's Erfc16, over all 2^32 inputs:
// numerics/erf_check and erf_check_v4 check, too slow for a test),
// so a wrong coefficient or piece fails here. NaN, +-inf and -0.0 as
// numpy/torch give them; results never depend on the tile shape. erfc's
// tail (x > 2) keeps relative accuracy: ErfcTailRelativeError.
//
// pto_tile_erf_test_v4 builds this file with -march=x86-64-v4: TErf/TErfc
// and the checks below then run Erf16/Erfc16 (16 lanes; Erfc16 has its own
// pieces for x <= 2), and SixteenLanesGiveTheEightLaneBits compares the
// bits they share with Erf8/Erfc8.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_erf.h"
#include "compiler/targets/host/pto_tile_exp.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

#if !PTO_TILE_FAST_ERF
#error "pto_tile_erf_test is built with -march=x86-64-v3 or -v4 (AVX2 and FMA)"
#endif

namespace {

using pto_tile::BitsFromFloat;
using pto_tile::FloatFromBits;

// erf/erfc over n values as TErf/TErfc compute them for this build's ISA.
void MapErf(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  pto_tile::Map16<pto_tile::Erf16>(d, a, n);
#else
  pto_tile::Map8<pto_tile::Erf8>(d, a, n);
#endif
}
void MapErfc(float* d, const float* a, int64_t n) {
#if defined(__AVX512F__)
  pto_tile::Map16<pto_tile::Erfc16>(d, a, n);
#else
  pto_tile::Map8<pto_tile::Erfc8>(d, a, n);
#endif
}

// The largest |got - want| of erf and erfc over xs (NaN inputs skipped),
// in tiles of 1000 (a partial last one too); the first few results outside
// `bound` or outside [-1, 1] / [0, 2] are failures.
void CheckAbsolute(const std::vector<float>& xs, double bound, double* worst_erf,
                   double* worst_erfc) {
  std::vector<float> e(xs.size()), c(xs.size());
  for (size_t i = 0; i < xs.size(); i += 1000) {
    const int64_t n = std::min<int64_t>(1000, xs.size() - i);
    MapErf(e.data() + i, xs.data() + i, n);
    MapErfc(c.data() + i, xs.data() + i, n);
  }
  int failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 10; ++i) {
    if (std::isnan(xs[i])) continue;
    const double x = xs[i];
    const double de = std::fabs(e[i] - std::erf(x)), dc = std::fabs(c[i] - std::erfc(x));
    *worst_erf = std::max(*worst_erf, de);
    *worst_erfc = std::max(*worst_erfc, dc);
    if (!(de <= bound) || !(e[i] >= -1.0f && e[i] <= 1.0f)) {
      ++failures;
      ADD_FAILURE() << "erf(" << std::hexfloat << xs[i] << ") = " << e[i] << ", off by "
                    << std::defaultfloat << de;
    }
    if (!(dc <= bound) || !(c[i] >= 0.0f && c[i] <= 2.0f)) {
      ++failures;
      ADD_FAILURE() << "erfc(" << std::hexfloat << xs[i] << ") = " << c[i] << ", off by "
                    << std::defaultfloat << dc;
    }
  }
}

// Every float's bits, sampled: 2^22 patterns 1024 apart plus an odd offset.
std::vector<float> SampleOfEveryBinade() {
  std::vector<float> xs;
  for (uint64_t i = 0; i < (uint64_t{1} << 22); ++i) {
    xs.push_back(FloatFromBits(static_cast<uint32_t>(i * 1024 + (i * 37) % 1024)));
  }
  return xs;
}

#if defined(__AVX512F__)
// Erf16 takes Erf8's steps per lane, and Erfc16's tail (x > 2) Erfc8's: the
// same bits (checked over all 2^32 inputs by numerics/erf_check_v4 same16;
// here a sample, a sweep of the tail's pieces and tiles whose last vector
// is partial). Erfc16's own main path (x <= 2) is checked for accuracy by
// the tests below, which run it in this build.
TEST(PtoTileErfTest, SixteenLanesGiveTheEightLaneBits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> xs = SampleOfEveryBinade();
  for (int i = 0; i <= 200000; ++i) xs.push_back(-11.0f + 22.0f * static_cast<float>(i) / 200000);
  std::vector<float> e8(xs.size()), c8(xs.size()), e16(xs.size()), c16(xs.size());
  for (size_t i = 0; i < xs.size(); i += 997) {  // partial last vectors of every length
    const int64_t n = std::min<int64_t>(997, xs.size() - i);
    pto_tile::Map8<pto_tile::Erf8>(e8.data() + i, xs.data() + i, n);
    pto_tile::Map8<pto_tile::Erfc8>(c8.data() + i, xs.data() + i, n);
    pto_tile::Map16<pto_tile::Erf16>(e16.data() + i, xs.data() + i, n);
    pto_tile::Map16<pto_tile::Erfc16>(c16.data() + i, xs.data() + i, n);
  }
  int failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 10; ++i) {
    if (BitsFromFloat(e8[i]) != BitsFromFloat(e16[i]) ||
        (!(xs[i] <= 2.0f) && BitsFromFloat(c8[i]) != BitsFromFloat(c16[i]))) {
      ++failures;
      ADD_FAILURE() << "x = " << std::hexfloat << xs[i] << ": erf " << e16[i] << " vs " << e8[i]
                    << ", erfc " << c16[i] << " vs " << c8[i];
    }
  }
  // A masked tail never writes past n.
  float d[20];
  for (float& v : d) v = 42.0f;
  pto_tile::Map16<pto_tile::Erfc16>(d, xs.data(), 3);
  EXPECT_EQ(d[3], 42.0f);
  pto_tile::Map16<pto_tile::Erfc16>(d, xs.data(), 19);
  EXPECT_EQ(d[19], 42.0f);
}
#endif

TEST(PtoTileErfTest, WithinTwoTenthsOfAMillionthOnASample) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  // 2^22 bit patterns 1024 apart (plus an odd offset so low mantissa bits
  // vary): every binade of both signs, subnormals, inf and NaN.
  std::vector<float> xs = SampleOfEveryBinade();
  // A dense sweep of the pieces, where the error is largest.
  for (int i = 0; i <= 900000; ++i) xs.push_back(-4.5f + 9.0f * static_cast<float>(i) / 900000);
  // 64 floats either side of each piece boundary, both signs: Erf8's are
  // (k + 1/2) * 0.55 and its clamp at 4.12;
  // Erfc16's (x86-64-v4) are (k + 1/2) * 0.37, k = -11..5, and its clamp
  // at -3.85.
  std::vector<float> boundaries;
  for (int k = 0; k <= 7; ++k) boundaries.push_back((k + 0.5f) * 0.55f);
  boundaries.push_back(4.12f);
  for (int k = 0; k <= 10; ++k) boundaries.push_back((k + 0.5f) * 0.37f);
  boundaries.push_back(3.85f);
  for (float b : boundaries) {
    for (int j = -64; j <= 64; ++j) {
      const float x = FloatFromBits(BitsFromFloat(b) + j);
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  double worst_erf = 0, worst_erfc = 0;
  CheckAbsolute(xs, 2e-7, &worst_erf, &worst_erfc);
  std::printf("worst absolute error: erf %.3g, erfc %.3g\n", worst_erf, worst_erfc);
}

// erfc's tail keeps relative accuracy (ErfcTail8, x > 2): within 6e-7 of
// glibc's double erfc relative to it wherever that is a normal f32 (2x the
// exhaustive maximum, 2.96e-7 over every float in (2, 9.19]), on a dense
// sweep of each piece [m, m + 1] and the floats around each boundary; below
// FLT_MIN (x > 9.19) within two subnormal steps; 0 from 10.0546. Also
// reached through vectors mixing tail and non-tail lanes.
TEST(PtoTileErfTest, ErfcTailRelativeError) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> xs;
  for (int i = 1; i <= 400000; ++i) xs.push_back(2.0f + 8.1f * static_cast<float>(i) / 400000);
  for (int m = 2; m <= 10; ++m) {
    for (int j = -64; j <= 64; ++j) xs.push_back(FloatFromBits(BitsFromFloat(float(m)) + j));
  }
  // Every other lane below 2: vectors that mix tail and 1 - erf lanes.
  for (size_t i = 0; i < xs.size(); i += 2) xs[i] = xs[i] > 2.0f ? xs[i] : 1.5f;
  std::vector<float> c(xs.size());
  MapErfc(c.data(), xs.data(), xs.size());
  double worst = 0;
  int failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 10; ++i) {
    if (!(xs[i] > 2.0f)) continue;
    const double want = std::erfc(static_cast<double>(xs[i]));
    const double d = std::fabs(c[i] - want);
    const bool ok = want >= FLT_MIN ? d <= 6e-7 * want : d <= 2.9e-45;
    if (want >= FLT_MIN) worst = std::max(worst, d / want);
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "erfc(" << std::hexfloat << xs[i] << ") = " << c[i] << ", want " << want
                    << std::defaultfloat << ", relative error " << d / want;
    }
  }
  std::printf("worst relative error of erfc for x > 2: %.3g\n", worst);
  // Named points: erfc(3), erfc(3.5) (1 - erf: 0.2%, 4% off), erfc(3.9561567)
  // (1 - erf: 0), erfc(5); 0 past the underflow point.
  for (float x : {3.0f, 3.5f, 3.9561567f, 5.0f, 9.0f}) {
    float y[1];
    pto_tile::TErfc<1>(y, &x);
    EXPECT_NEAR(y[0] / std::erfc(static_cast<double>(x)), 1.0, 6e-7) << x;
  }
  for (float x : {10.0546f, 10.1f, 20.0f}) {
    float y[1];
    pto_tile::TErfc<1>(y, &x);
    EXPECT_EQ(y[0], 0.0f) << x;
  }
}

TEST(PtoTileErfTest, SpecialValuesAsNumpy) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const float x[9] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -1e-42f, 1e30f};
  float e[9], c[9];
  pto_tile::TErf<9>(e, x);
  pto_tile::TErfc<9>(c, x);
  EXPECT_TRUE(std::isnan(e[0]) && std::isnan(e[1]));
  EXPECT_TRUE(std::isnan(c[0]) && std::isnan(c[1]));
  EXPECT_EQ(e[2], 1.0f);
  EXPECT_EQ(e[3], -1.0f);
  EXPECT_EQ(c[2], 0.0f);
  EXPECT_EQ(c[3], 2.0f);
  EXPECT_EQ(BitsFromFloat(e[4]), BitsFromFloat(0.0f));
  EXPECT_EQ(BitsFromFloat(e[5]), BitsFromFloat(-0.0f));
  EXPECT_EQ(c[4], 1.0f);
  EXPECT_EQ(c[5], 1.0f);
  // Tiny x: erf(x) ~ 2x/sqrt(pi), relative accuracy kept (subnormals too).
  EXPECT_NEAR(e[6] / (1.1283791670955126 * 1e-30), 1.0, 1e-6);
  EXPECT_NEAR(e[7] / (1.1283791670955126 * static_cast<double>(x[7])), 1.0, 2e-3);
  EXPECT_EQ(e[8], 1.0f);
  EXPECT_EQ(c[8], 0.0f);
}

TEST(PtoTileErfTest, ResultsDoNotDependOnTheTileShape) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t N = 37;
  float a[N], whole[N], one[1];
  for (int64_t i = 0; i < N; ++i) a[i] = -4.9f + 0.27f * static_cast<float>(i);
  pto_tile::TErfc<N>(whole, a);
  for (int64_t i = 0; i < N; ++i) {
    pto_tile::TErfc<1>(one, a + i);
    EXPECT_EQ(BitsFromFloat(one[0]), BitsFromFloat(whole[i])) << a[i];
  }
  pto_tile::TErf<N>(whole, a);
  for (int64_t i = 0; i < N; ++i) {
    pto_tile::TErf<1>(one, a + i);
    EXPECT_EQ(BitsFromFloat(one[0]), BitsFromFloat(whole[i])) << a[i];
  }
}

}  // namespace
