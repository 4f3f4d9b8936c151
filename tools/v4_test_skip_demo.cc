// A _v4-style test binary on a simulated CPU without AVX-512, for
// list_skips_test.py: every case must be skipped by tools/v4_test_skip.cc
// before it runs (each fails if it runs).
#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace {

const bool kNoAvx512 = [] {
  pto::runtime::SetAvx512ProbeForTesting(+[] { return false; });
  return true;
}();

TEST(V4TestSkipDemo, First) { ADD_FAILURE() << "ran without AVX-512"; }
TEST(V4TestSkipDemo, Second) { ADD_FAILURE() << "ran without AVX-512"; }

class Fixture : public ::testing::Test {
 protected:
  void SetUp() override { ADD_FAILURE() << "SetUp ran without AVX-512"; }
};
TEST_F(Fixture, Third) {}

}  // namespace
