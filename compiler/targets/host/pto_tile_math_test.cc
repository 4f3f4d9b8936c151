// pto_tile.h's trigonometric and hyperbolic functions, cbrt, atan2, hypot,
// fmod, signbit and the integer ops (gcd, bitwise, shifts, C fmod), built
// for the baseline target (libmvec's double functions, 2 lanes) and, as
// pto_tile_math_test_v4, for x86-64-v4 (8 lanes):
// f32 results within 1 ulp of glibc's double result over a sweep of each
// function's domain with its special values (NaN, +-inf, +-0, domain
// edges), FP16 results the double result rounded to FP16, results that do
// not depend on the tile length (a partial last vector), the Rows forms of
// the binary ones, and the integer ops against their definitions (torch's
// shifts on x86: the count modulo 32, or 64 for INT64).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

#include "compiler/targets/host/pto_tile_convert.h"
#include "compiler/targets/host/pto_tile_elementwise.h"
#include "compiler/targets/host/pto_tile_int.h"
#include "gtest/gtest.h"

namespace {

// The _v4 twin (16 lanes, libmvec's 8-lane double functions) runs only
// where the CPU has AVX-512.
class PtoTileMath : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__AVX512F__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl")) {
      GTEST_SKIP() << "built for x86-64-v4; this CPU lacks AVX-512";
    }
#endif
  }
};

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr int64_t kN = 1027;  // not a multiple of any vector width

// Distance in f32 steps between a and b (both finite or equal).
int64_t UlpDistance(float a, float b) {
  auto ordered = [](float f) {
    const int32_t i = static_cast<int32_t>(pto_tile::BitsFromFloat(f));
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

// got[i] against want(x[i]) in double rounded to f32: NaN where it is NaN,
// infinities and zeros (with their sign) exact, else within 1 ulp.
template <typename Want>
void ExpectWithinOneUlp(const char* name, const std::vector<float>& x,
                        const std::vector<float>& got, Want want) {
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 8; ++i) {
    const float w = static_cast<float>(want(static_cast<double>(x[i])));
    const bool ok = std::isnan(w) ? std::isnan(got[i])
                    : (std::isinf(w) || w == 0)
                        ? got[i] == w && std::signbit(got[i]) == std::signbit(w)
                        : UlpDistance(got[i], w) <= 1;
    if (!ok) {
      ++failures;
      ADD_FAILURE() << name << "(" << std::hexfloat << x[i] << ") = " << got[i] << ", want " << w;
    }
  }
}

// Special values, domain edges and a sweep of [-lo, lo] plus wide values.
std::vector<float> Inputs(float lo) {
  std::vector<float> x = {kNan, -kNan, kInf, -kInf, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f,
                          1e-30f, -1e-30f, 1e-45f, 2.0f, 88.0f, 89.5f, -89.5f, 1e30f,
                          std::nextafter(1.0f, 0.0f), std::nextafter(1.0f, 2.0f)};
  for (int64_t i = 0; static_cast<int64_t>(x.size()) < kN; ++i) {
    const float t = static_cast<float>(i) / 997.0f;
    x.push_back(lo * (2.0f * t - 1.0f) + (i % 7 == 0 ? 1e4f * t : 0.0f));
  }
  x.resize(kN);
  return x;
}

struct UnaryCase {
  const char* name;
  void (*tile)(float*, const float*);
  double (*want)(double);
  float range;
};

TEST_F(PtoTileMath, UnaryWithinOneUlpOfDouble) {
  const UnaryCase cases[] = {
      {"tan", pto_tile::TTan<kN>, [](double x) { return std::tan(x); }, 10},
      {"asin", pto_tile::TAsin<kN>, [](double x) { return std::asin(x); }, 1.2f},
      {"acos", pto_tile::TAcos<kN>, [](double x) { return std::acos(x); }, 1.2f},
      {"atan", pto_tile::TAtan<kN>, [](double x) { return std::atan(x); }, 50},
      {"sinh", pto_tile::TSinh<kN>, [](double x) { return std::sinh(x); }, 90},
      {"cosh", pto_tile::TCosh<kN>, [](double x) { return std::cosh(x); }, 90},
      {"asinh", pto_tile::TAsinh<kN>, [](double x) { return std::asinh(x); }, 1e3f},
      {"acosh", pto_tile::TAcosh<kN>, [](double x) { return std::acosh(x); }, 100},
      {"atanh", pto_tile::TAtanh<kN>, [](double x) { return std::atanh(x); }, 1.1f},
      {"cbrt", pto_tile::TCbrt<kN>, [](double x) { return std::cbrt(x); }, 1e6f},
  };
  for (const UnaryCase& c : cases) {
    const std::vector<float> x = Inputs(c.range);
    std::vector<float> got(kN);
    c.tile(got.data(), x.data());
    ExpectWithinOneUlp(c.name, x, got, c.want);
  }
}

TEST_F(PtoTileMath, DomainEdges) {
  float x[6] = {1.0f, -1.0f, 2.0f, -2.0f, 0.0f, -0.0f};
  float y[6];
  pto_tile::TAtanh<6>(y, x);
  EXPECT_EQ(y[0], kInf);
  EXPECT_EQ(y[1], -kInf);
  EXPECT_TRUE(std::isnan(y[2]) && std::isnan(y[3]));
  EXPECT_TRUE(y[5] == 0 && std::signbit(y[5]));
  pto_tile::TAcosh<6>(y, x);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[4]));
  pto_tile::TAsin<6>(y, x);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(y[5] == 0 && std::signbit(y[5]));
  pto_tile::TCbrt<6>(y, x);
  EXPECT_EQ(y[1], -1.0f);
}

