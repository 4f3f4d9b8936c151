// Runs a program without a shell, capturing its output, under a deadline.
//
//   SubprocessResult r;
//   absl::Status s = RunSubprocess({"c++", "--version"}, absl::Seconds(10), &r);
//   if (s.ok() && r.exited && r.exit_code == 0) Use(r.output);
//
// What the caller can rely on:
//
// - The deadline bounds the process, not just its output: a child that
//   closes stdout and stderr and then hangs is killed at the deadline like
//   one that keeps writing.
// - The child runs in its own process group, and when RunSubprocess returns
//   nothing of that group is left: on timeout or cancellation the whole
//   group (the compiler driver and whatever it spawned: cc1plus, as, ld) is
//   killed with SIGKILL, and after a normal exit any stragglers the program
//   left behind in its group are killed too.
// - The group dies with the calling process, even on kill -9. The program is
//   started (vfork, execve) by a small supervisor process (forked, never
//   exec'd) that leads the group, asks the kernel for a signal when its
//   parent dies (PR_SET_PDEATHSIG) and on that signal kills the group,
//   itself included.
//   The kernel sends that signal when the *thread* that forked the
//   supervisor exits; RunSubprocess blocks that thread until the group is
//   gone, so a thread that returns from it has nothing left to guard.
// - A SubprocessCanceller kills, on demand, every group started with it (a
//   daemon's shutdown uses one when its grace period ends).
//
// The program gets /dev/null as stdin, the pipe ptod reads as stdout and
// stderr, no other open file descriptors, default signal dispositions
// (SIGPIPE included) and an empty signal mask. Processes that leave the group
// on purpose (setsid, setpgid) escape all of this; compilers do not.
#ifndef PTO_COMPILER_UTIL_SUBPROCESS_H_
#define PTO_COMPILER_UTIL_SUBPROCESS_H_

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pto::compiler {

struct SubprocessResult {
  bool exited = false;     // exited normally (exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;     // the signal that ended it, when !exited
  bool timed_out = false;  // killed because the deadline passed
  bool cancelled = false;  // killed by SubprocessCanceller::Cancel()
  // stdout and stderr interleaved, cut to max_output bytes.
  std::string output;
  bool output_truncated = false;
};

// A one-line description such as "exit status 1", "killed by signal 9",
// "timed out after 1s (killed)" or "cancelled (killed)".
std::string DescribeExit(const SubprocessResult& result, absl::Duration timeout);

// Kills the process groups of the subprocesses started with it.
//
//   SubprocessCanceller canceller;            // outlives the RunSubprocess calls
//   RunSubprocess(argv, timeout, &r, dir, 1 << 20, &canceller);  // on a worker
//   canceller.Cancel();                       // elsewhere: r.cancelled
//
// Thread-safe.
class SubprocessCanceller {
 public:
  SubprocessCanceller() = default;
  SubprocessCanceller(const SubprocessCanceller&) = delete;
  SubprocessCanceller& operator=(const SubprocessCanceller&) = delete;

  // Kills (SIGKILL) the group of every subprocess running with this
  // canceller, and every one started with it later at once. Irreversible.
  // Returns how many running groups it killed.
  int Cancel();
  bool cancelled() const;

 private:
  friend class SubprocessGroupRegistration;

  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::set<pid_t> groups_ ABSL_GUARDED_BY(mu_);
};

// Runs argv[0] (looked up in PATH when it has no '/') with the arguments
// argv[1..] in working directory `cwd` (unchanged when empty). Returns an
// error only when the child could not be started (no such program, not
// executable, no such `cwd`, fork failed); a child that fails, times out or
// is cancelled is reported through `result`. `canceller` may be null.
absl::Status RunSubprocess(const std::vector<std::string>& argv,
                           absl::Duration timeout, SubprocessResult* result,
                           const std::string& cwd = "",
                           size_t max_output = 1 << 20,
                           SubprocessCanceller* canceller = nullptr);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_SUBPROCESS_H_
