#include "compiler/reference/reference_error.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace pto::reference {
namespace {

constexpr double kU = 0x1p-24;  // FP32's unit roundoff

TEST(ReferenceErrorTest, OwnErrorFollowsTheOpAndTheResult) {
  // One rounding by the kernel, one by the reference.
  EXPECT_NEAR(OpError("add", 3.0, pto::v1::DT_FP32), 2 * 3.0 * kU, 1e-20);
  // Division: two roundings by the kernel.
  EXPECT_NEAR(OpError("div", 3.0, pto::v1::DT_FP32), 3 * 3.0 * kU, 1e-20);
  // Math functions: 4 ulp.
  EXPECT_NEAR(OpError("exp", 3.0, pto::v1::DT_FP32), 9 * 3.0 * kU, 1e-20);
  // Exact ops and integers: none.
  EXPECT_EQ(OpError("maximum", 3.0, pto::v1::DT_FP32), 0);
  EXPECT_EQ(OpError("add", 3.0, pto::v1::DT_INT32), 0);
  // FP16: computed in FP32, rounded to FP16 by the kernel and the reference
  // (half an ulp each, plus half the smallest subnormal).
  EXPECT_NEAR(OpError("add", 1.0, pto::v1::DT_FP16), kU + 2 * (0x1p-11 + 0x1p-25), 1e-12);
}

TEST(ReferenceErrorTest, PropagationIsTheFunctionsRangeOverTheInterval) {
  const auto exp = [](double x) { return std::exp(x); };
  // exp over [1 - 0.01, 1 + 0.01]: the upper end moves furthest.
  EXPECT_DOUBLE_EQ(PropagateUnary("exp", exp, 1.0, 0.01, std::exp(1.0)),
                   std::exp(1.01) - std::exp(1.0));
  EXPECT_EQ(PropagateUnary("exp", exp, 1.0, 0.0, std::exp(1.0)), 0);
  const auto log = [](double x) { return std::log(x); };
  // log over an interval reaching 0: undetermined.
  EXPECT_TRUE(std::isinf(PropagateUnary("log", log, 0.01, 0.02, std::log(0.01))));
  const auto mul = [](double a, double b) { return a * b; };
  EXPECT_DOUBLE_EQ(PropagateBinary("mul", mul, 2.0, 0.1, -3.0, 0.2, -6.0), 2.1 * 3.2 - 6.0);
}

TEST(ReferenceErrorTest, UndeterminedResultsHaveNoBound) {
  const auto div = [](double a, double b) { return a / b; };
  EXPECT_TRUE(std::isinf(PropagateBinary("div", div, 1.0, 0.0, 1e-8, 2e-8, 1e8)));
  EXPECT_TRUE(std::isfinite(PropagateBinary("div", div, 1.0, 0.0, 1.0, 1e-3, 1.0)));
  const auto gt = [](double a, double b) { return a > b ? 1.0 : 0.0; };
  EXPECT_TRUE(std::isinf(PropagateBinary("gt", gt, 1.0, 1e-6, 1.0 + 1e-7, 0.0, 0.0)));
  EXPECT_EQ(PropagateBinary("gt", gt, 1.0, 1e-6, 2.0, 0.0, 0.0), 0);
  const auto eq = [](double a, double b) { return a == b ? 1.0 : 0.0; };
  EXPECT_TRUE(std::isinf(PropagateBinary("eq", eq, 1.0, 1e-6, 1.0, 0.0, 1.0)));
}

}  // namespace
}  // namespace pto::reference
