#include "server/compiler_limits.h"

#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pto::server {
namespace {

class CompilerLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = getenv("TEST_TMPDIR");
    std::string pattern =
        std::string(base != nullptr ? base : "/tmp") + "/limits_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes an executable script `name` with `body`; returns its path.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  // Runs `command`; its stdout and wait status.
  std::string Run(const std::string& command, int* status) {
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
    *status = pclose(pipe);
    return out;
  }

  std::string dir_;
};

TEST_F(CompilerLimitsTest, LimitsBindTheCompilerAndArgumentsPassThrough) {
  // A "compiler" that reports its limits and arguments.
  const std::string fake = Script(
      "fake c++", "echo \"$(ulimit -t) $(ulimit -v) $#:$1:$2\"\n");
  auto wrapper = WriteLimitedCompiler(dir_, fake, absl::Seconds(42),
                                      uint64_t{3} << 30);
  ASSERT_TRUE(wrapper.ok()) << wrapper.status();
  int status = 0;
  const std::string out =
      Run("'" + *wrapper + "' -O2 'two words'", &status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out, "42 3145728 2:-O2:two words\n");
}

TEST_F(CompilerLimitsTest, ZeroMeansUnlimited) {
  const std::string fake =
      Script("fake", "echo \"$(ulimit -t) $(ulimit -v)\"\n");
  auto wrapper = WriteLimitedCompiler(dir_, fake, absl::ZeroDuration(), 0);
  ASSERT_TRUE(wrapper.ok()) << wrapper.status();
  int status = 0;
  EXPECT_EQ(Run("'" + *wrapper + "'", &status), "unlimited unlimited\n");
}

TEST_F(CompilerLimitsTest, CompilerSpinningPastItsCpuTimeIsKilled) {
  const std::string spin = Script("spin", "while :; do :; done\n");
  auto wrapper = WriteLimitedCompiler(dir_, spin, absl::Seconds(1), 0);
  ASSERT_TRUE(wrapper.ok()) << wrapper.status();
  int status = 0;
  // The shell reports the killed child as 128 + signal; popen's own status
  // is the shell's.
  const std::string out = Run("'" + *wrapper + "'; echo $?", &status);
  const int code = std::stoi(out);
  EXPECT_TRUE(code == 128 + SIGXCPU || code == 128 + SIGKILL) << out;
}

TEST_F(CompilerLimitsTest, UnwritableDirectoryFailsNamingTheFile) {
  auto wrapper = WriteLimitedCompiler(dir_ + "/missing/dir", "c++",
                                      absl::Seconds(1), 0);
  ASSERT_FALSE(wrapper.ok());
  EXPECT_NE(wrapper.status().message().find("missing/dir/cxx-limited"),
            std::string::npos);
}

}  // namespace
}  // namespace pto::server
