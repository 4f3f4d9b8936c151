// pto_tile.h's f32 exp on x86-64-v3 (AVX2 + FMA: ExpMap, Exp8, ExpF32),
// built with that ISA level as kernels for the host-x86_64-v3 target are:
// faithful (within one ulp of the exact value, so within the 2e-6 bound)
// over a dense sweep of [-104, 89] and runs of consecutive floats, with inf,
// zero, subnormal and NaN results where they belong, the same bits from the
// 8-lane and the one-float forms, and sigmoid through it. (Exhaustively, over
// all 2^32 inputs, the error is at most 0.896 ulp, and the 8-lane and
// one-float forms agree: numerics/exp_check.cc, too slow for a test.) Built
// for x86-64-v4 too (pto_tile_exp_test_v4), where ExpMap runs 16 lanes: the
// same checks, and the 16-lane form against the 8-lane one.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_exp.h"
#include "compiler/targets/host/testing/double_reference.h"
#include "gtest/gtest.h"

#if !PTO_TILE_FAST_EXP
#error "pto_tile_exp_test is built with -march=x86-64-v3 or -v4 (AVX2 and FMA)"
#endif

namespace {

using pto_tile::BitsFromFloat;

// |got - exp(x)| in ulps of the exact value's binade (subnormal results: of
// the smallest subnormal); inf is 0 ulp off an exact value above FLT_MAX (it
// is then one of the two neighbours) and counts as 2^128 otherwise.
double UlpError(float x, float got) {
  const double want = std::exp(static_cast<double>(x));
  if (std::isinf(got) && got > 0 && want > FLT_MAX) return 0.0;
  const double g = std::isinf(got) ? std::ldexp(1.0, 128) : got;
  const int e = want < FLT_MIN ? -126 : std::ilogb(want);
  return std::fabs(g - want) / std::ldexp(1.0, e - 23);
}

// Runs ExpMap over `xs` in tiles of 1024 (a partial last one too) and checks
// every result: within one ulp and bit-identical to ExpF32.
void CheckFaithful(const std::vector<float>& xs, double* worst) {
  std::vector<float> got(xs.size());
  for (size_t i = 0; i < xs.size(); i += 1024) {
    const int64_t n = std::min<int64_t>(1024, xs.size() - i);
    pto_tile::ExpMap(got.data() + i, xs.data() + i, n);
  }
  int64_t failures = 0;
  for (size_t i = 0; i < xs.size() && failures < 10; ++i) {
    const double err = UlpError(xs[i], got[i]);
    *worst = std::max(*worst, err);
    if (err > 1.0) {
      ++failures;
      ADD_FAILURE() << "exp(" << xs[i] << ") = " << got[i] << ", " << err << " ulp off";
    }
    const float scalar = pto_tile::ExpF32(xs[i]);
    if (BitsFromFloat(scalar) != BitsFromFloat(got[i])) {
      ++failures;
      ADD_FAILURE() << "exp(" << xs[i] << "): 8 lanes " << got[i] << ", one float " << scalar;
    }
  }
}

TEST(PtoTileExpTest, FaithfulOverADenseSweep) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> xs;
  constexpr int64_t kSteps = 1 << 22;  // 2^22 points evenly over [-104, 89]
  for (int64_t i = 0; i <= kSteps; ++i) {
    xs.push_back(static_cast<float>(-104.0 + 193.0 * static_cast<double>(i) / kSteps));
  }
  // Runs of consecutive floats: around 0 (r = x), the ends of the 8-lane
  // range (|x| = 86), where results turn subnormal (-87.34) and overflow
  // (88.72), where they round to zero (-103.97), near ln2 / 2 (n changes).
  for (float start : {-1e-3f, 85.99f, -86.01f, -87.35f, 88.71f, -103.98f, 0.3465f}) {
    float x = start;
    for (int i = 0; i < (1 << 16); ++i) {
      xs.push_back(x);
      xs.push_back(-x);
      x = std::nextafter(x, INFINITY);
    }
  }
  double worst = 0;
  CheckFaithful(xs, &worst);
  EXPECT_LE(worst, 1.0);
  RecordProperty("worst_ulp", std::to_string(worst));
}

