// The tile header's arithmetic: exact f16 conversions and the tile loops.
#include "compiler/targets/host/pto_tile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

// A second copy of the header with its F16C paths (8-wide vcvtph2ps /
// vcvtps2ph), as kernels built for x86-64-v3 get them; this test binary is
// built for the baseline target, so these functions carry the target
// attribute and only run where the CPU has F16C. In pto_tile_test_v4 (built
// with -march=x86-64-v4) both copies also take the 16-wide zmm forms first.
// Every include guard is undone: the copy is the whole header.
#undef PTO_TILE_H_
#undef PTO_TILE_CONVERT_H_
#undef PTO_TILE_MOVES_H_
#undef PTO_TILE_MVEC_H_
#undef PTO_TILE_EXP_H_
#undef PTO_TILE_ERF_H_
#undef PTO_TILE_ELEMENTWISE_H_
#undef PTO_TILE_INT_H_
#undef PTO_TILE_REDUCE_H_
#undef PTO_TILE_ROWS_H_
#undef PTO_TILE_INDEX_H_
#undef PTO_TILE_FP8_H_
#undef PTO_TILE_SORT_H_
#undef PTO_TILE_F16C
#define PTO_TILE_F16C 1
#pragma GCC push_options
#pragma GCC target("avx,f16c")
namespace with_f16c {
#include "compiler/targets/host/pto_tile.h"  // NOLINT(build/include)
}  // namespace with_f16c
#pragma GCC pop_options
#undef PTO_TILE_F16C

namespace {

#if defined(__AVX512F__)
// pto_tile_test_v4 (this file built with -march=x86-64-v4): every test
// runs AVX-512 code, so all skip on a CPU without it.
class NeedsAvx512 : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl")) {
      GTEST_SKIP() << "built for x86-64-v4; this CPU lacks AVX-512";
    }
  }
};
::testing::Environment* const kNeedsAvx512 =
    ::testing::AddGlobalTestEnvironment(new NeedsAvx512);
#endif

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

// A transposed load (s2 < s3: walked along dim 2) and a permuted one (s2 >
// s3: along dim 3) put GM value (i2, j) at tile (i2, j) either way.
TEST(PtoTileTest, StridedLoadsTransposeInEitherOrder) {
  float gm[6 * 7];
  for (int i = 0; i < 6 * 7; ++i) gm[i] = static_cast<float>(i);
  float ub[2 * 3 * 4];
  // Tile [2, 3, 4]: dim 1 stride 1 (x.T's rows), dim 3 stride 7, dim 0 stride 21.
  pto_tile::TLoadStrided<float, 1, 2, 3, 4>(ub, gm, 0, 21, 1, 7);
  for (int i1 = 0; i1 < 2; ++i1)
    for (int i2 = 0; i2 < 3; ++i2)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(ub[(i1 * 3 + i2) * 4 + j], gm[i1 * 21 + i2 + j * 7]) << i1 << i2 << j;
  pto_tile::TLoadStrided<float, 1, 1, 3, 4>(ub, gm, 0, 0, 9, 2);
  for (int i2 = 0; i2 < 3; ++i2)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(ub[i2 * 4 + j], gm[i2 * 9 + j * 2]) << i2 << j;
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

// The Rows forms of binary instructions (fused reductions): a row tile's
// value repeats along its row, on either side, with the same rounding as
// the plain form.
TEST(PtoTileTest, RowFormsRepeatRowValues) {
  constexpr int64_t R = 3, C = 37;
  float a[R * C], d[R * C], want[R * C];
  const float rows[R] = {0.1f, -2.5f, 1e-3f};
  for (int64_t i = 0; i < R * C; ++i) a[i] = 0.37f * static_cast<float>(i) - 9.0f;
  float b[R * C];
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t c = 0; c < C; ++c) b[r * C + c] = rows[r];
  }
  pto_tile::TSubRows<R, C, pto_tile::kFull, pto_tile::kRow>(d, a, rows);
  pto_tile::TSub<R * C>(want, a, b);
  EXPECT_EQ(std::memcmp(d, want, sizeof d), 0);
  pto_tile::TDivRows<R, C, pto_tile::kRow, pto_tile::kFull, pto_tile::half>(d, rows, a);
  pto_tile::TDiv<R * C, pto_tile::half>(want, b, a);
  EXPECT_EQ(std::memcmp(d, want, sizeof d), 0);
  pto_tile::TMaxRows<R, C, pto_tile::kRow, pto_tile::kRow>(d, rows, rows);
  for (int64_t i = 0; i < R * C; ++i) EXPECT_EQ(d[i], b[i]) << i;
  // A column operand ([C], repeated down the rows).
  float cols[C], full_cols[R * C];
  for (int64_t c = 0; c < C; ++c) cols[c] = 1.0f + 0.25f * static_cast<float>(c);
  for (int64_t i = 0; i < R * C; ++i) full_cols[i] = cols[i % C];
  pto_tile::TMulRows<R, C, pto_tile::kFull, pto_tile::kCol>(d, a, cols);
  pto_tile::TMul<R * C>(want, a, full_cols);
  EXPECT_EQ(std::memcmp(d, want, sizeof d), 0);
  pto_tile::TAddRows<R, C, pto_tile::kCol, pto_tile::kRow>(d, cols, rows);
  pto_tile::TAdd<R * C>(want, full_cols, b);
  EXPECT_EQ(std::memcmp(d, want, sizeof d), 0);
}