TEST_F(PtoTileMath, BinaryWithinOneUlpAndSpecials) {
  const std::vector<float> a = Inputs(100), b0 = Inputs(7);
  std::vector<float> b(b0.rbegin(), b0.rend());
  std::vector<float> got(kN);
  auto check2 = [&](const char* name, double (*want)(double, double)) {
    int failures = 0;
    for (int64_t i = 0; i < kN && failures < 8; ++i) {
      const float w = static_cast<float>(want(a[i], b[i]));
      const bool ok = std::isnan(w) ? std::isnan(got[i])
                      : (std::isinf(w) || w == 0)
                          ? got[i] == w && std::signbit(got[i]) == std::signbit(w)
                          : UlpDistance(got[i], w) <= 1;
      if (!ok) {
        ++failures;
        ADD_FAILURE() << name << "(" << a[i] << ", " << b[i] << ") = " << got[i] << ", want " << w;
      }
    }
  };
  pto_tile::TAtan2<kN>(got.data(), a.data(), b.data());
  check2("atan2", [](double y, double x) { return std::atan2(y, x); });
  pto_tile::THypot<kN>(got.data(), a.data(), b.data());
  check2("hypot", [](double y, double x) { return std::hypot(y, x); });
  pto_tile::TFmod<kN>(got.data(), a.data(), b.data());
  check2("fmod", [](double y, double x) { return std::fmod(y, x); });
  float y[4] = {0.0f, -0.0f, kInf, kNan}, x[4] = {-0.0f, -0.0f, -kInf, kInf}, r[4];
  pto_tile::TAtan2<4>(r, y, x);
  EXPECT_FLOAT_EQ(r[0], static_cast<float>(M_PI));
  EXPECT_FLOAT_EQ(r[1], -static_cast<float>(M_PI));
  EXPECT_FLOAT_EQ(r[2], static_cast<float>(3 * M_PI / 4));
  pto_tile::THypot<4>(r, y, x);
  EXPECT_EQ(r[3], kInf);  // hypot(NaN, inf) = inf
}

TEST_F(PtoTileMath, ResultsDoNotDependOnTheTileLength) {
  const std::vector<float> a = Inputs(3);
  std::vector<float> whole(kN), one(1);
  pto_tile::TTan<kN>(whole.data(), a.data());
  for (int64_t i = 0; i < kN; i += 13) {
    pto_tile::TTan<1>(one.data(), a.data() + i);
    EXPECT_EQ(pto_tile::BitsFromFloat(one[0]), pto_tile::BitsFromFloat(whole[i])) << i;
  }
  pto_tile::TAtan2<kN>(whole.data(), a.data(), a.data());
  for (int64_t i = 0; i < kN; i += 13) {
    pto_tile::TAtan2<1>(one.data(), a.data() + i, a.data() + i);
    EXPECT_EQ(pto_tile::BitsFromFloat(one[0]), pto_tile::BitsFromFloat(whole[i])) << i;
  }
}

TEST_F(PtoTileMath, RowsFormReadsOneValuePerRow) {
  constexpr int64_t R = 3, C = 11;
  std::vector<float> a(R * C), row = {0.5f, -2.0f, 0.0f}, got(R * C), want(R * C);
  for (int64_t i = 0; i < R * C; ++i) a[i] = 0.37f * static_cast<float>(i) - 5.0f;
  pto_tile::TAtan2Rows<R, C, pto_tile::kFull, pto_tile::kRow>(got.data(), a.data(), row.data());
  for (int64_t r = 0; r < R; ++r) {
    pto_tile::TAtan2<C>(want.data() + r * C, a.data() + r * C,
                        std::vector<float>(C, row[r]).data());
  }
  for (int64_t i = 0; i < R * C; ++i) EXPECT_EQ(got[i], want[i]) << i;
}

TEST_F(PtoTileMath, HalfResultsAreTheDoubleResultRounded) {
  std::vector<float> x(kN), got(kN);
  for (int64_t i = 0; i < kN; ++i) {
    x[i] = pto_tile::Round<pto_tile::half>::Apply(3.0f * static_cast<float>(i) / kN - 1.5f);
  }
  pto_tile::TSinh<kN, pto_tile::half>(got.data(), x.data());
  for (int64_t i = 0; i < kN; ++i) {
    const float want = pto_tile::Round<pto_tile::half>::Apply(
        static_cast<float>(std::sinh(static_cast<double>(x[i]))));
    EXPECT_EQ(got[i], want) << x[i];
  }
}

