#include "tests/ptod/ptod_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace pto::testing {

std::string PtodPath() {
  const char* srcdir = getenv("TEST_SRCDIR");
  const char* workspace = getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir != nullptr ? srcdir : ".", "/",
                      workspace != nullptr ? workspace : "pto",
                      "/server/ptod");
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PtodProcess::PtodProcess(const std::vector<std::string>& flags,
                         const std::string& stderr_path,
                         const std::vector<std::string>& env,
                         const std::vector<std::string>& launcher) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) abort();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                   stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = launcher;
  args.push_back(PtodPath());
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // `env` entries replace inherited ones of the same name (getenv would see
  // only the first).
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('=') + 1);
    bool overridden = false;
    for (const std::string& x : env) overridden |= absl::StartsWith(x, name);
    if (!overridden) environment.push_back(entry);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  spawned_ = posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(),
                         envp.data()) == 0;
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  stdout_fd_ = out[0];
}

PtodProcess::~PtodProcess() {
  if (spawned_ && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  close(stdout_fd_);
}

std::string PtodProcess::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return "";
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(ms)) <= 0) return "";
    char chunk[256];
    ssize_t n = read(stdout_fd_, chunk, sizeof(chunk));
    if (n <= 0) return "";
    buffer_.append(chunk, n);
  }
}

std::string PtodProcess::WaitUntilListening() {
  const std::string prefix = "ptod listening on ";
  for (std::string line = ReadLine(absl::Seconds(60)); !line.empty();
       line = ReadLine(absl::Seconds(60))) {
    if (absl::StartsWith(line, prefix)) return line.substr(prefix.size());
    if (absl::StartsWith(line, "ptod metrics on port ")) {
      metrics_port_ = std::stoi(line.substr(21));
    }
  }
  return "";
}

int PtodProcess::metrics_port() {
  if (metrics_port_ == 0) {
    std::string line = ReadLine(absl::Seconds(10));
    if (absl::StartsWith(line, "ptod metrics on port ")) {
      metrics_port_ = std::stoi(line.substr(21));
    }
  }
  return metrics_port_;
}

int PtodProcess::StopWith(int signal, absl::Duration timeout) {
  kill(pid_, signal);
  return Wait(timeout);
}

int PtodProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return status;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return -1;
}

}  // namespace pto::testing
