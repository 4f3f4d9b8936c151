// The instructions the Ascend target maps in no form (ascend_unmapped.h): the
// predicate, the target's answer through TargetMaps (target_maps.h, what
// pypto asks), and a refusal of the code generator carrying the predicate's reason.
#include "compiler/targets/ascend/ascend_unmapped.h"

#include <map>
#include <string>

#include "compiler/pipeline.h"
#include "compiler/targets/target_maps.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/ascend_target.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;

TEST(AscendUnmappedTest, NamesTheInstructionsMappedInNoForm) {
  for (PtoOpcode op : {PtoOpcode::kTImg2Col, PtoOpcode::kTPhilox, PtoOpcode::kTPhiloxNormal}) {
    EXPECT_NE(AscendUnmappedReason(op), nullptr) << PtoOpcodeName(op);
  }
  EXPECT_THAT(AscendUnmappedReason(PtoOpcode::kTImg2Col),
              HasSubstr("the PTO-ISA CPU simulation does not implement TIMG2COL"));
  for (PtoOpcode op : {PtoOpcode::kTLoad, PtoOpcode::kTAdd, PtoOpcode::kTMatmul,
                       PtoOpcode::kMSort, PtoOpcode::kTSignbit, PtoOpcode::kTCumSum,
                       PtoOpcode::kTCumProd, PtoOpcode::kTRedLast, PtoOpcode::kTStore}) {
    EXPECT_EQ(AscendUnmappedReason(op), nullptr) << PtoOpcodeName(op);
  }
}

TEST(AscendUnmappedTest, TargetMapsAnswersFromTheTarget) {
  for (const char* ascend : {"ascend-a2a3", "ascend-a2a3-cpusim"}) {
    EXPECT_EQ(TargetMaps(ascend, "TIMG2COL").value_or(true), false) << ascend;
    EXPECT_EQ(TargetMaps(ascend, "TPHILOX").value_or(true), false) << ascend;
    EXPECT_EQ(TargetMaps(ascend, "TMATMUL").value_or(false), true) << ascend;
    EXPECT_EQ(TargetMaps(ascend, "TCUMSUM").value_or(false), true) << ascend;
    EXPECT_EQ(TargetMaps(ascend, "TSIGNBIT").value_or(false), true) << ascend;
  }
  EXPECT_EQ(TargetMaps("host", "TIMG2COL").value_or(false), true);
  EXPECT_EQ(TargetMaps("host-x86_64", "TCUMSUM").value_or(false), true);
  const absl::StatusOr<bool> unknown = TargetMaps("host", "TFROB");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown PTO instruction \"TFROB\""));
  EXPECT_FALSE(TargetMaps("ascend-a9", "TADD").ok());
}

// The vector code generator's refusal of philox_normal is the predicate's
// reason.
TEST(AscendUnmappedTest, TheCodeGeneratorRefusesWithTheReason) {
  testing::GraphBuilder b("philox_normal");
  b.Output("w", b.Create("philox_normal", pto::v1::DT_FP32, {64},
                         {{"key0", 1}, {"key1", 2}, {"counter0", 3}, {"counter1", 0},
                          {"counter2", 0}, {"counter3", 0}}));
  LoweringState state;
  state.graph = &b.graph();
  state.target = runtime::kAscendA2A3CpuSimTarget;
  std::map<std::string, std::string> dumps;
  const absl::Status s = RunPipeline(&state, nullptr, &dumps, "codegen");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr(std::string("TPHILOXNORMAL ") +
                        AscendUnmappedReason(PtoOpcode::kTPhiloxNormal)));
}

}  // namespace
}  // namespace pto::compiler
