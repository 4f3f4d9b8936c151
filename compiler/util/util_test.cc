#include <sys/stat.h>

#include <filesystem>

#include "compiler/util/strings.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;

TEST(StringsTest, SanitizeIdentifierKeepsOnlySafeCharacters) {
  EXPECT_EQ(SanitizeIdentifier("exp_add"), "exp_add");
  EXPECT_EQ(SanitizeIdentifier("a\"b*/\nc"), "a_b___c");
  EXPECT_EQ(SanitizeIdentifier(""), "kernel");
  EXPECT_EQ(SanitizeIdentifier("9lives"), "_9lives");
  EXPECT_EQ(SanitizeIdentifier(std::string(500, 'x')).size(), 64u);
  EXPECT_EQ(SanitizeIdentifier(std::string("a\0b", 3)), "a_b");
}

TEST(StringsTest, QuoteEscapesAndCaps) {
  EXPECT_EQ(Quote("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(Quote(std::string(100, 'y'), 4), "\"yyyy...\"");
}

TEST(SubprocessTest, CapturesOutputAndExitStatus) {
  SubprocessResult r;
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"},
                            absl::Seconds(10), &r)
                  .ok());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_THAT(r.output, HasSubstr("out"));
  EXPECT_THAT(r.output, HasSubstr("err"));
  EXPECT_FALSE(r.timed_out);
}

TEST(SubprocessTest, ArgumentsAreNotInterpretedByAShell) {
  SubprocessResult r;
  ASSERT_TRUE(RunSubprocess({"echo", "$HOME; rm -rf /"}, absl::Seconds(10), &r).ok());
  EXPECT_EQ(r.output, "$HOME; rm -rf /\n");
}

TEST(SubprocessTest, TimeoutKillsTheWholeProcessGroup) {
  SubprocessResult r;
  // The shell's child (sleep) must die too, or the pipe would stay open.
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c", "sleep 60; echo done"},
                            absl::Milliseconds(300), &r)
                  .ok());
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.exited);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_THAT(DescribeExit(r, absl::Milliseconds(300)), HasSubstr("timed out"));
}

TEST(SubprocessTest, CapsCapturedOutput) {
  SubprocessResult r;
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c", "head -c 100000 /dev/zero"},
                            absl::Seconds(10), &r, "", 1000)
                  .ok());
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_TRUE(r.output_truncated);
  EXPECT_EQ(r.exit_code, 0);
}

TEST(SubprocessTest, MissingProgramIsAnError) {
  SubprocessResult r;
  EXPECT_FALSE(RunSubprocess({"/nonexistent/cxx"}, absl::Seconds(1), &r).ok());
}

TEST(TempDirTest, PrivateAndRemoved) {
  std::string path;
  {
    absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
    ASSERT_TRUE(dir.ok());
    path = dir->path();
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700);
    ASSERT_TRUE(WriteFile(path + "/f", "data").ok());
    std::filesystem::create_directory(path + "/sub");
    ASSERT_TRUE(WriteFile(path + "/sub/g", "more").ok());
    EXPECT_EQ(*ReadFile(path + "/f"), "data");
    TempDir moved = *std::move(dir);
    EXPECT_EQ(moved.path(), path);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace pto::compiler
