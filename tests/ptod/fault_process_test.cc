// The real ptod binary against native compilers that misbehave: one that
// closes its output and hangs, one that hangs with a child, and ptod itself
// killed with kill -9 or stopped with SIGTERM in the middle of such a
// compile. The compilers are shell scripts the tests write and pass with
// --cxx; what they must show: no request wedges a worker, no compiler
// process outlives ptod, SIGTERM stops ptod within its grace, and a dead
// ptod's files are removed by the next one without touching a live one's.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/testing/process_state.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "gtest/gtest.h"
#include "tests/ptod/ptod_process.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

namespace fs = std::filesystem;

using compiler::testing::Gone;
using compiler::testing::GoneWithin;

// The pids a fake compiler wrote to `path` (the file is renamed into place
// whole), once it is there.
std::vector<pid_t> WaitForPids(const std::string& path, size_t count,
                               absl::Duration timeout) {
  const absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    std::ifstream in(path);
    std::vector<pid_t> pids;
    pid_t pid;
    while (in >> pid) pids.push_back(pid);
    if (pids.size() >= count) return pids;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return {};
}

// A thread joined however the test leaves its scope (an ASSERT included).
class JoiningThread {
 public:
  template <typename F>
  explicit JoiningThread(F f) : thread_(std::move(f)) {}
  ~JoiningThread() { thread_.join(); }

 private:
  std::thread thread_;
};

std::set<std::string> Entries(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

class FaultProcessTest : public ::testing::Test {
 protected:
  void TearDown() override {
    // Whatever a failed test left running.
    for (pid_t pid : pids_to_reap_) {
      if (!Gone(pid)) kill(pid, SIGKILL);
    }
  }

  // Writes an executable /bin/sh script.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }

  // A compiler that records its pid and its child's, then hangs.
  std::string HangingCompiler(const std::string& pid_file) {
    return Script("hang-with-child-c++",
                  absl::StrCat("sleep 1000 &\necho $$ $! > '", pid_file,
                               ".tmp'\nmv '", pid_file, ".tmp' '", pid_file,
                               "'\nwait\n"));
  }

  std::vector<std::string> Flags(const std::string& cache,
                                 const std::string& cxx) {
    return {"--address=127.0.0.1:0", "--metrics_address=127.0.0.1:0",
            "--cache_dir=" + dir_.path() + "/" + cache, "--workers=1",
            "--cxx=" + cxx};
  }
  std::string Log(const std::string& name) {
    return dir_.path() + "/" + name + ".log";
  }

  static pto::client::ClientOptions OneAttempt() {
    pto::client::ClientOptions options;
    options.max_attempts = 1;
    return options;
  }

  TempDir dir_;
  std::vector<pid_t> pids_to_reap_;
};

// A compiler that closes stdout and stderr and then sleeps: the compile is
// DEADLINE_EXCEEDED at --native_compile_timeout, naming the compiler and the
// timeout, and the only worker is free for the next compile.
TEST_F(FaultProcessTest, CompilerThatClosesItsOutputAndHangsTimesOut) {
  const std::string pid_file = dir_.path() + "/silent.pid";
  const std::string cxx = Script(
      "silent-hang-c++",
      absl::StrCat("echo $$ > '", pid_file, "'\nexec >&- 2>&-\nsleep 1000\n"));
  std::vector<std::string> flags = Flags("cache", cxx);
  flags.push_back("--native_compile_timeout=1s");
  PtodProcess ptod(flags, Log("ptod"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod"));
  pto::client::CompileClient client(address, OneAttempt());

  for (int64_t n : {8, 16}) {  // the second needs the (only) worker back
    const absl::Time start = absl::Now();
    auto r = client.Compile(AddGraph({n}, {8}), "host", {},
                            absl::Now() + absl::Seconds(20));
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
    EXPECT_LT(took, absl::Seconds(10)) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), cxx)) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "timed out after 1s"))
        << r.status();
    const std::vector<pid_t> pids = WaitForPids(pid_file, 1, absl::Seconds(1));
    ASSERT_EQ(pids.size(), 1u);
    pids_to_reap_.push_back(pids[0]);
    EXPECT_TRUE(GoneWithin(pids[0], absl::Seconds(5)));
  }
  auto stats = client.Stats(absl::Now() + absl::Seconds(10));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries(), 0u);  // failures are not cached
  auto page = HttpGet(ptod.metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(absl::StrContains(*page, "pto_compile_timeouts_total 2"))
      << *page;
  EXPECT_EQ(ptod.StopWith(SIGTERM, absl::Seconds(20)), 0);
}