// Transcendentals go through libmvec, a partial last chunk too: an
// element's result is the same whatever the tile's size or its position,
// and within the tolerances of the exact value.
TEST(PtoTileTest, VectorTranscendentalsDoNotDependOnTileShape) {
  auto Bits = [](float f) { return BitsFromFloat(f); };
  constexpr int64_t N = 37;
  float a[N], whole[N], one[1], tail[3];
  for (int64_t i = 0; i < N; ++i) a[i] = -9.5f + 0.53f * static_cast<float>(i);
  pto_tile::TTanh<N>(whole, a);
  for (int64_t i = 0; i < N; ++i) {
    pto_tile::TTanh<1>(one, a + i);
    EXPECT_EQ(Bits(one[0]), Bits(whole[i])) << i;
  }
  // exp through libmvec's double exp: the correctly rounded f32 result
  // (the _v4 build has pto_tile.h's own faithful exp: pto_tile_exp_test).
  pto_tile::TExp<N>(whole, a);
  for (int64_t i = 0; i < N; ++i) {
    pto_tile::TExp<1>(one, a + i);
    EXPECT_EQ(Bits(one[0]), Bits(whole[i])) << i;
#if !PTO_TILE_FAST_EXP
    EXPECT_EQ(Bits(whole[i]), Bits(static_cast<float>(std::exp(static_cast<double>(a[i])))))
        << a[i];
#endif
  }
  pto_tile::TErfc<3>(tail, a + N - 3);
  pto_tile::TErfc<N>(whole, a);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(Bits(tail[i]), Bits(whole[N - 3 + i]));
}

