#include "server/work_root.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

constexpr char kRootPrefix[] = "ptod-work-";
constexpr char kNewPrefix[] = "ptod-new-";
constexpr char kLockFile[] = "lock";
// A "ptod-new-*" directory younger than this may be a ptod inside Create().
constexpr absl::Duration kNewRootMinAge = absl::Minutes(1);

std::string BaseDir(const std::string& base) {
  if (!base.empty()) return base;
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp";
}

// Whether `dir` belongs to no live process: its lock file can be locked, or
// (when `missing_lock_is_dead`) it has none. Holds the lock in *fd when it
// took it.
bool Abandoned(const std::string& dir, bool missing_lock_is_dead, int* fd) {
  *fd = open(absl::StrCat(dir, "/", kLockFile).c_str(),
             O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (*fd < 0) return errno == ENOENT && missing_lock_is_dead;
  if (flock(*fd, LOCK_EX | LOCK_NB) == 0) return true;
  close(*fd);
  *fd = -1;
  return false;
}

bool OlderThan(const std::string& dir, absl::Duration age) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return false;
  return absl::Now() - absl::FromTimeT(st.st_mtime) > age;
}

// Removes the dead roots under `base`; returns their paths.
std::vector<std::string> SweepStaleRoots(const std::string& base) {
  std::vector<std::string> removed;
  std::error_code ec;
  std::filesystem::directory_iterator it(base, ec);
  if (ec) {
    spdlog::warn("cannot list {} for stale ptod work directories: {}", base,
                 ec.message());
    return removed;
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    const bool root = absl::StartsWith(name, kRootPrefix);
    const bool half_made = absl::StartsWith(name, kNewPrefix);
    if (!root && !half_made) continue;
    std::error_code type_ec;
    if (!it->is_directory(type_ec) || it->is_symlink(type_ec)) continue;
    const std::string dir = it->path().string();
    if (half_made && !OlderThan(dir, kNewRootMinAge)) continue;
    int fd = -1;
    if (!Abandoned(dir, /*missing_lock_is_dead=*/true, &fd)) continue;
    std::error_code rm_ec;
    std::filesystem::remove_all(dir, rm_ec);
    if (fd >= 0) close(fd);
    if (rm_ec) {
      spdlog::warn("cannot remove stale ptod work directory {}: {}", dir,
                   rm_ec.message());
      continue;
    }
    spdlog::info("removed stale ptod work directory {} (its ptod is gone)",
                 dir);
    removed.push_back(dir);
  }
  return removed;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WorkRoot>> WorkRoot::Create(
    const std::string& base_flag) {
  const std::string base = BaseDir(base_flag);
  std::vector<std::string> removed = SweepStaleRoots(base);

  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string staging = absl::StrCat(base, "/", kNewPrefix, "XXXXXX");
    if (mkdtemp(staging.data()) == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          "cannot create a work directory in ", base, ": ", strerror(errno)));
    }
    const std::string lock = absl::StrCat(staging, "/", kLockFile);
    const int fd =
        open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (fd >= 0) close(fd);
      std::error_code ec;
      std::filesystem::remove_all(staging, ec);
      return absl::UnavailableError(
          absl::StrCat("cannot lock ", lock, ": ", strerror(err)));
    }
    const std::string suffix =
        staging.substr(staging.size() - std::string("XXXXXX").size());
    const std::string path = absl::StrCat(base, "/", kRootPrefix, suffix);
    // rename() replaces an empty directory but never a live root (it holds
    // its lock file, so it is not empty).
    if (rename(staging.c_str(), path.c_str()) != 0) {
      const int err = errno;
      close(fd);
      std::error_code ec;
      std::filesystem::remove_all(staging, ec);
      if (err == ENOTEMPTY || err == EEXIST) continue;
      return absl::UnavailableError(absl::StrCat(
          "cannot rename ", staging, " to ", path, ": ", strerror(err)));
    }
    std::unique_ptr<WorkRoot> root(new WorkRoot(path, fd));
    root->removed_ = std::move(removed);
    return root;
  }
  return absl::UnavailableError(
      absl::StrCat("cannot find a free work directory name in ", base));
}

WorkRoot::~WorkRoot() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec) {
    spdlog::warn("cannot remove work directory {}: {}", path_, ec.message());
  }
  close(lock_fd_);
}

}  // namespace pto::server