// TFmod's direct path (double, branch-free) gives fmodf's bits: random bit
// patterns (every exponent, NaN, inf, subnormals), quotients near integers
// (x = k * y +- an ulp), large quotients; and its Rows form.
TEST_F(PtoTileMath, FmodGivesFmodfBits) {
  constexpr int64_t kPairs = 1 << 16;
  std::vector<float> a(kPairs), b(kPairs), got(kPairs);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int round = 0; round < 16; ++round) {
    for (int64_t i = 0; i < kPairs; ++i) {
      const uint64_t r = next();
      if (round % 2 == 0) {
        a[i] = pto_tile::FloatFromBits(static_cast<uint32_t>(r));
        b[i] = pto_tile::FloatFromBits(static_cast<uint32_t>(r >> 32));
      } else {
        // y in [2^-10, 2^10), x = k * y moved by -2..2 steps, k up to 2^25.
        b[i] = std::ldexp(1.0f + static_cast<float>(r & 0xFFFFF) / 0x1p20f,
                          static_cast<int>((r >> 20) % 20) - 10);
        const float k = static_cast<float>((r >> 40) % (round < 8 ? 1000 : 1 << 25));
        float x = k * b[i];
        for (int s = static_cast<int>((r >> 60) % 5); s > 2; --s) x = std::nextafter(x, kInf);
        a[i] = (r >> 63) ? -x : x;
      }
    }
    pto_tile::TFmod<kPairs>(got.data(), a.data(), b.data());
    int failures = 0;
    for (int64_t i = 0; i < kPairs && failures < 8; ++i) {
      const float want = std::fmod(a[i], b[i]);
      if (std::isnan(want) ? !std::isnan(got[i])
                           : pto_tile::BitsFromFloat(got[i]) != pto_tile::BitsFromFloat(want)) {
        ++failures;
        ADD_FAILURE() << "fmod(" << std::hexfloat << a[i] << ", " << b[i] << ") = " << got[i]
                      << ", want " << want;
      }
    }
  }
  constexpr int64_t R = 2, C = 9;
  const float rows[R] = {0.75f, -kInf};
  float x[R * C], d[R * C];
  for (int64_t i = 0; i < R * C; ++i) x[i] = 1.3f * static_cast<float>(i) - 7.0f;
  pto_tile::TFmodRows<R, C, pto_tile::kFull, pto_tile::kRow>(d, x, rows);
  for (int64_t i = 0; i < R * C; ++i) {
    EXPECT_EQ(pto_tile::BitsFromFloat(d[i]), pto_tile::BitsFromFloat(std::fmod(x[i], rows[i / C])))
        << i;
  }
}

TEST_F(PtoTileMath, SignbitOfSpecialValues) {
  float x[6] = {-0.0f, 0.0f, -kInf, kNan, -kNan, -1e-45f}, y[6];
  pto_tile::TSignbit<6>(y, x);
  const float want[6] = {1, 0, 1, 0, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], want[i]) << i;
}

TEST_F(PtoTileMath, IntegerBitwiseGcdAndFmod) {
  const int64_t a[6] = {-5, 5, 100, -128, INT32_MIN, 12};
  const int64_t b[6] = {3, -3, 0, 7, -1, -18};
  int64_t d[6];
  pto_tile::TAnd<6>(d, a, b);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], a[i] & b[i]);
  pto_tile::TOr<6>(d, a, b);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], a[i] | b[i]);
  pto_tile::TXor<6>(d, a, b);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], a[i] ^ b[i]);
  pto_tile::TNot<6, int32_t>(d, a);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], ~a[i]);
  const int64_t g[6] = {3, -3, 0, 7, 0, -18};
  pto_tile::TGcd<6, int32_t>(d, a, g);
  const int64_t gcd[6] = {1, 1, 100, 1, INT32_MIN, 6};  // |INT32_MIN| wraps in INT32
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], gcd[i]) << i;
  pto_tile::TFmod<6, int32_t>(d, a, b);
  const int64_t fmod[6] = {-2, 2, 0, -2, 0, 12};  // the dividend's sign; x fmod 0 gives 0
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d[i], fmod[i]) << i;
}

TEST_F(PtoTileMath, ShiftsTakeTheCountModuloTheShiftWidth) {
  const int64_t a[4] = {-5, 5, 100, -128};
  const int64_t counts[6] = {3, 31, 32, 33, -1, 70};
  for (int64_t c : counts) {
    const int64_t b[4] = {c, c, c, c};
    int64_t d[4];
    pto_tile::TShl<4, int32_t>(d, a, b);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(d[i], static_cast<int32_t>(static_cast<uint32_t>(a[i]) << (c & 31))) << c;
    }
    pto_tile::TShr<4, int32_t>(d, a, b);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d[i], a[i] >> (c & 31)) << c;
    pto_tile::TShl<4>(d, a, b);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(d[i], static_cast<int64_t>(static_cast<uint64_t>(a[i]) << (c & 63))) << c;
    }
    pto_tile::TShr<4>(d, a, b);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(d[i], a[i] >> (c & 63)) << c;
  }
}

}  // namespace