TEST(PtoTileTest, VectorTranscendentalsAreAccurate) {
  auto Bits = [](float f) { return BitsFromFloat(f); };
  constexpr int64_t N = 4099;
  std::vector<float> a(N), d(N);
  for (int64_t i = 0; i < N; ++i) a[i] = -10.0f + 20.0f * static_cast<float>(i) / N;
  double worst_exp = 0, worst_log = 0, worst_erfc = 0, worst_tanh = 0;
  pto_tile::TExp<N>(d.data(), a.data());
  for (int64_t i = 0; i < N; ++i) {
    const double want = std::exp(static_cast<double>(a[i]));
    worst_exp = std::max(worst_exp, std::fabs(d[i] - want) / want);
  }
  pto_tile::TErfc<N>(d.data(), a.data());
  for (int64_t i = 0; i < N; ++i) {
    worst_erfc = std::max(worst_erfc, std::fabs(d[i] - std::erfc(static_cast<double>(a[i]))));
  }
  pto_tile::TTanh<N>(d.data(), a.data());
  for (int64_t i = 0; i < N; ++i) {
    const double want = std::tanh(static_cast<double>(a[i]));
    worst_tanh = std::max(worst_tanh, std::fabs(d[i] - want) / std::fabs(want));
  }
  for (int64_t i = 0; i < N; ++i) a[i] = std::fabs(a[i]) + 1e-3f;
  pto_tile::TLog<N>(d.data(), a.data());
  for (int64_t i = 0; i < N; ++i) {
    const double want = std::log(static_cast<double>(a[i]));
    worst_log = std::max(worst_log, std::fabs(d[i] - want) / std::max(std::fabs(want), 1e-3));
  }
  EXPECT_LT(worst_exp, 2e-6);
  EXPECT_LT(worst_log, 2e-6);
  EXPECT_LT(worst_tanh, 2e-6);
  EXPECT_LT(worst_erfc, 1e-6);
  // Special values as the scalar functions give them.
  float sp[4] = {NAN, INFINITY, -INFINITY, -0.0f}, r[4];
  pto_tile::TExp<4>(r, sp);
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], INFINITY);
  EXPECT_EQ(r[2], 0.0f);
  EXPECT_EQ(r[3], 1.0f);
  const float big[3] = {88.8f, -103.0f, -88.0f};  // overflow, subnormal results
  pto_tile::TExp<3>(r, big);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Bits(r[i]), Bits(static_cast<float>(std::exp(static_cast<double>(big[i])))));
  }
  pto_tile::TLog<4>(r, sp);
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], INFINITY);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], -INFINITY);
  pto_tile::TErfc<4>(r, sp);
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], 0.0f);
  EXPECT_EQ(r[2], 2.0f);
  EXPECT_EQ(r[3], 1.0f);
}

// Every instruction that maps through libmvec (4, 8 or 16 lanes by the
// build's ISA: _ZGVeN16v_ in pto_tile_test_v4) within the 2e-6 bound of
// the double function (relative, or absolute near a zero of the result),
// on a sweep whose length leaves a partial last vector, with NaN and +-inf
// as the scalar functions give them.
TEST(PtoTileTest, LibmvecMapsAreAccurate) {
  constexpr int64_t N = 1037;
  std::vector<float> a(N), d(N);
  for (int64_t i = 0; i < N; ++i) a[i] = -3.0f + 9.0f * static_cast<float>(i) / N;
  using Tile = void (*)(float*, const float*);
  struct Case {
    const char* name;
    Tile tile;
    double (*ref)(double);
    float lo;  // inputs below lo are outside the function's domain
  };
  const Case cases[] = {
      {"exp2", pto_tile::TExp2<N>, [](double v) { return std::exp2(v); }, -100},
      {"expm1", pto_tile::TExpM1<N>, [](double v) { return std::expm1(v); }, -100},
      {"log", pto_tile::TLog<N>, [](double v) { return std::log(v); }, 0},
      {"log2", pto_tile::TLog2<N>, [](double v) { return std::log2(v); }, 0},
      {"log10", pto_tile::TLog10<N>, [](double v) { return std::log10(v); }, 0},
      {"log1p", pto_tile::TLog1P<N>, [](double v) { return std::log1p(v); }, -1},
      {"tanh", pto_tile::TTanh<N>, [](double v) { return std::tanh(v); }, -100},
      {"sin", pto_tile::TSin<N>, [](double v) { return std::sin(v); }, -100},
      {"cos", pto_tile::TCos<N>, [](double v) { return std::cos(v); }, -100},
  };
  for (const Case& c : cases) {
    c.tile(d.data(), a.data());
    for (int64_t i = 0; i < N; ++i) {
      if (!(a[i] > c.lo)) continue;
      const double want = c.ref(static_cast<double>(a[i]));
      EXPECT_LE(std::fabs(d[i] - want), 2e-6 * std::max(std::fabs(want), 1.0))
          << c.name << "(" << a[i] << ")";
    }
    // NaN and +-inf, in a tile of the same shape.
    std::vector<float> sp(N, 0.5f), r(N);
    sp[0] = NAN;
    sp[1] = INFINITY;
    sp[2] = -INFINITY;
    c.tile(r.data(), sp.data());
    for (int j = 0; j < 3; ++j) {
      const double want = c.ref(static_cast<double>(sp[j]));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(r[j])) << c.name << "(" << sp[j] << ")";
      } else {
        EXPECT_EQ(r[j], static_cast<float>(want)) << c.name << "(" << sp[j] << ")";
      }
    }
  }
}

