// The Ascend target's compositions (compiler/targets/ascend/ascend_math.h)
// over sweeps of their inputs: each sweep's kernel is compiled for
// ascend-a2a3, built against the PTO-ISA CPU simulation, run, and every
// result compared with the function in double precision. The largest error
// in ulps of the f32 result must stay within the bound docs/pto-isa.md
// states for the op; each sweep prints its measured maximum. Non-finite
// results must match exactly (NaN with NaN, inf with the same inf).
//
// Without the PTO-ISA headers every sweep is skipped, saying what to install.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/compile.h"
#include "compiler/targets/ascend/testing/pto_isa_for_tests.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/ascend_target.h"
#include "runtime/kernel.h"

namespace pto {
namespace {

constexpr char kExampleData[] = "examples/graphs/add_exp.pbtxt";
constexpr int64_t kRows = 256, kCols = 256;  // the sweep's points

// |got - want| in ulps of want rounded to f32 (at least the smallest
// denormal's); infinite where a non-finite value differs.
double UlpError(float got, double want) {
  if (std::isnan(want) || std::isnan(got)) {
    return std::isnan(want) && std::isnan(got) ? 0 : INFINITY;
  }
  const float w = static_cast<float>(want);
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0 : INFINITY;
  const double aw = std::fabs(static_cast<double>(w));
  const double ulp = aw < 0x1p-126 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(aw) - 23);
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

struct Sweep {
  std::string name;
  std::string op;       // FP32 input x (and a scalar when `scalar` is set)
  double scalar = NAN;  // NaN: none
  double lo, hi;        // x: uniform over [lo, hi]; log_spaced: |x| log-uniform
  bool log_spaced = false;
  bool both_signs = false;  // every other point negated
  std::function<double(double)> reference;
  double max_ulp;  // docs/pto-isa.md's stated bound
  // A binary op (reference2 set): y is x's sweep in another order (point
  // i * 7919 mod n), so every magnitude meets many others, or y's own range.
  std::function<double(double, double)> reference2 = nullptr;
  // y's own range (set: uniform over [y_lo, y_hi] in the same other order,
  // rounded to integers with y_integral); unset: x's points.
  double y_lo = NAN, y_hi = NAN;
  bool y_integral = false;
};

std::vector<float> Points(const Sweep& s) {
  std::vector<float> x(kRows * kCols);
  const double n = static_cast<double>(x.size() - 1);
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = static_cast<double>(i) / n;
    double v = s.log_spaced ? std::exp(std::log(s.lo) + f * (std::log(s.hi) - std::log(s.lo)))
                            : s.lo + f * (s.hi - s.lo);
    if (s.both_signs && i % 2 == 1) v = -v;
    x[i] = static_cast<float>(v);
  }
  return x;
}

// The second operand: x's points in another order (point i * 7919 mod n),
// or y's own range in that order.
std::vector<float> SecondPoints(const Sweep& s, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  const double n = static_cast<double>(y.size() - 1);
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t j = i * 7919 % y.size();
    if (std::isnan(s.y_lo)) {
      y[i] = x[j];
      continue;
    }
    const double v = s.y_lo + static_cast<double>(j) / n * (s.y_hi - s.y_lo);
    y[i] = static_cast<float>(s.y_integral ? std::rint(v) : v);
  }
  return y;
}

// A libm function in double precision, the overload named by the type.
std::function<double(double)> Of(double (*f)(double)) { return f; }

