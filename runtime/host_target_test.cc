// Host target names, compiler flags and the AMX and AVX-512 probes.
#include "runtime/host_target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(HostTargetTest, KnownTargetsMostCapableLast) {
  EXPECT_THAT(KnownHostTargets(),
              ElementsAre("host-x86_64", "host-x86_64-v3", "host-x86_64-v3-amx",
                          "host-x86_64-v4", "host-x86_64-v4-amx"));
  EXPECT_EQ(kHostV4Target, std::string("host-x86_64-v4"));
  EXPECT_EQ(kHostV4AmxTarget, std::string("host-x86_64-v4-amx"));
}

TEST(HostTargetTest, AmxTargetsAreTheirIsaLevelPlusAmxFlags) {
  EXPECT_THAT(HostTargetFlags("host-x86_64-v3"), ElementsAre("-march=x86-64-v3"));
  EXPECT_THAT(HostTargetFlags(kHostAmxTarget),
              ElementsAre("-march=x86-64-v3", "-mamx-tile", "-mamx-bf16"));
  EXPECT_THAT(HostTargetFlags(kHostV4AmxTarget),
              ElementsAre(HostTargetFlags(kHostV4Target)[0], "-mamx-tile",
                          "-mamx-bf16"));
  EXPECT_TRUE(HostTargetFlags("host-riscv64").empty());
  EXPECT_TRUE(HostTargetHasAmx(kHostAmxTarget));
  EXPECT_TRUE(HostTargetHasAmx(kHostV4AmxTarget));
  EXPECT_FALSE(HostTargetHasAmx("host-x86_64-v3"));
  EXPECT_FALSE(HostTargetHasAmx(kHostV4Target));
  EXPECT_FALSE(HostTargetHasAmx("host-x86_64"));
}

TEST(HostTargetTest, V4MarchAndNeeds) {
  EXPECT_EQ(HostTargetMarch(kHostV4Target), "x86-64-v4");
  EXPECT_EQ(HostTargetMarch(kHostV4AmxTarget), "x86-64-v4");
  EXPECT_EQ(HostTargetMarch("host-x86_64-v3"), "x86-64-v3");
  EXPECT_EQ(HostTargetMarch("host-x86_64-v5"), "");
  EXPECT_THAT(HostTargetFlags(kHostV4Target), ElementsAre("-march=x86-64-v4"));
  EXPECT_THAT(HostTargetNeeds(kHostV4Target),
              HasSubstr("AVX-512 F, BW, CD, DQ and VL, and the OS's saving of "
                        "the zmm and opmask state (x86-64-v4)"));
  EXPECT_THAT(HostTargetNeeds(kHostV4AmxTarget), HasSubstr("x86-64-v4"));
  EXPECT_THAT(HostTargetNeeds(kHostV4AmxTarget), HasSubstr("AMX-TILE and AMX-BF16"));
  EXPECT_EQ(HostTargetNeeds("host-x86_64-v5"), "");
}

// "host" is the most capable runnable target: the AMX one exactly when the
// probe says AMX is usable (and the CPU has v3), v4 exactly when the AVX-512
// probe says so.
TEST(HostTargetTest, NativeTargetFollowsTheProbes) {
  const bool v3 = CanRunHostTarget("host-x86_64-v3");
  const std::string base = v3 ? "host-x86_64-v3" : "host-x86_64";
  SetAvx512ProbeForTesting([] { return false; });
  SetAmxProbeForTesting([] { return false; });
  EXPECT_EQ(NativeHostTarget(), base);
  EXPECT_FALSE(CanRunHostTarget(kHostV4Target));
  EXPECT_FALSE(CanRunHostTarget(kHostV4AmxTarget));
  SetAmxProbeForTesting([] { return true; });
  EXPECT_EQ(NativeHostTarget(), v3 ? kHostAmxTarget : "host-x86_64");
  EXPECT_FALSE(CanRunHostTarget(kHostV4AmxTarget));
  SetAvx512ProbeForTesting([] { return true; });
  EXPECT_EQ(NativeHostTarget(), v3 ? kHostV4AmxTarget : "host-x86_64");
  SetAmxProbeForTesting([] { return false; });
  EXPECT_EQ(NativeHostTarget(), v3 ? kHostV4Target : "host-x86_64");
  EXPECT_EQ(CanRunHostTarget(kHostV4Target), v3);
  EXPECT_FALSE(CanRunHostTarget(kHostV4AmxTarget));
  SetAmxProbeForTesting(nullptr);
  SetAvx512ProbeForTesting(nullptr);
  // The real checks agree with themselves (and asked the OS at most once).
  EXPECT_EQ(HostHasAmxBf16(), HostHasAmxBf16());
  EXPECT_EQ(HostHasAvx512(), HostHasAvx512());
  EXPECT_EQ(CanRunHostTarget(kHostAmxTarget), v3 && HostHasAmxBf16());
  EXPECT_EQ(CanRunHostTarget(kHostV4Target), v3 && HostHasAvx512());
  EXPECT_EQ(CanRunHostTarget(kHostV4AmxTarget),
            v3 && HostHasAvx512() && HostHasAmxBf16());
}

#if defined(__x86_64__)
// The explicit CPUID + XCR0 check agrees with libgcc's, which makes the same
// XCR0 test before it reports AVX-512 (GCC 12).
TEST(HostTargetTest, Avx512ProbeAgreesWithTheCompilerRuntime) {
  __builtin_cpu_init();
  const bool gcc = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx512vl");
  EXPECT_EQ(HostHasAvx512(), gcc);
}
#endif

}  // namespace
}  // namespace pto::runtime
