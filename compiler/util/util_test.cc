#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "compiler/testing/process_state.h"
#include "compiler/util/strings.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
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
  EXPECT_FALSE(RunSubprocess({"no-such-program-pto"}, absl::Seconds(1), &r).ok());
}

TEST(SubprocessTest, MissingWorkingDirectoryIsAnError) {
  SubprocessResult r;
  absl::Status s =
      RunSubprocess({"true"}, absl::Seconds(5), &r, "/nonexistent/dir");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent/dir"));
}

TEST(SubprocessTest, RunsInTheGivenDirectoryWithPlainDescriptors) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
  ASSERT_TRUE(dir.ok());
  SubprocessResult r;
  // Only stdin, stdout and stderr are open in the program ("ls" of its own
  // fd directory lists 0 1 2 and the one it reads the directory through).
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c", "pwd; exec ls /proc/self/fd"},
                            absl::Seconds(10), &r, dir->path())
                  .ok());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(dir->path()));
  std::istringstream lines(r.output);
  std::string line;
  std::getline(lines, line);  // pwd
  int fds = 0;
  while (std::getline(lines, line)) ++fds;
  EXPECT_EQ(fds, 4) << r.output;
}

using testing::Gone;
using testing::GoneWithin;

// The pid written to `path` by a child, once it is there.
pid_t WaitForPid(const std::string& path, absl::Duration timeout) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return 0;
}

// A program that closes its output and then hangs is killed at the deadline:
// the deadline bounds the process, not only its pipe.
TEST(SubprocessTest, ClosedOutputThenHangIsKilledAtTheDeadline) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
  ASSERT_TRUE(dir.ok());
  const std::string pid_file = dir->path() + "/pid";
  SubprocessResult r;
  absl::Status s;
  absl::Notification done;
  std::thread runner([&] {
    s = RunSubprocess({"/bin/sh", "-c",
                       "echo $$ > " + pid_file + ".tmp; mv " + pid_file +
                           ".tmp " + pid_file + "; exec >&- 2>&-; exec sleep 600"},
                      absl::Seconds(2), &r);
    done.Notify();
  });
  // Generous bounds: on a loaded machine the shell may start late.
  const bool returned = done.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!returned) {
    // Unstick it so the test can report instead of hanging.
    kill(WaitForPid(pid_file, absl::Seconds(1)), SIGKILL);
  }
  runner.join();
  ASSERT_TRUE(returned) << "RunSubprocess did not return 28 s after its deadline";
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  // Killed before it wrote its pid (a very slow start) leaves nothing to see.
  const pid_t pid = WaitForPid(pid_file, absl::Seconds(1));
  if (pid > 0) EXPECT_TRUE(Gone(pid));
}

// The whole group dies with the process that ran it, even on kill -9.
TEST(SubprocessTest, GroupDiesWithTheCallingProcess) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
  ASSERT_TRUE(dir.ok());
  const std::string pids = dir->path() + "/pids";
  const pid_t caller = fork();
  ASSERT_GE(caller, 0);
  if (caller == 0) {
    SubprocessResult r;
    RunSubprocess({"/bin/sh", "-c",
                   "sleep 600 & echo $$ $! > " + pids + ".tmp; mv " + pids +
                       ".tmp " + pids + "; wait"},
                  absl::Seconds(600), &r)
        .IgnoreError();
    _exit(0);
  }
  pid_t shell = 0;
  pid_t sleeper = 0;
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (absl::Now() < end && sleeper == 0) {
    std::ifstream in(pids);
    in >> shell >> sleeper;
    if (sleeper == 0) absl::SleepFor(absl::Milliseconds(20));
  }
  kill(caller, SIGKILL);
  waitpid(caller, nullptr, 0);
  ASSERT_GT(sleeper, 0) << "the program never started";
  const bool shell_gone = GoneWithin(shell, absl::Seconds(5));
  const bool sleeper_gone = GoneWithin(sleeper, absl::Seconds(5));
  if (!shell_gone) kill(shell, SIGKILL);
  if (!sleeper_gone) kill(sleeper, SIGKILL);
  EXPECT_TRUE(shell_gone) << "the program outlived its caller";
  EXPECT_TRUE(sleeper_gone) << "the program's child outlived its caller";
}

TEST(SubprocessTest, CancelKillsRunningGroupsAndRefusesLaterOnes) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
  ASSERT_TRUE(dir.ok());
  const std::string pids = dir->path() + "/pids";
  SubprocessCanceller canceller;
  SubprocessResult r;
  absl::Status s;
  const absl::Time start = absl::Now();
  std::thread runner([&] {
    s = RunSubprocess({"/bin/sh", "-c",
                       "sleep 600 & echo $! > " + pids + ".tmp; mv " + pids +
                           ".tmp " + pids + "; wait"},
                      absl::Seconds(60), &r, "", 1 << 20, &canceller);
  });
  const pid_t sleeper = WaitForPid(pids, absl::Seconds(10));
  EXPECT_EQ(canceller.Cancel(), sleeper > 0 ? 1 : 0);
  runner.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_THAT(DescribeExit(r, absl::Seconds(60)), HasSubstr("cancelled"));
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(GoneWithin(sleeper, absl::Seconds(5)));

  SubprocessResult later;
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c", "echo ran"}, absl::Seconds(10),
                            &later, "", 1 << 20, &canceller)
                  .ok());
  EXPECT_TRUE(later.cancelled);
  EXPECT_EQ(later.output, "");
}

// A program that exits leaving a child in its group behind: the child is
// killed, and the caller does not wait for it.
TEST(SubprocessTest, StragglersAreKilledWhenTheProgramExits) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-util-test");
  ASSERT_TRUE(dir.ok());
  const std::string pid_file = dir->path() + "/pid";
  SubprocessResult r;
  ASSERT_TRUE(RunSubprocess({"/bin/sh", "-c",
                             "sleep 600 >/dev/null 2>&1 & echo $! > " +
                                 pid_file + "; exit 3"},
                            absl::Seconds(20), &r)
                  .ok());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 3);
  const pid_t straggler = WaitForPid(pid_file, absl::Seconds(1));
  ASSERT_GT(straggler, 0);
  EXPECT_TRUE(GoneWithin(straggler, absl::Seconds(5)));
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