// pow maps through libmvec's vector powf (4, 8 or 16 lanes by the build's
// ISA): within one ulp of the double pow, special pairs giving glibc powf's
// results (NaN, +-inf, +-0, negative bases with integer exponents), an
// element's result independent of its tile's shape, and the scalar, reversed
// and Rows forms giving the tile form's bits. x ** 2 is x * x exactly.
TEST(PtoTileTest, PowIsAccurateAndGivesPowfsSpecialValues) {
  auto Bits = [](float f) { return BitsFromFloat(f); };
  auto Ulps = [](float got, double want) {
    int e;
    std::frexp(want, &e);
    return std::fabs(got - want) / std::ldexp(1.0, std::max(e - 24, -149));
  };
  const float special[] = {0.f,   -0.f,  1.f,  -1.f,  INFINITY, -INFINITY, NAN,     0.5f,
                           2.f,   -2.f,  3.f,  -3.f,  1e-45f,   -1e-45f,   1e38f,   -1e38f,
                           2.5f,  -2.5f, 127.f, 128.f, -149.f,  -150.f,    16777217.f};
  constexpr int64_t kS = sizeof(special) / sizeof(special[0]);
  constexpr int64_t N = kS * kS;
  std::vector<float> a(N), b(N), d(N);
  for (int64_t i = 0; i < N; ++i) {
    a[i] = special[i / kS];
    b[i] = special[i % kS];
  }
  pto_tile::TPow<N>(d.data(), a.data(), b.data());
  for (int64_t i = 0; i < N; ++i) {
    const float want = powf(a[i], b[i]);
    const std::string at = "pow(" + std::to_string(a[i]) + ", " + std::to_string(b[i]) + ")";
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(d[i])) << at;
    } else if (std::isinf(want) || want == 0) {
      EXPECT_EQ(Bits(d[i]), Bits(want)) << at;
    } else {
      EXPECT_LE(Ulps(d[i], std::pow(static_cast<double>(a[i]), static_cast<double>(b[i]))), 1.0)
          << at;
    }
  }
  // Ordinary values: x in (0, 10), y in (-20, 20), and negative x with
  // integer y; a length that leaves a partial last vector.
  constexpr int64_t M = 4099;
  std::vector<float> x(M), y(M), r(M), one(1);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ux(0.0f, 10.0f), uy(-20.0f, 20.0f);
  for (int64_t i = 0; i < M; ++i) {
    x[i] = i % 3 == 0 ? -ux(rng) : ux(rng);
    y[i] = i % 3 == 0 ? std::round(uy(rng)) : uy(rng);
  }
  pto_tile::TPow<M>(r.data(), x.data(), y.data());
  double worst = 0;
  for (int64_t i = 0; i < M; ++i) {
    const double want = std::pow(static_cast<double>(x[i]), static_cast<double>(y[i]));
    if (std::isinf(static_cast<float>(want)) || static_cast<float>(want) == 0) {
      EXPECT_EQ(r[i], static_cast<float>(want)) << x[i] << " ** " << y[i];
      continue;
    }
    worst = std::max(worst, Ulps(r[i], want));
  }
  EXPECT_LE(worst, 1.0);
  for (int64_t i = M - 5; i < M; ++i) {
    pto_tile::TPow<1>(one.data(), x.data() + i, y.data() + i);
    EXPECT_EQ(Bits(one[0]), Bits(r[i])) << i;
  }
  // Scalar and reversed forms: the tile form's bits with the scalar spread.
  std::vector<float> s(M, 2.5f), want(M);
  pto_tile::TPowS<M>(r.data(), x.data(), 2.5f);
  pto_tile::TPow<M>(want.data(), x.data(), s.data());
  EXPECT_EQ(std::memcmp(r.data(), want.data(), M * sizeof(float)), 0);
  pto_tile::TRPowS<M>(r.data(), y.data(), 2.5f);
  pto_tile::TPow<M>(want.data(), s.data(), y.data());
  EXPECT_EQ(std::memcmp(r.data(), want.data(), M * sizeof(float)), 0);
  pto_tile::TPowS<M>(r.data(), x.data(), 2.0f);
  for (int64_t i = 0; i < M; ++i) EXPECT_EQ(Bits(r[i]), Bits(x[i] * x[i])) << x[i];
  pto_tile::TPowS<kS>(r.data(), special, 2.0f);
  for (int64_t i = 0; i < kS; ++i) {
    const float w = powf(special[i], 2.0f);
    EXPECT_TRUE(std::isnan(w) ? std::isnan(r[i]) : Bits(r[i]) == Bits(w)) << special[i];
  }
  // Rows forms: a row value on either side, a column operand.
  constexpr int64_t R = 3, C = 37;
  const float rows[R] = {0.5f, -2.0f, 3.25f};
  float full[R * C], rowfull[R * C], got[R * C], ref[R * C];
  for (int64_t i = 0; i < R * C; ++i) {
    full[i] = 0.1f + 0.07f * static_cast<float>(i);
    rowfull[i] = rows[i / C];
  }
  pto_tile::TPowRows<R, C, pto_tile::kFull, pto_tile::kRow>(got, full, rows);
  pto_tile::TPow<R * C>(ref, full, rowfull);
  EXPECT_EQ(std::memcmp(got, ref, sizeof got), 0);
  pto_tile::TPowRows<R, C, pto_tile::kRow, pto_tile::kFull>(got, rows, full);
  pto_tile::TPow<R * C>(ref, rowfull, full);
  EXPECT_EQ(std::memcmp(got, ref, sizeof got), 0);
  float colfull[R * C];
  for (int64_t i = 0; i < R * C; ++i) colfull[i] = full[i % C];
  pto_tile::TPowRows<R, C, pto_tile::kCol, pto_tile::kRow>(got, full, rows);
  pto_tile::TPow<R * C>(ref, colfull, rowfull);
  EXPECT_EQ(std::memcmp(got, ref, sizeof got), 0);
}