// kill -9 of ptod while its compiler hangs: the compiler and its child die
// with it.
TEST_F(FaultProcessTest, KillNineOfPtodLeavesNoCompilerProcess) {
  const std::string pid_file = dir_.path() + "/compiler.pids";
  std::vector<std::string> flags = Flags("cache", HangingCompiler(pid_file));
  flags.push_back("--native_compile_timeout=10m");
  PtodProcess ptod(flags, Log("ptod"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod"));

  JoiningThread caller([&] {
    pto::client::CompileClient client(address, OneAttempt());
    client.Compile(AddGraph(), "host", {}, absl::Now() + absl::Seconds(30))
        .IgnoreError();  // the server dies under it
  });
  const std::vector<pid_t> pids = WaitForPids(pid_file, 2, absl::Seconds(20));
  pids_to_reap_ = pids;
  ASSERT_EQ(pids.size(), 2u) << ReadWholeFile(Log("ptod"));
  ASSERT_FALSE(Gone(pids[0]));
  ASSERT_FALSE(Gone(pids[1]));

  ASSERT_EQ(kill(ptod.pid(), SIGKILL), 0);
  EXPECT_NE(ptod.Wait(absl::Seconds(10)), -1);
  EXPECT_TRUE(GoneWithin(pids[0], absl::Seconds(5)))
      << "the compiler outlived ptod";
  EXPECT_TRUE(GoneWithin(pids[1], absl::Seconds(5)))
      << "the compiler's child outlived ptod";
}

// SIGTERM while the compiler hangs: ptod kills it when --shutdown_grace is
// over and exits 0.
TEST_F(FaultProcessTest, SigtermDuringAHungCompileExitsWithinTheGrace) {
  const std::string pid_file = dir_.path() + "/compiler.pids";
  std::vector<std::string> flags = Flags("cache", HangingCompiler(pid_file));
  flags.push_back("--native_compile_timeout=10m");
  flags.push_back("--shutdown_grace=2s");
  PtodProcess ptod(flags, Log("ptod"));
  const std::string address = ptod.WaitUntilListening();
  ASSERT_FALSE(address.empty()) << ReadWholeFile(Log("ptod"));

  JoiningThread caller([&] {
    pto::client::CompileClient client(address, OneAttempt());
    client.Compile(AddGraph(), "host", {}, absl::Now() + absl::Seconds(30))
        .IgnoreError();  // cancelled by the shutdown
  });
  const std::vector<pid_t> pids = WaitForPids(pid_file, 2, absl::Seconds(20));
  pids_to_reap_ = pids;
  ASSERT_EQ(pids.size(), 2u) << ReadWholeFile(Log("ptod"));

  const absl::Time start = absl::Now();
  const int status = ptod.StopWith(SIGTERM, absl::Seconds(12));
  const absl::Duration took = absl::Now() - start;
  ASSERT_NE(status, -1) << "ptod did not exit within grace + 10 s\n"
                        << ReadWholeFile(Log("ptod"));
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_GE(took, absl::Milliseconds(1500));  // the compile got its grace
  EXPECT_LT(took, absl::Seconds(7));
  EXPECT_TRUE(GoneWithin(pids[0], absl::Seconds(2)));
  EXPECT_TRUE(GoneWithin(pids[1], absl::Seconds(2)));
  const std::string log = ReadWholeFile(Log("ptod"));
  EXPECT_TRUE(absl::StrContains(
      log, "killed 1 running native compiler process group"))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "ptod stopped")) << log;
}

