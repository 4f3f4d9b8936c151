#include "client/ptoc/check.h"

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
  RefTensor want{pto::v1::DT_FP16, {2, 2}, {1, 2, 3, 4}};
  for (int i = 0; i < 4; ++i) got.Set(i, want.data[i]);
  got.Set(3, NAN);
  Comparison c = Compare("out", got, want, Tolerance());
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.first_mismatch, HasSubstr("index 3 [1,1]: got nan, want 4"));
}

TEST(CheckTest, Fp16ToleranceIsOneUlp) {
  HostTensor got = *HostTensor::Create(pto::v1::DT_FP16, {3});
  RefTensor want{pto::v1::DT_FP16, {3}, {1.0, 1.0, 1.0}};
  got.Set(0, 1.0);
  got.Set(1, 1.0 + 1.0 / 1024);  // one ulp above
  got.Set(2, 1.0 + 2.0 / 1024);  // two ulps above
  Comparison c = Compare("out", got, want, Tolerance());
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.first_mismatch, HasSubstr("index 2"));
}

}  // namespace
}  // namespace pto::ptoc

