// Linked into every _v4 test twin (tools/isa_variants.bzl). On a machine that
// cannot run x86-64-v4 code it
//   - prints one line, before any test:
//       SKIPPED: //compiler:pto_tile_test_v4 needs AVX-512 F, BW, CD, DQ and VL, ...
//   - records that reason as the pto_skip_reason attribute of the XML
//     report's <testsuites> element (tools/list_skips.py lists the target as
//     SKIPPED by it);
//   - skips every test as it starts: gtest still constructs the fixture
//     object, but runs neither SetUp nor the body, so no code built for
//     x86-64-v4 runs there, and records each case as skipped.
// On a machine that can run it, it does nothing.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace {

std::string TargetName() {
  const char* target = std::getenv("TEST_TARGET");  // set by bazel test
  return target != nullptr && *target != '\0' ? target
                                              : program_invocation_short_name;
}

class SkipWithoutV4 : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramStart(const ::testing::UnitTest&) override {
    using pto::runtime::kHostV4Target;
    if (pto::runtime::CanRunHostTarget(kHostV4Target)) return;
    reason_ = "needs " + pto::runtime::HostTargetNeeds(kHostV4Target) +
              "; this CPU or OS lacks them";
    std::printf("SKIPPED: %s %s\n", TargetName().c_str(), reason_.c_str());
    std::fflush(stdout);
    ::testing::Test::RecordProperty("pto_skip_reason", reason_);
  }

  void OnTestStart(const ::testing::TestInfo&) override {
    if (!reason_.empty()) GTEST_SKIP() << reason_;
  }

 private:
  std::string reason_;  // empty: the tests run
};

const bool kRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SkipWithoutV4);
  return true;
}();

}  // namespace
