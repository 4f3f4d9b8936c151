#include "client/ptoc/check.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "runtime/test_payload.h"

namespace pto::ptoc {
namespace {

using ::testing::HasSubstr;

// The graph the runtime's test kernel implements, y = (x + 1) * 2, with the
// multiplier as a parameter so that a wrong graph can be made.
pto::v1::Graph AddOneTimes(double factor) {
  pto::v1::Graph g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    values { id: 1 name: "x" dtype: DT_FP32 shape { dims { size: 300 } } }
    values { id: 2 dtype: DT_FP32 shape { dims { size: 300 } } }
    values { id: 3 name: "y" dtype: DT_FP32 shape { dims { size: 300 } } }
    params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "y" role: PARAM_ROLE_OUT value_id: 3 }
    ops { kind: "adds" inputs: 1 outputs: 2 attrs { key: "scalar" value { f: 1 } } }
    ops { kind: "muls" inputs: 2 outputs: 3 }
  )pb", &g));
  (*g.mutable_ops(1)->mutable_attrs())["scalar"].set_f(factor);
  return g;
}

std::unique_ptr<runtime::Kernel> Kernel() {
  auto binary = runtime::testing::AddOneTimesTwoBinary(300, 64);
  EXPECT_TRUE(binary.ok()) << binary.status();
  auto kernel = runtime::Kernel::Load(*binary);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

TEST(CheckTest, PassesWhenKernelMatchesGraph) {
  auto kernel = Kernel();
  ASSERT_NE(kernel, nullptr);
  auto report = RunAndCheck(AddOneTimes(2.0), *kernel, CheckOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs[0].count, 300);
  EXPECT_TRUE(report->pass()) << report->Summary();
  EXPECT_THAT(report->Summary(), HasSubstr("PASS"));
}

TEST(CheckTest, FailsWhenKernelDiffers) {
  auto kernel = Kernel();
  ASSERT_NE(kernel, nullptr);
  auto report = RunAndCheck(AddOneTimes(2.001), *kernel, CheckOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->pass());
  EXPECT_EQ(report->outputs[0].mismatches, 300);
  EXPECT_GT(report->outputs[0].max_rel_error, 1e-4);
  EXPECT_THAT(report->Summary(), HasSubstr("FAIL"));
  EXPECT_THAT(report->Summary(), HasSubstr("first: index 0 [0]"));
}

TEST(CheckTest, UnwrittenOutputsAreMismatches) {
  HostTensor got = *HostTensor::Create(pto::v1::DT_FP16, {2, 2});
  reference::RefTensor want{pto::v1::DT_FP16, {2, 2}, {1, 2, 3, 4}};
  for (int i = 0; i < 4; ++i) got.Set(i, want.data[i]);
  got.Set(3, NAN);
  Comparison c = Compare("out", got, want, Tolerance());
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.first_mismatch, HasSubstr("index 3 [1,1]: got nan, want 4"));
}

TEST(CheckTest, Fp16ToleranceIsOneUlp) {
  HostTensor got = *HostTensor::Create(pto::v1::DT_FP16, {3});
  reference::RefTensor want{pto::v1::DT_FP16, {3}, {1.0, 1.0, 1.0}};
  got.Set(0, 1.0);
  got.Set(1, 1.0 + 1.0 / 1024);  // one ulp above
  got.Set(2, 1.0 + 2.0 / 1024);  // two ulps above
  Comparison c = Compare("out", got, want, Tolerance());
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.first_mismatch, HasSubstr("index 2"));
}

}  // namespace
}  // namespace pto::ptoc