TEST(PtoTileTest, RowReductionsUsePartialResults) {
  // Rows long enough for partial results (with a tail), and a short one.
  constexpr int kCols = 37;
  float a[2 * kCols];
  double want[2] = {0, 0};
  for (int i = 0; i < 2 * kCols; ++i) {
    a[i] = 1.0f / static_cast<float>(i + 1);
    want[i / kCols] += a[i];
  }
  float sum[2], mx[2], mn[2], prod[2];
  pto_tile::TRedSum<1, 1, 2, kCols, 3>(sum, a);
  pto_tile::TRedMax<1, 1, 2, kCols, 3>(mx, a);
  pto_tile::TRedMin<1, 1, 2, kCols, 3>(mn, a);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(sum[r], want[r], 1e-5 * want[r]) << r;
    EXPECT_EQ(mx[r], a[r * kCols]) << r;
    EXPECT_EQ(mn[r], a[r * kCols + kCols - 1]) << r;
  }
  double want_prod[2] = {1, 1};
  for (int i = 0; i < 2 * kCols; ++i) {
    a[i] = 1.0f + static_cast<float>(i % 7) / 64.0f;
    want_prod[i / kCols] *= a[i];
  }
  pto_tile::TRedProd<1, 1, 2, kCols, 3>(prod, a);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(prod[r], want_prod[r], 1e-5 * want_prod[r]) << r;
  }
  // NaN anywhere in a row propagates through max and min; -0 sums stay +0
  // as a left-to-right sum from +0 does.
  a[kCols + 20] = std::nanf("");
  pto_tile::TRedMax<1, 1, 2, kCols, 3>(mx, a);
  pto_tile::TRedMin<1, 1, 2, kCols, 3>(mn, a);
  EXPECT_FALSE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(mn[1]));
  for (float& x : a) x = -0.0f;
  pto_tile::TRedSum<1, 1, 2, kCols, 3>(sum, a);
  EXPECT_FALSE(std::signbit(sum[0]));
}

