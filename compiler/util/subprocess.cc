#include "compiler/util/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

// ---------------------------------------------------------------------------
// The child side. Everything below up to RunSupervisor runs between fork()
// and _exit()/execve() in a copy of a multi-threaded process, so it makes
// only async-signal-safe calls: no allocation, no locks, no logging.

// What the supervisor and the program tell the parent through the status
// pipe: one 8-byte record per write (atomic: below PIPE_BUF).
enum MessageKind : int32_t {
  kProgramEnded = 1,  // value: the program's wait status
  kExecFailed = 2,    // value: errno of the last execve tried
  kChdirFailed = 3,   // value: errno of chdir(cwd)
  kForkFailed = 4,    // value: errno of the supervisor's fork()
};
struct Message {
  int32_t kind;
  int32_t value;
};

// Where the children find their file descriptors after SetUpDescriptors.
constexpr int kStatusFd = 3;

// The supervisor's "parent died" signal (PR_SET_PDEATHSIG); the only signal
// it does not block.
constexpr int kParentDiedSignal = SIGUSR1;

// Everything the children need, made before fork().
struct ChildPlan {
  pid_t parent = 0;
  int output_fd = -1;  // write end of the output pipe
  int status_fd = -1;  // write end of the status pipe
  int null_fd = -1;    // /dev/null, read-only
  const char* cwd = nullptr;
  std::vector<const char*> candidates;  // full paths to try, in order
  std::vector<char*> args;              // argv, null-terminated
  char** env = nullptr;
};

// fork() without the atfork handlers (jemalloc's arena locks, gRPC's fork
// support): the children need none of what they prepare, since they make only
// async-signal-safe calls, and _Fork is async-signal-safe itself.
pid_t ForkPlain() {
#if defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  return _Fork();
#else
  return fork();
#endif
}

void Tell(MessageKind kind, int value) {
  Message m{kind, value};
  ssize_t n;
  do {
    n = write(kStatusFd, &m, sizeof(m));
  } while (n < 0 && errno == EINTR);
}

// The supervisor's handler for kParentDiedSignal, also called directly: kills
// the supervisor's process group, itself included.
void KillOwnGroup(int /*signal*/) {
  kill(0, SIGKILL);
  _exit(1);  // not reached
}

// Closes every descriptor from `first` up.
void CloseFrom(int first) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  struct rlimit limit;
  int end = 65536;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    end = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 24));
  }
  for (int fd = first; fd < end; ++fd) close(fd);
}

// stdin = /dev/null, stdout = stderr = the output pipe, kStatusFd = the
// status pipe (close-on-exec), nothing else open.
void SetUpDescriptors(const ChildPlan& plan) {
  // Move the sources out of the way first: any of them may be 0..3 when the
  // parent runs with standard descriptors closed.
  const int output = fcntl(plan.output_fd, F_DUPFD, 10);
  const int status = fcntl(plan.status_fd, F_DUPFD, 10);
  const int null = fcntl(plan.null_fd, F_DUPFD, 10);
  if (output < 0 || status < 0 || null < 0) _exit(127);
  dup2(null, 0);
  dup2(output, 1);
  dup2(output, 2);
  dup2(status, kStatusFd);
  fcntl(kStatusFd, F_SETFD, FD_CLOEXEC);
  CloseFrom(kStatusFd + 1);
}

// The program: default signal handling, cwd, exec. Never returns.
[[noreturn]] void RunProgram(const ChildPlan& plan) {
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (plan.cwd != nullptr && chdir(plan.cwd) != 0) {
    Tell(kChdirFailed, errno);
    _exit(127);
  }
  int err = ENOENT;
  for (const char* path : plan.candidates) {
    execve(path, plan.args.data(), plan.env);
    // As execvp: keep looking past a missing or forbidden candidate, and
    // report EACCES over ENOENT.
    if (errno == EACCES) {
      err = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      err = errno;
      break;
    }
  }
  Tell(kExecFailed, err);
  _exit(127);
}

