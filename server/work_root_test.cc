#include "server/work_root.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace pto::server {
namespace {

namespace fs = std::filesystem;

// A fresh base directory under $TEST_TMPDIR.
std::string FreshBase(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string base =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/work_root_test_" + name;
  fs::remove_all(base);
  fs::create_directories(base);
  return base;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(WorkRootTest, PrivateAndRemovedAtDestruction) {
  const std::string base = FreshBase("private");
  std::string path;
  {
    auto root = WorkRoot::Create(base);
    ASSERT_TRUE(root.ok()) << root.status();
    path = (*root)->path();
    EXPECT_EQ(fs::path(path).parent_path(), fs::path(base));
    EXPECT_EQ(fs::path(path).filename().string().rfind("ptod-work-", 0), 0u);
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700);
    EXPECT_TRUE((*root)->stale_removed().empty());
    std::ofstream(path + "/file") << "x";
  }
  EXPECT_FALSE(fs::exists(path));
}

// A process that dies without cleaning up (here: _exit, which skips every
// destructor, as kill -9 would) leaves its root; the next Create() removes
// it. A live root, another process's in-process compile directory and other
// files are left alone.
TEST(WorkRootTest, RemovesDeadRootsOnlyAndNeverALiveOne) {
  const std::string base = FreshBase("sweep");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto root = WorkRoot::Create(base);
    std::string path = root.ok() ? (*root)->path() : "";
    std::ofstream(path + "/left-behind") << "x";
    (void)!write(fds[1], path.data(), path.size());
    _exit(0);
  }
  close(fds[1]);
  char buf[4096];
  const ssize_t n = read(fds[0], buf, sizeof(buf));
  close(fds[0]);
  waitpid(child, nullptr, 0);
  ASSERT_GT(n, 0);
  const std::string dead(buf, static_cast<size_t>(n));
  ASSERT_TRUE(fs::exists(dead + "/left-behind"));

  // A dead root without a lock file, an old half-made one, a young one.
  fs::create_directories(base + "/ptod-work-nolock");
  fs::create_directories(base + "/ptod-new-oldone");
  struct utimbuf old_time{time(nullptr) - 3600, time(nullptr) - 3600};
  ASSERT_EQ(utime((base + "/ptod-new-oldone").c_str(), &old_time), 0);
  fs::create_directories(base + "/ptod-new-young");
  // Not ptod's: left alone.
  fs::create_directories(base + "/pto-compile-abc123");
  fs::create_directories(base + "/ptod-abc123");
  std::ofstream(base + "/ptod-work-file") << "not a directory";

  auto live = WorkRoot::Create(base);
  ASSERT_TRUE(live.ok()) << live.status();
  const std::vector<std::string>& first = (*live)->stale_removed();
  EXPECT_TRUE(Contains(first, dead));
  EXPECT_TRUE(Contains(first, base + "/ptod-work-nolock"));
  EXPECT_TRUE(Contains(first, base + "/ptod-new-oldone"));
  EXPECT_EQ(first.size(), 3u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(base + "/ptod-new-young"));
  EXPECT_TRUE(fs::exists(base + "/pto-compile-abc123"));
  EXPECT_TRUE(fs::exists(base + "/ptod-abc123"));
  EXPECT_TRUE(fs::exists(base + "/ptod-work-file"));

  // A second root beside a live one: the live one is untouched.
  std::ofstream((*live)->path() + "/in-use") << "x";
  auto second = WorkRoot::Create(base);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->stale_removed().empty());
  EXPECT_TRUE(fs::exists((*live)->path() + "/in-use"));
  EXPECT_NE((*second)->path(), (*live)->path());
}

TEST(WorkRootTest, UnusableBaseIsAnError) {
  auto root = WorkRoot::Create("/nonexistent/base");
  EXPECT_FALSE(root.ok());
}

}  // namespace
}  // namespace pto::server