TEST(PtoTileTest, ColumnReductionsKeepLeftToRightOrder) {
  // f32[5, 19] reduced along dim 2 (rows of 19 contiguous results), and a
  // 4-d tile along dim 1: the same bits as one left-to-right loop per result.
  float a[2 * 5 * 19];
  std::mt19937 rng(9);
  for (float& x : a) x = static_cast<float>(rng() % 20001) / 7.0f - 1000.0f;
  a[3 * 19 + 4] = std::nanf("");
  float sum[19], mx[19];
  pto_tile::TRedSum<1, 1, 5, 19, 2>(sum, a);
  pto_tile::TRedMax<1, 1, 5, 19, 2>(mx, a);
  for (int c = 0; c < 19; ++c) {
    float s = 0.0f, m = -INFINITY;
    for (int r = 0; r < 5; ++r) {
      s += a[r * 19 + c];
      m = pto_tile::Max(a[r * 19 + c], m);
    }
    EXPECT_EQ(BitsFromFloat(sum[c]), BitsFromFloat(s)) << c;
    EXPECT_EQ(BitsFromFloat(mx[c]), BitsFromFloat(m)) << c;
  }
  float sum4[2 * 19];
  pto_tile::TRedSum<2, 5, 1, 19, 1>(sum4, a);
  for (int b = 0; b < 2; ++b) {
    for (int c = 0; c < 19; ++c) {
      float s = 0.0f;
      for (int r = 0; r < 5; ++r) s += a[(b * 5 + r) * 19 + c];
      EXPECT_EQ(BitsFromFloat(sum4[b * 19 + c]), BitsFromFloat(s)) << b << "," << c;
    }
  }
}

bool HaveF16c() { return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx"); }

// Floats that exercise f16 rounding: every half, the midpoints between
// neighbours and one float either side, random bit patterns (all exponents,
// NaN payloads of both signs, infinities).
std::vector<float> F16Cases() {
  std::vector<float> cases;
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    cases.push_back(f);
    if ((h & 0x7fff) < 0x7bff) {
      const float m = static_cast<float>(
          (static_cast<double>(f) + HalfToFloat(static_cast<uint16_t>(h + 1))) / 2);
      cases.push_back(m);
      cases.push_back(std::nextafter(m, 0.0f));
      cases.push_back(std::nextafter(m, INFINITY));
    }
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 200000; ++i) cases.push_back(FloatFromBits(rng()));
  for (uint32_t bits : {0x7f800001u, 0xff800001u, 0x7fc00000u, 0xffc00000u,
                        0x7fffffffu, 0xffffffffu, 0x7f802000u, 0x7fa00000u}) {
    cases.push_back(FloatFromBits(bits));
  }
  // Odd length: the runs end in a scalar tail.
  if (cases.size() % 8 == 0) cases.push_back(1.0f);
  return cases;
}

__attribute__((target("avx,f16c"))) void F16cLoad(float* d, const uint16_t* s,
                                                 int64_t n) {
  with_f16c::pto_tile::HalvesToFloats(d, s, n);
}
__attribute__((target("avx,f16c"))) void F16cStore(uint16_t* d, const float* s,
                                                  int64_t n) {
  with_f16c::pto_tile::FloatsToHalves(d, s, n);
}
__attribute__((target("avx,f16c"))) void F16cRound(float* d, int64_t n) {
  with_f16c::pto_tile::RoundToHalves(d, n);
}
__attribute__((target("avx,f16c"))) void F16cTileAdd(with_f16c::pto_tile::half* out,
                                                    const with_f16c::pto_tile::half* a,
                                                    const with_f16c::pto_tile::half* b) {
  namespace pt = with_f16c::pto_tile;
  float ta[2 * 20], tb[2 * 20], td[2 * 20];
  pt::TLoad<pt::half, 1, 1, 2, 20>(ta, a, 0, 0, 21);
  pt::TLoad<pt::half, 1, 1, 2, 20>(tb, b, 0, 0, 21);
  pt::TAdd<40, pt::half>(td, ta, tb);
  pt::TStore<pt::half, 1, 1, 2, 20>(out, td, 0, 0, 21);
}

