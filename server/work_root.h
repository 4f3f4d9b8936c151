// ptod's private directory for native compiles, and the sweep of those that
// dead ptods left behind.
//
//   absl::StatusOr<std::unique_ptr<WorkRoot>> root = WorkRoot::Create("");
//   if (!root.ok()) ...                  // names the directory
//   settings.work_dir = (*root)->path(); // "/tmp/ptod-work-Ab12Cd"
//   (*root)->stale_removed();            // dead ptods' directories removed
//   // ~WorkRoot removes the directory and everything in it.
//
// Every file a ptod writes while it runs (the compiler-limits wrapper, each
// compile's temp directory) lives in its root, "<base>/ptod-work-XXXXXX",
// so a ptod killed with kill -9 leaves exactly one directory behind, and the
// next ptod to start on the machine removes it.
//
// Ownership is a lock, not a pid: the root holds a file `lock` that its ptod
// keeps flock()ed for its whole life. The kernel drops the lock when the
// process dies, however it dies, so a root whose lock can be taken belongs to
// nobody; this holds across pid namespaces and pid reuse. A root is made under
// a temporary name ("ptod-new-XXXXXX") and renamed to its final name only
// once locked, so a live ptod's root is never seen unlocked. Create()
// removes every "ptod-work-*" directory under the base whose lock it can take
// (or that has no lock file), and "ptod-new-*" ones over a minute old that are
// not locked (a ptod that died inside Create). Nothing else under the base is
// touched: not other ptods' live roots, not the "pto-compile-*" directories
// of processes that compile in-process (the Python client).
#ifndef PTO_SERVER_WORK_ROOT_H_
#define PTO_SERVER_WORK_ROOT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace pto::server {

class WorkRoot {
 public:
  // Sweeps `base` (empty: $TMPDIR, else /tmp) of dead ptods' roots, then
  // makes and locks a new root there (mode 0700). Each removal is logged.
  static absl::StatusOr<std::unique_ptr<WorkRoot>> Create(
      const std::string& base);

  // Removes the root and releases its lock.
  ~WorkRoot();
  WorkRoot(const WorkRoot&) = delete;
  WorkRoot& operator=(const WorkRoot&) = delete;

  const std::string& path() const { return path_; }
  // The dead ptods' directories Create() removed.
  const std::vector<std::string>& stale_removed() const { return removed_; }

 private:
  WorkRoot(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}

  std::string path_;
  int lock_fd_;
  std::vector<std::string> removed_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_WORK_ROOT_H_