TEST(PtoTileExpTest, SpecialValues) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  const float in[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX,
                      FLT_MIN, FLT_TRUE_MIN, 89.0f, 88.8f, -104.0f, -200.0f, -103.0f, 1.0f};
  constexpr int64_t N = sizeof(in) / sizeof(in[0]);
  float out[N];
  pto_tile::TExp<N>(out, in);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], INFINITY);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[4], 1.0f);
  EXPECT_EQ(out[5], 1.0f);
  EXPECT_EQ(out[6], INFINITY);
  EXPECT_EQ(out[7], 0.0f);
  EXPECT_EQ(out[8], 1.0f);
  EXPECT_EQ(out[9], 1.0f);
  EXPECT_EQ(out[10], INFINITY);
  EXPECT_EQ(out[11], INFINITY);
  EXPECT_EQ(out[12], 0.0f);
  EXPECT_EQ(out[13], 0.0f);
  // exp(-103) = 1.3e-45: the subnormal 2^-149 (the nearest), not 0.
  EXPECT_EQ(out[14], FLT_TRUE_MIN);
  EXPECT_LE(UlpError(1.0f, out[15]), 1.0);
  // A NaN lane among ordinary ones does not disturb them.
  float mixed[8] = {0.5f, NAN, -1.0f, 2.0f, 3.0f, -4.0f, 5.0f, 6.0f}, r[8];
  pto_tile::TExp<8>(r, mixed);
  EXPECT_TRUE(std::isnan(r[1]));
  for (int i : {0, 2, 3, 4, 5, 6, 7}) {
    EXPECT_EQ(BitsFromFloat(r[i]), BitsFromFloat(pto_tile::ExpF32(mixed[i]))) << i;
    EXPECT_LE(UlpError(mixed[i], r[i]), 1.0) << i;
  }
}

// Sigmoid computes exp(-|x|) with the same function: within 2e-6 of the
// exact value, tiny (not 0) for large negative x.
TEST(PtoTileExpTest, SigmoidThroughFastExp) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t N = 1001;
  std::vector<float> a(N), d(N);
  for (int64_t i = 0; i < N; ++i) a[i] = -100.0f + 0.2f * static_cast<float>(i);
  pto_tile::TSigmoid<N>(d.data(), a.data());
  for (int64_t i = 0; i < N; ++i) {
    const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(a[i])));
    EXPECT_LE(std::fabs(d[i] - want), 2e-6 * want + 1e-45) << a[i];
  }
  EXPECT_GT(d[0], 0.0f);  // sigmoid(-100) = 3.7e-44
}

// TSigmoid's vector form (SigmoidVec: selects, no branch) gives SigmoidOf's
// bits with the same exp of -|x| for every input of a sweep over all
// exponents and signs, with NaN, +-inf and +-0 mixed into vectors and a
// partial last vector.
TEST(PtoTileExpTest, SigmoidVectorsGiveTheScalarFormsBits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  constexpr int64_t N = 4093;
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 1048573) {
    xs.push_back(pto_tile::FloatFromBits(static_cast<uint32_t>(bits)));
  }
  xs.resize(N, 0.5f);
  for (int64_t i = 3; i < N; i += 101) xs[i] = NAN;
  for (int64_t i = 7; i < N; i += 103) xs[i] = (i / 103) % 2 ? INFINITY : -INFINITY;
  for (int64_t i = 9; i < N; i += 107) xs[i] = (i / 107) % 2 ? 0.0f : -0.0f;
  std::vector<float> got(N), e(N);
  pto_tile::TSigmoid<N>(got.data(), xs.data());
  for (int64_t i = 0; i < N; ++i) e[i] = -std::fabs(xs[i]);
  pto_tile::ExpMap(e.data(), e.data(), N);
  for (int64_t i = 0; i < N; ++i) {
    const float want = pto_tile::SigmoidOf(xs[i], e[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << xs[i];
    } else {
      EXPECT_EQ(BitsFromFloat(got[i]), BitsFromFloat(want)) << xs[i];
    }
  }
}

