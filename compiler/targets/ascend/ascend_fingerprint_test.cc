#include "compiler/targets/ascend/ascend_fingerprint.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile.h"
#include "compiler/key/fingerprint.h"
#include "compiler/targets/ascend/ascend_backend.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/ascend_target.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;

AscendFingerprintInputs Sample() {
  AscendFingerprintInputs in;
  in.target = "ascend-a2a3-cpusim";
  in.flags = {"-O2: -std=c++20 -O2 -D__CPU_SIM"};
  in.pto_isa = "sha256:00ff";
  in.toolchain = "";
  return in;
}

TEST(AscendFingerprintTest, ChangesWithEveryInput) {
  const std::string base = AscendFingerprintOf("compiler-1", Sample());
  ASSERT_EQ(base.size(), 64u);
  EXPECT_EQ(AscendFingerprintOf("compiler-1", Sample()), base);
  EXPECT_NE(AscendFingerprintOf("compiler-2", Sample()), base) << "compiler fingerprint";
  std::vector<std::pair<std::string, std::function<void(AscendFingerprintInputs*)>>> changes = {
      {"target", [](AscendFingerprintInputs* in) { in->target = "ascend-a2a3"; }},
      {"a CPU-simulation flag", [](AscendFingerprintInputs* in) { in->flags[0] += " -DX"; }},
      {"an added flag line", [](AscendFingerprintInputs* in) { in->flags.push_back("-O3: x"); }},
      {"the PTO-ISA version", [](AscendFingerprintInputs* in) { in->pto_isa = "sha256:00fe"; }},
      {"the CANN toolchain", [](AscendFingerprintInputs* in) { in->toolchain = "bisheng 8.0"; }},
  };
  for (const auto& [what, change] : changes) {
    AscendFingerprintInputs in = Sample();
    change(&in);
    EXPECT_NE(AscendFingerprintOf("compiler-1", in), base) << what;
  }
}

TEST(AscendFingerprintTest, InputsAreTheBuildsOwnFlagsAndToolchain) {
  const AscendFingerprintInputs sim =
      CurrentAscendFingerprintInputs("ascend-a2a3-cpusim", AcceptedOptLevels());
  const std::vector<int> levels = AcceptedOptLevels();
  ASSERT_EQ(sim.flags.size(), levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    EXPECT_EQ(sim.flags[i],
              absl::StrCat("-O", levels[i], ": ",
                           absl::StrJoin(AscendCpuSimArgs(levels[i], "<PTO-ISA>", "kernel.cc",
                                                          "kernel.so"),
                                         " ")));
  }
  EXPECT_EQ(sim.toolchain, "");  // the CPU simulation's compiler is the host's
  const AscendFingerprintInputs device =
      CurrentAscendFingerprintInputs("ascend-a2a3", AcceptedOptLevels());
  EXPECT_EQ(device.toolchain, CannToolchainVersion());
  EXPECT_FALSE(device.toolchain.empty());
}

// A folder standing in for a PTO-ISA include folder.
std::string FakeInclude(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string include = absl::StrCat(dir.path(), "/", name, "/include");
  std::filesystem::create_directories(include + "/pto/cpu");
  EXPECT_TRUE(WriteFile(include + "/pto/pto-inst.hpp", "#pragma once\n").ok());
  EXPECT_TRUE(WriteFile(include + "/pto/cpu/TAdd.hpp", text).ok());
  return include;
}

TEST(AscendFingerprintTest, PtoIsaVersionIsTheHeadersContents) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-isa-version-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string a = FakeInclude(*dir, "a", "// v1\n");
  const std::string b = FakeInclude(*dir, "b", "// v1\n");
  const std::string c = FakeInclude(*dir, "c", "// v2\n");
  EXPECT_TRUE(absl::StartsWith(PtoIsaVersion(a), "sha256:")) << PtoIsaVersion(a);
  EXPECT_EQ(PtoIsaVersion(a), PtoIsaVersion(b));  // the same headers elsewhere
  EXPECT_NE(PtoIsaVersion(a), PtoIsaVersion(c));
  EXPECT_THAT(PtoIsaVersion(dir->path() + "/none"), HasSubstr("unreadable"));
}

// Sets PTO_ISA_ROOT for the scope, restoring what was there.
class ScopedPtoIsaRoot {
 public:
  explicit ScopedPtoIsaRoot(const std::string& root) {
    if (const char* v = std::getenv("PTO_ISA_ROOT")) saved_ = v;
    setenv("PTO_ISA_ROOT", root.c_str(), 1);
  }
  ~ScopedPtoIsaRoot() {
    if (saved_) {
      setenv("PTO_ISA_ROOT", saved_->c_str(), 1);
    } else {
      unsetenv("PTO_ISA_ROOT");
    }
  }

 private:
  std::optional<std::string> saved_;
};

// The cache key of an Ascend kernel changes with the PTO-ISA headers; a host
// kernel's does not.
TEST(AscendFingerprintTest, TheCacheKeyFollowsThePtoIsaVersion) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-isa-key-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string v1 = FakeInclude(*dir, "v1", "// v1\n");
  const std::string v2 = FakeInclude(*dir, "v2", "// v2\n");
  const pto::v1::Graph g = testing::ExpAddGraph();
  auto key = [&](const std::string& include, const std::string& target) {
    ScopedPtoIsaRoot root(include);
    absl::StatusOr<std::string> k = CacheKey(g, target, {});
    EXPECT_TRUE(k.ok()) << k.status();
    return k.ok() ? *k : "";
  };
  const std::string sim = runtime::kAscendA2A3CpuSimTarget;
  EXPECT_EQ(key(v1, sim), key(v1, sim));
  EXPECT_NE(key(v1, sim), key(v2, sim));
  const std::string host = runtime::KnownHostTargets()[0];
  EXPECT_EQ(key(v1, host), key(v2, host));
  EXPECT_NE(key(v1, sim), key(v1, host));
  EXPECT_EQ(TargetFingerprint(host), CompilerFingerprint());
  {
    ScopedPtoIsaRoot root(v1);
    EXPECT_EQ(TargetFingerprint(sim),
              AscendFingerprintOf(CompilerFingerprint(),
                                  CurrentAscendFingerprintInputs(sim, AcceptedOptLevels())));
    EXPECT_NE(TargetFingerprint(sim), CompilerFingerprint());
  }
}

}  // namespace
}  // namespace pto::compiler