namespace pto::ptoc {
namespace {

// x [1, n] -> exp(x - max(x)) / sum(...) over the row.
pto::v1::Graph RowSoftmax(int n) {
  pto::v1::Graph g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    values { id: 1 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    values { id: 2 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    values { id: 3 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    values { id: 4 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    values { id: 5 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    values { id: 6 dtype: DT_FP32 shape { dims { size: 1 } dims { size: 1 } } }
    params { name: "x" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "y" role: PARAM_ROLE_OUT value_id: 6 }
    ops { kind: "amax" inputs: 1 outputs: 2 attrs { key: "dim" value { i: -1 } } }
    ops { kind: "sub" inputs: 1 inputs: 2 outputs: 3 }
    ops { kind: "exp" inputs: 3 outputs: 4 }
    ops { kind: "sum" inputs: 4 outputs: 5 attrs { key: "dim" value { i: -1 } } }
    ops { kind: "div" inputs: 4 inputs: 5 outputs: 6 }
  )pb", &g));
  for (uint32_t id : {1, 3, 4, 6}) g.mutable_values(id - 1)->mutable_shape()->mutable_dims(1)->set_size(n);
  return g;
}

// A softmax output's bound is relative to the output itself (its exp's and
// its row sum's, n u), however long the row and however small the value:
// no zeroed or scaled output is within it.
TEST(CheckTest, SoftmaxBoundIsRelativeToEachOutput) {
  for (int n : {100, 1000, 5000}) {
    reference::RefTensor x{pto::v1::DT_FP32, {1, n}, {}};
    for (int k = 0; k < n; ++k) x.data.push_back(-100.0 + 160.0 * k / n);  // x - max to -160
    auto out = reference::EvaluateReference(RowSoftmax(n), {x, reference::RefTensor{}});
    ASSERT_TRUE(out.ok()) << out.status();
    const reference::RefTensor& y = (*out)[1];
    ASSERT_EQ(y.bound.size(), static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      if (y.data[k] < 1e-37) continue;  // FP32 subnormals: absolute
      EXPECT_LT(y.bound[k], (n + 2000) * 0x1p-24 * y.data[k]) << "n " << n << " k " << k;
    }
    HostTensor zeros = *HostTensor::Create(pto::v1::DT_FP32, {1, n});
    HostTensor scaled = zeros;
    for (int k = 0; k < n; ++k) scaled.Set(k, y.data[k] * 1.25);
    EXPECT_GE(Compare("y", zeros, y).mismatches, std::count_if(y.data.begin(), y.data.end(),
                                                               [](double v) { return v > 1e-40; }));
    EXPECT_FALSE(Compare("y", scaled, y).ok());
  }
}

// (a + b).exp() * 2 - a where exp(a + b) * 2 is within a few ulps of a:
// the result's bound comes from its terms, so FP32 evaluation with an exp
// 2 ulps off passes, and 1e-4 of the terms off fails.
TEST(CheckTest, ADifferenceOfNearlyEqualTermsIsJudgedByItsTerms) {
  pto::v1::Graph g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    values { id: 1 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 2 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 3 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 4 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 5 dtype: DT_FP32 shape { dims { size: 3 } } }
    values { id: 6 dtype: DT_FP32 shape { dims { size: 3 } } }
    params { name: "a" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "b" role: PARAM_ROLE_IN value_id: 2 }
    params { name: "out" role: PARAM_ROLE_OUT value_id: 6 }
    ops { kind: "add" inputs: 1 inputs: 2 outputs: 3 }
    ops { kind: "exp" inputs: 3 outputs: 4 }
    ops { kind: "muls" inputs: 4 outputs: 5 attrs { key: "scalar" value { f: 2 } } }
    ops { kind: "sub" inputs: 5 inputs: 1 outputs: 6 }
  )pb", &g));
  const std::vector<float> a = {1.5f, -0.75f, 1.9f};
  std::vector<float> b(3);
  for (int i = 0; i < 3; ++i) {
    // exp(a + b) * 2 ~= a: b = log(a / 2) - a, for the positive a.
    b[i] = a[i] > 0 ? std::log(a[i] / 2) - a[i] : 0.3f;
  }
  reference::RefTensor ra{pto::v1::DT_FP32, {3}, {a.begin(), a.end()}};
  reference::RefTensor rb{pto::v1::DT_FP32, {3}, {b.begin(), b.end()}};
  auto out = reference::EvaluateReference(g, {ra, rb, reference::RefTensor{}});
  ASSERT_TRUE(out.ok()) << out.status();
  const reference::RefTensor& want = (*out)[2];
  HostTensor got = *HostTensor::Create(pto::v1::DT_FP32, {3});
  for (int i = 0; i < 3; ++i) {
    float e = std::exp(a[i] + b[i]);
    e = std::nextafter(std::nextafter(e, 1e30f), 1e30f);  // 2 ulps high
    got.Set(i, e * 2.0f - a[i]);
  }
  const Comparison c = Compare("out", got, want);
  EXPECT_TRUE(c.ok()) << c.first_mismatch;
  EXPECT_GT(c.max_rel_error, 1e-6);  // relative to the small result: large
  for (int i = 0; i < 3; ++i) {
    HostTensor wrong = got;
    wrong.Set(i, want.data[i] + 1e-4 * (std::fabs(a[i]) + 2 * std::exp(a[i] + b[i])));
    EXPECT_FALSE(Compare("out", wrong, want).ok()) << i;
  }
}

}  // namespace
}  // namespace pto::ptoc
