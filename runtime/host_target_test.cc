// Host target names, compiler flags and the AMX probe.
#include "runtime/host_target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

using ::testing::ElementsAre;

TEST(HostTargetTest, AmxTargetIsV3PlusAmxFlags) {
  EXPECT_THAT(KnownHostTargets(),
              ElementsAre("host-x86_64", "host-x86_64-v3", "host-x86_64-v3-amx"));
  EXPECT_THAT(HostTargetFlags("host-x86_64-v3"), ElementsAre("-march=x86-64-v3"));
  EXPECT_THAT(HostTargetFlags(kHostAmxTarget),
              ElementsAre("-march=x86-64-v3", "-mamx-tile", "-mamx-bf16"));
  EXPECT_TRUE(HostTargetFlags("host-riscv64").empty());
  EXPECT_TRUE(HostTargetHasAmx(kHostAmxTarget));
  EXPECT_FALSE(HostTargetHasAmx("host-x86_64-v3"));
}

// "host" is the most capable runnable target: the AMX one exactly when the
// probe says AMX is usable (and the CPU has v3).
TEST(HostTargetTest, NativeTargetFollowsTheAmxProbe) {
  const bool v3 = CanRunHostTarget("host-x86_64-v3");
  SetAmxProbeForTesting([] { return false; });
  EXPECT_EQ(NativeHostTarget(), v3 ? "host-x86_64-v3" : "host-x86_64");
  SetAmxProbeForTesting([] { return true; });
  EXPECT_EQ(NativeHostTarget(), v3 ? kHostAmxTarget : "host-x86_64");
  SetAmxProbeForTesting(nullptr);
  // The real check agrees with itself (and asked the OS at most once).
  EXPECT_EQ(HostHasAmxBf16(), HostHasAmxBf16());
  EXPECT_EQ(CanRunHostTarget(kHostAmxTarget), v3 && HostHasAmxBf16());
}

}  // namespace
}  // namespace pto::runtime
