// Whether a process has exited, for tests that check that no process
// outlives what should have killed it.
#ifndef PTO_COMPILER_TESTING_PROCESS_STATE_H_
#define PTO_COMPILER_TESTING_PROCESS_STATE_H_

#include <sys/types.h>

#include "absl/time/time.h"

namespace pto::compiler::testing {

// Whether `pid` has exited (a zombie awaiting its reaper counts).
bool Gone(pid_t pid);

// Whether `pid` is Gone() within `timeout`.
bool GoneWithin(pid_t pid, absl::Duration timeout);

}  // namespace pto::compiler::testing

#endif  // PTO_COMPILER_TESTING_PROCESS_STATE_H_
