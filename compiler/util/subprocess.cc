#include "compiler/util/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

extern char** environ;

namespace pto::compiler {
namespace {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// posix_spawn attributes and file actions, destroyed on scope exit.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  bool attr_ok = false;
  bool actions_ok = false;
  ~SpawnSetup() {
    if (attr_ok) posix_spawnattr_destroy(&attr);
    if (actions_ok) posix_spawn_file_actions_destroy(&actions);
  }
};

}  // namespace

std::string DescribeExit(const SubprocessResult& r, absl::Duration timeout) {
  if (r.timed_out) {
    return absl::StrCat("timed out after ", absl::FormatDuration(timeout),
                        " (killed)");
  }
  if (r.exited) return absl::StrCat("exit status ", r.exit_code);
  return absl::StrCat("killed by signal ", r.term_signal);
}

absl::Status RunSubprocess(const std::vector<std::string>& argv,
                           absl::Duration timeout, SubprocessResult* result,
                           const std::string& cwd, size_t max_output) {
  *result = SubprocessResult();
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("RunSubprocess: empty command");
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  SpawnSetup setup;
  if (posix_spawnattr_init(&setup.attr) != 0) {
    return absl::InternalError("posix_spawnattr_init failed");
  }
  setup.attr_ok = true;
  if (posix_spawn_file_actions_init(&setup.actions) != 0) {
    return absl::InternalError("posix_spawn_file_actions_init failed");
  }
  setup.actions_ok = true;
  // Own process group, so a timeout can kill the driver and its children.
  posix_spawnattr_setpgroup(&setup.attr, 0);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&setup.attr, &default_signals);
  sigset_t no_mask;
  sigemptyset(&no_mask);
  posix_spawnattr_setsigmask(&setup.attr, &no_mask);
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP |
                                            POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY,
                                   0);
  posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 2);
  if (!cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, cwd.c_str());
  }

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &setup.actions, &setup.attr, args.data(),
                        environ);
  if (rc != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot start \"", argv[0], "\": ", strerror(rc)));
  }
  write_end.Reset();  // so EOF arrives when the child's copies close

  const absl::Time deadline = absl::Now() + timeout;
  bool eof = false;
  char buf[8192];
  while (!eof) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      result->timed_out = true;
      break;
    }
    int wait_ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000));
    pollfd p{read_end.get(), POLLIN, 0};
    int n = poll(&p, 1, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) continue;
    ssize_t got = read(read_end.get(), buf, sizeof(buf));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      break;
    }
    if (got == 0) {
      eof = true;
      break;
    }
    size_t room = max_output - std::min(max_output, result->output.size());
    size_t take = std::min(room, static_cast<size_t>(got));
    result->output.append(buf, take);
    if (take < static_cast<size_t>(got)) result->output_truncated = true;
  }
  if (result->timed_out) {
    kill(-pid, SIGKILL);  // the whole group: driver, cc1plus, as, ld
  }

  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, 0);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
    }
  }
  if (!result->timed_out) {
    // Output closed and the driver exited: sweep up any stragglers it left.
    kill(-pid, SIGKILL);
  }
  if (WIFEXITED(status)) {
    result->exited = true;
    result->exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result->term_signal = WTERMSIG(status);
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