// The supervisor: leads the group, dies with the parent taking the group with
// it, runs the program and reports how it ended. Never returns.
[[noreturn]] void RunSupervisor(const ChildPlan& plan) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  setpgid(0, 0);
  SetUpDescriptors(plan);

  struct sigaction on_parent_death;
  memset(&on_parent_death, 0, sizeof(on_parent_death));
  on_parent_death.sa_handler = KillOwnGroup;
  sigfillset(&on_parent_death.sa_mask);
  sigaction(kParentDiedSignal, &on_parent_death, nullptr);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);  // an ignored SIGCHLD would break waitpid
  prctl(PR_SET_PDEATHSIG, kParentDiedSignal);
  // The parent may have died before the prctl: then nobody would signal.
  if (getppid() != plan.parent) KillOwnGroup(0);
  sigset_t all_but_parent_died = all;
  sigdelset(&all_but_parent_died, kParentDiedSignal);
  sigprocmask(SIG_SETMASK, &all_but_parent_died, nullptr);

  // vfork: the program shares the supervisor's memory until its execve, so
  // the caller's address space (a Python process with torch: hundreds of MiB
  // of mappings) is copied once per run, for the supervisor, not twice.
  // RunProgram touches no memory the supervisor reads afterwards.
  const pid_t program = vfork();
  if (program == 0) RunProgram(plan);
  if (program < 0) {
    Tell(kForkFailed, errno);
    KillOwnGroup(0);
  }
  // The output pipe now belongs to the program alone: its EOF means the
  // program and whatever it spawned closed it.
  dup2(0, 1);
  dup2(0, 2);
  int status = 0;
  while (waitpid(program, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      break;
    }
  }
  Tell(kProgramEnded, status);
  // Stragglers the program left in its group go with the supervisor.
  KillOwnGroup(0);
  _exit(0);  // not reached
}

// ---------------------------------------------------------------------------
// The parent side.

// The paths execvp would try for `name`, in order.
std::vector<std::string> ExecCandidates(const std::string& name) {
  if (name.find('/') != std::string::npos) return {name};
  const char* path_env = getenv("PATH");
  const std::string path =
      path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> out;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    out.push_back(dir.empty() ? name : absl::StrCat(dir, "/", name));
  }
  return out;
}

// Reads what is available on `fd` into `out` (up to `cap` bytes kept; the
// rest is read and dropped). False at EOF or on an error.
bool Drain(int fd, std::string* out, size_t cap, bool* truncated) {
  char buf[8192];
  ssize_t got = read(fd, buf, sizeof(buf));
  if (got < 0) return errno == EINTR || errno == EAGAIN;
  if (got == 0) return false;
  const size_t room = cap - std::min(cap, out->size());
  const size_t take = std::min(room, static_cast<size_t>(got));
  out->append(buf, take);
  if (take < static_cast<size_t>(got) && truncated != nullptr) *truncated = true;
  return true;
}

}  // namespace

// Registers a running group with a canceller (if any) for its lifetime; the
// group is unregistered while its leader is still unreaped, so a Cancel()
// racing with the end never signals a reused process group id.
class SubprocessGroupRegistration {
 public:
  SubprocessGroupRegistration(SubprocessCanceller* canceller, pid_t group)
      : canceller_(canceller), group_(group) {
    if (canceller_ == nullptr) return;
    absl::MutexLock lock(&canceller_->mu_);
    if (canceller_->cancelled_) {
      kill(-group_, SIGKILL);
    } else {
      canceller_->groups_.insert(group_);
    }
  }
  ~SubprocessGroupRegistration() { Unregister(); }
  SubprocessGroupRegistration(const SubprocessGroupRegistration&) = delete;
  SubprocessGroupRegistration& operator=(const SubprocessGroupRegistration&) =
      delete;

  void Unregister() {
    if (canceller_ == nullptr) return;
    absl::MutexLock lock(&canceller_->mu_);
    canceller_->groups_.erase(group_);
    canceller_ = nullptr;
  }

 private:
  SubprocessCanceller* canceller_;
  const pid_t group_;
};

int SubprocessCanceller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  for (pid_t group : groups_) kill(-group, SIGKILL);
  return static_cast<int>(groups_.size());
}

bool SubprocessCanceller::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

std::string DescribeExit(const SubprocessResult& r, absl::Duration timeout) {
  if (r.timed_out) {
    return absl::StrCat("timed out after ", absl::FormatDuration(timeout),
                        " (killed)");
  }
  if (r.cancelled) return "cancelled (killed)";
  if (r.exited) return absl::StrCat("exit status ", r.exit_code);
  return absl::StrCat("killed by signal ", r.term_signal);
}