#if defined(__AVX512F__)
// x86-64-v4's 16-lane exp (pto_tile_exp_test_v4): the bits of the 8-lane
// form for every input of a sweep over all exponents, with inf, NaN and
// out-of-range lanes mixed into otherwise in-range vectors.
TEST(PtoTileExpTest, SixteenLanesGiveTheEightLaneBits) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    xs.push_back(pto_tile::FloatFromBits(static_cast<uint32_t>(bits)));
  }
  for (size_t i = 5; i < xs.size(); i += 97) xs[i] = (i / 97) % 2 ? NAN : INFINITY;
  for (size_t i = 11; i < xs.size(); i += 89) xs[i] = -150.0f;
  std::vector<float> got(xs.size()), want(xs.size());
  for (size_t i = 0; i < xs.size(); i += 1000) {  // a partial last vector too
    const int64_t n = std::min<int64_t>(1000, xs.size() - i);
    pto_tile::Map16<pto_tile::Exp16>(got.data() + i, xs.data() + i, n);
    pto_tile::Map8<pto_tile::Exp8>(want.data() + i, xs.data() + i, n);
  }
  int64_t mismatches = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (BitsFromFloat(got[i]) != BitsFromFloat(want[i]) && ++mismatches <= 10) {
      ADD_FAILURE() << "exp(" << xs[i] << "): 16 lanes " << got[i] << ", 8 lanes " << want[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
}

#endif

// Softmax's exp for x - max(x) (lanes <= 0 or NaN), Exp16Softmax with
// AVX-512F (within 2 ulp of the exact value; numerics/exp_softmax_check, over
// every such float: at most 1.74 ulp) and Exp8Softmax with AVX2 (within
// 1.2 ulp; exp_softmax_check_v3: 1.14, and its short form the full one's
// bits), on every 4099th bit pattern with the sign bit set (-0 to -NaN)
// and runs of consecutive floats near 0, across the subnormal results and
// around the last one that rounds up; NaN -> NaN, -inf -> +0, +-0 -> 1,
// and results below half the smallest subnormal -> +0.
TEST(PtoTileExpTest, SoftmaxExpWithinItsUlps) {
  PTO_SKIP_WITHOUT_BUILD_ISA();
#if defined(__AVX512F__)
  using V = pto_tile::ExpF16;
  const auto softmax_exp = pto_tile::Exp16Softmax;
  const auto full_form = pto_tile::Exp16Softmax;
  const double bound = 2.0;
#else
  using V = pto_tile::ExpF8;
  const auto softmax_exp = pto_tile::Exp8Softmax;
  const auto full_form = pto_tile::Exp8SoftmaxSteps<true>;
  const double bound = 1.2;
#endif
  constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));
  std::vector<float> xs = {0.0f, -0.0f, -INFINITY, NAN, -NAN, -104.0f, -1e30f, -FLT_MAX};
  for (uint64_t bits = uint64_t{1} << 31; bits < (uint64_t{1} << 32); bits += 4099) {
    xs.push_back(pto_tile::FloatFromBits(static_cast<uint32_t>(bits)));
  }
  for (float start : {-0x1p-20f, -0.0108f, -0.5f, -86.0f, -87.3f, -95.0f, -103.28f, -103.97f}) {
    float x = start;
    for (int k = 0; k < 4096; ++k, x = std::nextafter(x, 0.0f)) xs.push_back(x);
  }
  while (xs.size() % kLanes != 0) xs.push_back(-1.0f);
  int64_t failures = 0;
  double worst = 0;
  for (size_t i = 0; i < xs.size(); i += kLanes) {
    V x;
    std::memcpy(&x, xs.data() + i, sizeof x);
    const V got = softmax_exp(x), full = full_form(x);
    for (int j = 0; j < kLanes && failures < 10; ++j) {
      const float in = xs[i + j], y = got[j];
      bool ok;
      if (std::isnan(in)) {
        ok = std::isnan(y) && std::isnan(full[j]);
      } else if (in == 0.0f) {
        ok = y == 1.0f;
      } else if (std::exp(static_cast<double>(in)) < 0x1p-150) {  // -inf too
        ok = BitsFromFloat(y) == 0;
      } else {
        const double err = UlpError(in, y);
        worst = std::max(worst, err);
        ok = err <= bound;
      }
      ok = ok && (std::isnan(in) || BitsFromFloat(y) == BitsFromFloat(full[j]));
      if (!ok) {
        ++failures;
        ADD_FAILURE() << "exp(" << in << ") = " << y << " (" << UlpError(in, y) << " ulp; full form "
                      << full[j] << ")";
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(worst, 0.5);  // not the general exp by accident: some results are not the nearest
}

}  // namespace