uint32_t Bits(float f) { return BitsFromFloat(f); }

TEST(PtoTileTest, F16cConversionsMatchPortableBitForBit) {
  if (!HaveF16c()) GTEST_SKIP() << "CPU without F16C";
  std::vector<uint16_t> halves(0x10001);
  for (uint32_t h = 0; h <= 0xffff; ++h) halves[h] = static_cast<uint16_t>(h);
  halves[0x10000] = 0x3c00;  // odd length
  std::vector<float> got(halves.size());
  F16cLoad(got.data(), halves.data(), static_cast<int64_t>(halves.size()));
  for (size_t i = 0; i < halves.size(); ++i) {
    ASSERT_EQ(Bits(got[i]), Bits(HalfToFloat(halves[i]))) << std::hex << halves[i];
  }
  const std::vector<float> cases = F16Cases();
  std::vector<uint16_t> stored(cases.size());
  F16cStore(stored.data(), cases.data(), static_cast<int64_t>(cases.size()));
  std::vector<float> rounded = cases;
  F16cRound(rounded.data(), static_cast<int64_t>(rounded.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_EQ(stored[i], FloatToHalf(cases[i])) << std::hex << Bits(cases[i]);
    ASSERT_EQ(Bits(rounded[i]), Bits(HalfToFloat(FloatToHalf(cases[i]))))
        << std::hex << Bits(cases[i]);
  }
  // Every run length up to 48 (16-lane, 8-lane and scalar parts, x86-64-v4
  // and v3 alike) converts the same and writes nothing past its end.
  for (int64_t n = 0; n <= 48; ++n) {
    std::vector<uint16_t> h(n + 1, 0x1234);
    std::vector<float> f(n + 1, 42.0f), r(cases.begin(), cases.begin() + n + 1);
    F16cStore(h.data(), cases.data() + 1000, n);
    F16cLoad(f.data(), halves.data() + 0x7bf0, n);
    F16cRound(r.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(h[i], FloatToHalf(cases[1000 + i])) << n << " " << i;
      ASSERT_EQ(Bits(f[i]), Bits(HalfToFloat(halves[0x7bf0 + i]))) << n << " " << i;
      ASSERT_EQ(Bits(r[i]), Bits(HalfToFloat(FloatToHalf(cases[i])))) << n << " " << i;
    }
    EXPECT_EQ(h[n], 0x1234) << n;
    EXPECT_EQ(f[n], 42.0f) << n;
    EXPECT_EQ(Bits(r[n]), Bits(cases[n])) << n;
  }
}

TEST(PtoTileTest, F16cTileInstructionsMatchPortable) {
  if (!HaveF16c()) GTEST_SKIP() << "CPU without F16C";
  // GM f16[2, 21]; a [2, 20] tile (two runs of 8 and a tail per row).
  std::mt19937 rng(3);
  pto_tile::half a[42], b[42], want[42] = {};
  with_f16c::pto_tile::half a2[42], b2[42], got[42] = {};
  for (int i = 0; i < 42; ++i) {
    a[i].bits = static_cast<uint16_t>(rng());
    b[i].bits = static_cast<uint16_t>(rng());
    a2[i].bits = a[i].bits;
    b2[i].bits = b[i].bits;
  }
  float ta[40], tb[40], td[40];
  pto_tile::TLoad<pto_tile::half, 1, 1, 2, 20>(ta, a, 0, 0, 21);
  pto_tile::TLoad<pto_tile::half, 1, 1, 2, 20>(tb, b, 0, 0, 21);
  pto_tile::TAdd<40, pto_tile::half>(td, ta, tb);
  pto_tile::TStore<pto_tile::half, 1, 1, 2, 20>(want, td, 0, 0, 21);
  F16cTileAdd(got, a2, b2);
  for (int i = 0; i < 42; ++i) EXPECT_EQ(got[i].bits, want[i].bits) << i;
}

}  // namespace
