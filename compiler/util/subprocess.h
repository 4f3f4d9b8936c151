// Runs a program without a shell, capturing its output, under a deadline.
//
//   SubprocessResult r;
//   absl::Status s = RunSubprocess({"c++", "--version"}, absl::Seconds(10), &r);
//   if (s.ok() && r.exited && r.exit_code == 0) Use(r.output);
//
// The child runs in its own process group; on timeout the whole group (the
// compiler driver and whatever it spawned) is killed with SIGKILL and reaped.
#ifndef PTO_COMPILER_UTIL_SUBPROCESS_H_
#define PTO_COMPILER_UTIL_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace pto::compiler {

struct SubprocessResult {
  bool exited = false;     // exited normally (exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;     // the signal that ended it, when !exited
  bool timed_out = false;  // killed because the deadline passed
  // stdout and stderr interleaved, cut to max_output bytes.
  std::string output;
  bool output_truncated = false;
};

// A one-line description such as "exit status 1", "killed by signal 9" or
// "timed out after 1s (killed)".
std::string DescribeExit(const SubprocessResult& result, absl::Duration timeout);

// Runs argv[0] (looked up in PATH when it has no '/') with the arguments
// argv[1..] in working directory `cwd` (unchanged when empty). Returns an
// error only when the child could not be started; a child that fails or times
// out is reported through `result`.
absl::Status RunSubprocess(const std::vector<std::string>& argv,
                           absl::Duration timeout, SubprocessResult* result,
                           const std::string& cwd = "",
                           size_t max_output = 1 << 20);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_SUBPROCESS_H_
