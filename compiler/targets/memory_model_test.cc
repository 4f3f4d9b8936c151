#include "compiler/targets/memory_model.h"

#include "compiler/compile.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

// An AI core's buffer sizes, for every host target.
TEST(MemoryModelTest, EveryHostTargetIsAnAiCore) {
  for (const std::string& target : runtime::KnownHostTargets()) {
    absl::StatusOr<MemoryModel> m = TargetMemoryModel(target);
    ASSERT_TRUE(m.ok()) << target << ": " << m.status();
    EXPECT_EQ(m->ub_bytes, 192 * 1024) << target;
    EXPECT_EQ(m->l1_bytes, 512 * 1024) << target;
    EXPECT_EQ(m->l0a_bytes, 64 * 1024) << target;
    EXPECT_EQ(m->l0b_bytes, 64 * 1024) << target;
    EXPECT_EQ(m->l0c_bytes, 128 * 1024) << target;
  }
}

// "host" resolves to a target with a model (the pipeline looks it up).
TEST(MemoryModelTest, ResolvedHostHasOne) {
  absl::StatusOr<std::string> host = ResolveTarget("host");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_TRUE(TargetMemoryModel(*host).ok());
}

TEST(MemoryModelTest, UnknownTargetIsNamed) {
  absl::StatusOr<MemoryModel> m = TargetMemoryModel("cuda-sm90");
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(), ::testing::HasSubstr("\"cuda-sm90\" has no memory model"));
}

}  // namespace
}  // namespace pto::compiler