// A ptod killed with kill -9 mid-compile leaves its files under $TMPDIR; the
// next ptod removes them at start (logged and counted) and leaves a second,
// live ptod's alone.
TEST_F(FaultProcessTest, StaleFilesOfADeadPtodAreRemovedAtRestart) {
  const std::string tmp = dir_.path() + "/tmp";
  fs::create_directories(tmp);
  const std::vector<std::string> env = {"TMPDIR=" + tmp};
  const std::string pid_file = dir_.path() + "/compiler.pids";
  // The live ptod's compiler fails at once, saying so.
  const std::string failing =
      Script("failing-c++", "echo 'fake compiler ran'\nexit 1\n");

  auto dead = std::make_unique<PtodProcess>(
      Flags("cache-a", HangingCompiler(pid_file)), Log("dead"), env);
  const std::string dead_address = dead->WaitUntilListening();
  ASSERT_FALSE(dead_address.empty()) << ReadWholeFile(Log("dead"));
  const std::set<std::string> dead_entries_at_start = Entries(tmp);
  ASSERT_FALSE(dead_entries_at_start.empty());

  PtodProcess live(Flags("cache-b", failing), Log("live"), env);
  const std::string live_address = live.WaitUntilListening();
  ASSERT_FALSE(live_address.empty()) << ReadWholeFile(Log("live"));
  std::set<std::string> live_entries;
  for (const std::string& e : Entries(tmp)) {
    if (dead_entries_at_start.count(e) == 0) live_entries.insert(e);
  }
  ASSERT_FALSE(live_entries.empty());

  // A compile in flight (its temp directory written) when ptod dies.
  JoiningThread caller([&] {
    pto::client::CompileClient client(dead_address, OneAttempt());
    client.Compile(AddGraph(), "host", {}, absl::Now() + absl::Seconds(30))
        .IgnoreError();  // the server dies under it
  });
  const std::vector<pid_t> pids = WaitForPids(pid_file, 2, absl::Seconds(20));
  pids_to_reap_ = pids;
  ASSERT_EQ(pids.size(), 2u) << ReadWholeFile(Log("dead"));
  ASSERT_EQ(kill(dead->pid(), SIGKILL), 0);
  EXPECT_NE(dead->Wait(absl::Seconds(10)), -1);
  for (pid_t pid : pids) EXPECT_TRUE(GoneWithin(pid, absl::Seconds(5)));
  // What the dead ptod left: everything under $TMPDIR but the live one's.
  std::set<std::string> left;
  for (const std::string& e : Entries(tmp)) {
    if (live_entries.count(e) == 0) left.insert(e);
  }
  ASSERT_FALSE(left.empty()) << "kill -9 left nothing to clean up";

  // The restart: same cache, same $TMPDIR.
  dead.reset();
  PtodProcess restarted(Flags("cache-a", failing), Log("restarted"), env);
  ASSERT_FALSE(restarted.WaitUntilListening().empty())
      << ReadWholeFile(Log("restarted"));
  const std::set<std::string> now = Entries(tmp);
  for (const std::string& e : left) {
    EXPECT_EQ(now.count(e), 0u) << e << " (left by the dead ptod) survived";
  }
  for (const std::string& e : live_entries) {
    EXPECT_EQ(now.count(e), 1u) << e << " (the live ptod's) was removed";
  }
  const std::string log = ReadWholeFile(Log("restarted"));
  EXPECT_TRUE(absl::StrContains(log, "removed stale ptod work directory"))
      << log;
  auto page = HttpGet(restarted.metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_TRUE(absl::StrContains(
      *page, absl::StrCat("pto_stale_work_dirs_removed_total ", left.size())))
      << *page;

  // The live ptod still has everything it needs to compile: its compiler
  // runs (and fails as it was written to).
  pto::client::CompileClient client(live_address, OneAttempt());
  auto r = client.Compile(AddGraph(), "host", {},
                          absl::Now() + absl::Seconds(30));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "fake compiler ran"))
      << r.status();
  EXPECT_EQ(live.StopWith(SIGTERM, absl::Seconds(20)), 0);
  EXPECT_EQ(restarted.StopWith(SIGTERM, absl::Seconds(20)), 0);
  // A clean stop leaves nothing behind.
  EXPECT_TRUE(Entries(tmp).empty());
}

}  // namespace
}  // namespace pto::testing