absl::Status RunSubprocess(const std::vector<std::string>& argv,
                           absl::Duration timeout, SubprocessResult* result,
                           const std::string& cwd, size_t max_output,
                           SubprocessCanceller* canceller) {
  *result = SubprocessResult();
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("RunSubprocess: empty command");
  }
  if (canceller != nullptr && canceller->cancelled()) {
    result->cancelled = true;
    result->term_signal = SIGKILL;
    return absl::OkStatus();
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  }
  Fd output_read(fds[0]);
  Fd output_write(fds[1]);
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", strerror(errno)));
  }
  Fd status_read(fds[0]);
  Fd status_write(fds[1]);
  Fd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null.get() < 0) {
    return absl::InternalError(absl::StrCat("/dev/null: ", strerror(errno)));
  }

  const std::vector<std::string> candidates = ExecCandidates(argv[0]);
  ChildPlan plan;
  plan.parent = getpid();
  plan.output_fd = output_write.get();
  plan.status_fd = status_write.get();
  plan.null_fd = null.get();
  plan.cwd = cwd.empty() ? nullptr : cwd.c_str();
  for (const std::string& c : candidates) plan.candidates.push_back(c.c_str());
  for (const std::string& a : argv) plan.args.push_back(const_cast<char*>(a.c_str()));
  plan.args.push_back(nullptr);
  plan.env = environ;

  const pid_t supervisor = ForkPlain();
  if (supervisor == 0) RunSupervisor(plan);
  if (supervisor < 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start \"", argv[0], "\": fork: ", strerror(errno)));
  }
  // Also here, so that a kill of the group can never miss the supervisor.
  setpgid(supervisor, supervisor);
  const pid_t group = supervisor;
  SubprocessGroupRegistration registration(canceller, group);
  output_write.Reset();  // so EOF comes when the program's copies close
  status_write.Reset();  // ... and when the supervisor's does

  const absl::Time deadline = absl::Now() + timeout;
  std::string status_bytes;
  bool output_open = true;
  bool status_open = true;
  while (output_open || status_open) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      result->timed_out = true;
      break;
    }
    const int wait_ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1000));
    pollfd p[2] = {{output_open ? output_read.get() : -1, POLLIN, 0},
                   {status_open ? status_read.get() : -1, POLLIN, 0}};
    const int n = poll(p, 2, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      result->timed_out = true;  // cannot watch it: treat as out of time
      break;
    }
    if (output_open && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      output_open = Drain(output_read.get(), &result->output, max_output,
                          &result->output_truncated);
    }
    if (status_open && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      status_open = Drain(status_read.get(), &status_bytes, 1024, nullptr);
    }
  }
  // The whole group, whatever happened: on timeout this is the kill; after a
  // normal end the supervisor already did it and this finds only zombies.
  kill(-group, SIGKILL);
  registration.Unregister();
  int supervisor_status = 0;
  for (;;) {
    const pid_t w = waitpid(supervisor, &supervisor_status, 0);
    if (w == supervisor) break;
    if (w < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("waitpid: ", strerror(errno)));
    }
  }
  // Messages still unread when the deadline hit.
  while (status_open) {
    status_open = Drain(status_read.get(), &status_bytes, 1024, nullptr);
  }

  bool ended = false;
  int program_status = 0;
  for (size_t i = 0; i + sizeof(Message) <= status_bytes.size();
       i += sizeof(Message)) {
    Message m;
    memcpy(&m, status_bytes.data() + i, sizeof(m));
    switch (m.kind) {
      case kExecFailed:
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot start \"", argv[0], "\": ", strerror(m.value)));
      case kChdirFailed:
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot start \"", argv[0], "\" in ", cwd, ": ", strerror(m.value)));
      case kForkFailed:
        return absl::ResourceExhaustedError(absl::StrCat(
            "cannot start \"", argv[0], "\": fork: ", strerror(m.value)));
      case kProgramEnded:
        ended = true;
        program_status = m.value;
        break;
      default:
        break;
    }
  }
  if (ended) {
    result->timed_out = false;  // it ended in time; only its pipe was slow
  } else {
    program_status = supervisor_status;  // killed with its group
    if (!result->timed_out && canceller != nullptr && canceller->cancelled()) {
      result->cancelled = true;
    }
  }
  if (WIFEXITED(program_status)) {
    result->exited = true;
    result->exit_code = WEXITSTATUS(program_status);
  } else if (WIFSIGNALED(program_status)) {
    result->term_signal = WTERMSIG(program_status);
  }
  return absl::OkStatus();
}

}  // namespace pto::compiler