std::vector<Sweep> Sweeps() {
  auto pow_of = [](double c) { return [c](double x) { return std::pow(c, x); }; };
  auto pow_to = [](double b) { return [b](double x) { return std::pow(x, b); }; };
  return {
      // rpows: exponents wide enough to overflow and underflow.
      {"RPowS1p5", "rpows", 1.5, -230, 230, false, false, pow_of(1.5), 2},
      {"RPowS10", "rpows", 10, -46, 39, false, false, pow_of(10), 2},
      {"RPowS0p3", "rpows", 0.3, -75, 85, false, false, pow_of(0.3), 2},
      {"RPowSNeg2", "rpows", -2, -130, 130, false, false, pow_of(-2), 2},
      {"RPowSNear1", "rpows", 1.0000001, -1e9, 1e9, false, false, pow_of(1.0000001), 2},
      // pows: by products for multiples of 1/2 from -2 to 4.
      {"PowS1p5", "pows", 1.5, 1e-30, 1e25, true, false, pow_to(1.5), 3},
      {"PowS3", "pows", 3, 1e-14, 1e12, true, true, pow_to(3), 3},
      {"PowS4", "pows", 4, 1e-10, 1e9, true, true, pow_to(4), 3},
      {"PowSNeg2", "pows", -2, 1e-18, 1e18, true, true, pow_to(-2), 3},
      {"PowSNeg1p5", "pows", -1.5, 1e-24, 1e24, true, false, pow_to(-1.5), 3},
      {"PowSNeg1", "pows", -1, 1e-37, 1e37, true, true, pow_to(-1), 3},
      {"PowS0p5", "pows", 0.5, 1e-38, 1e38, true, false, pow_to(0.5), 3},
      {"Tan", "tan", NAN, -4.7, 4.7, false, false, Of(std::tan), 3},
      {"Atan", "atan", NAN, 1e-30, 1e30, true, true, Of(std::atan), 3},
      {"Asin", "asin", NAN, 1e-30, 1, true, true, Of(std::asin), 4},
      {"Acos", "acos", NAN, -1, 1, false, false, Of(std::acos), 4},
      {"Sinh", "sinh", NAN, -89.5, 89.5, false, false, Of(std::sinh), 3},
      {"SinhSmall", "sinh", NAN, 1e-30, 2, true, true, Of(std::sinh), 3},
      {"Cosh", "cosh", NAN, -89.5, 89.5, false, false, Of(std::cosh), 3},
      {"Asinh", "asinh", NAN, 1e-30, 1e30, true, true, Of(std::asinh), 2},
      {"Acosh", "acosh", NAN, 1, 1e30, true, false, Of(std::acosh), 3},
      {"AcoshNear1", "acosh", NAN, 1, 1.01, false, false, Of(std::acosh), 3},
      {"Atanh", "atanh", NAN, 1e-30, 1, true, true, Of(std::atanh), 2},
      {"Cbrt", "cbrt", NAN, 1e-38, 1e38, true, true, Of(std::cbrt), 1},
      // pow of two tiles: exponents that overflow and underflow, bases near
      // 1 with exponents to 800 (|y ln x| to 84), bases about sqrt(2) and
      // 1/sqrt(2) (log|x|'s reduction between binades) with exponents to
      // 250, negative bases with integral exponents.
      {"Pow", "pow", NAN, 1e-30, 1e30, true, false, nullptr, 3,
       [](double x, double y) { return std::pow(x, y); }, -4, 4},
      {"PowNear1", "pow", NAN, 0.9, 1.1, false, false, nullptr, 3,
       [](double x, double y) { return std::pow(x, y); }, -800, 800},
      {"PowBinades", "pow", NAN, 0.5, 2, false, false, nullptr, 3,
       [](double x, double y) { return std::pow(x, y); }, -250, 250},
      {"PowNegative", "pow", NAN, 1e-3, 1e3, true, true, nullptr, 3,
       [](double x, double y) { return std::pow(x, y); }, -12, 12, true},
      {"Atan2", "atan2", NAN, 1e-20, 1e20, true, true, nullptr, 3,
       [](double y, double x) { return std::atan2(y, x); }},
      {"Hypot", "hypot", NAN, 1e-30, 1e30, true, true, nullptr, 2,
       [](double x, double y) { return std::hypot(x, y); }},
      // Exact where |x / y| < 2^67: quotients here up to 1e18.
      {"Fmod", "fmod", NAN, 1e-9, 1e9, true, true, nullptr, 0,
       [](double x, double y) { return std::fmod(x, y); }},
      // torch's float formulas (client/ptoc's reference): the same float
      // operations on an exact fmod.
      {"Remainder", "remainder", NAN, 1e-9, 1e9, true, true, nullptr, 0,
       [](double x, double y) {
         float m = std::fmod(static_cast<float>(x), static_cast<float>(y));
         if (m != 0 && (y < 0) != (m < 0)) m += static_cast<float>(y);
         return static_cast<double>(m);
       }},
      {"FloorDivide", "floor_divide", NAN, 1e-9, 1e9, true, true, nullptr, 0,
       [](double xd, double yd) {
         const float a = static_cast<float>(xd), b = static_cast<float>(yd);
         if (b == 0) return static_cast<double>(a / b);
         const float mod = std::fmod(a, b);
         float div = (a - mod) / b;
         if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0f;
         if (div == 0) return std::copysign(0.0, static_cast<double>(a / b));
         float fl = std::floor(div);
         if (div - fl > 0.5f) fl += 1.0f;
         return static_cast<double>(fl);
       }},
  };
}

class AscendAccuracyTest : public ::testing::TestWithParam<Sweep> {
 protected:
  void SetUp() override {
    if (std::string why = compiler::testing::UsePtoIsaForTests(kExampleData); !why.empty()) {
      GTEST_SKIP() << why;
    }
  }
};

TEST_P(AscendAccuracyTest, WithinTheStatedUlps) {
  const Sweep& s = GetParam();
  compiler::testing::GraphBuilder b(absl::StrCat("sweep_", s.name));
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {kRows, kCols});
  std::vector<uint32_t> inputs = {x};
  if (s.reference2) inputs.push_back(b.Input("y", pto::v1::DT_FP32, {kRows, kCols}));
  b.Output("out", std::isnan(s.scalar) ? b.Op(s.op, inputs, {16, 64})
                                       : b.Op(s.op, inputs, {16, 64}, s.scalar));
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(b.graph(), runtime::kAscendA2A3Target, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const std::vector<float> in = Points(s);
  std::vector<float> in2 = SecondPoints(s, in), out(in.size(), -1.0f);
  std::vector<runtime::TensorArg> args = {{const_cast<float*>(in.data()), pto::v1::DT_FP32,
                                           {kRows, kCols}}};
  if (s.reference2) args.push_back({in2.data(), pto::v1::DT_FP32, {kRows, kCols}});
  args.push_back({out.data(), pto::v1::DT_FP32, {kRows, kCols}});
  ASSERT_TRUE((*kernel)->Run(args).ok());
  auto want = [&](size_t i) {
    return s.reference2 ? s.reference2(in[i], in2[i]) : s.reference(in[i]);
  };
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const double e = UlpError(out[i], want(i));
    if (e > worst) worst = e, at = i;
  }
  const std::string y = s.reference2 ? absl::StrFormat(", y = %.9g", in2[at]) : "";
  const std::string where =
      absl::StrFormat("x = %.9g%s: got %.9g, want %.9g", in[at], y, out[at], want(at));
  std::printf("%s: max %.2f ulp over %zu points (at %s)\n", s.name.c_str(), worst, in.size(),
              where.c_str());
  EXPECT_LE(worst, s.max_ulp) << s.name << " at " << where;
}

INSTANTIATE_TEST_SUITE_P(Compositions, AscendAccuracyTest, ::testing::ValuesIn(Sweeps()),
                         [](const ::testing::TestParamInfo<Sweep>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace pto
