// The real ptod binary as a child process, for tests that need the daemon
// itself (signals, kill -9, files on disk, flags):
//
//   PtodProcess ptod({"--address=127.0.0.1:0", "--cache_dir=" + dir},
//                    log_path);
//   std::string address = ptod.WaitUntilListening();   // "" on failure
//   ...
//   EXPECT_EQ(ptod.StopWith(SIGTERM, absl::Seconds(10)), 0);
//
// A process the test did not stop is killed (SIGKILL) and reaped by the
// destructor.
#ifndef PTO_TESTS_PTOD_PTOD_PROCESS_H_
#define PTO_TESTS_PTOD_PTOD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace pto::testing {

// The ptod binary in the test's runfiles (a `data` dependency on
// //server:ptod).
std::string PtodPath();

// The whole contents of `path` ("" when unreadable).
std::string ReadWholeFile(const std::string& path);

class PtodProcess {
 public:
  // Starts PtodPath() with `flags`; stderr goes to `stderr_path`, stdout is
  // read by ReadLine. `env` entries ("NAME=value") are added to the
  // environment, replacing inherited ones of the same name.
  // With a `launcher` (a command such as {"unshare", "-rm", "sh", "-c",
  // "... exec \"$0\" \"$@\""}), the launcher runs with ptod's path and flags
  // as its last arguments and must exec ptod in its own process.
  PtodProcess(const std::vector<std::string>& flags,
              const std::string& stderr_path,
              const std::vector<std::string>& env = {},
              const std::vector<std::string>& launcher = {});
  ~PtodProcess();

  PtodProcess(const PtodProcess&) = delete;
  PtodProcess& operator=(const PtodProcess&) = delete;

  bool spawned() const { return spawned_; }
  pid_t pid() const { return pid_; }

  // The next stdout line, or "" at EOF or after `timeout`.
  std::string ReadLine(absl::Duration timeout);

  // Reads stdout until "ptod listening on ADDRESS"; returns ADDRESS ("" if
  // ptod exited or said nothing within a minute).
  std::string WaitUntilListening();

  // Metrics port, once WaitUntilListening() has returned.
  int metrics_port();

  // Sends `signal` and waits (up to `timeout`) for the exit. Returns the
  // wait status, or -1 if it did not exit in time.
  int StopWith(int signal, absl::Duration timeout);

  // Waits up to `timeout` for the exit: the wait status, or -1.
  int Wait(absl::Duration timeout);

 private:
  pid_t pid_ = -1;
  bool spawned_ = false;
  bool reaped_ = false;
  int stdout_fd_ = -1;
  std::string buffer_;
  int metrics_port_ = 0;
};

}  // namespace pto::testing

#endif  // PTO_TESTS_PTOD_PTOD_PROCESS_H_
