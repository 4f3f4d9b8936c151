// CPU-time and memory limits on the native compiler ptod runs.
//
//   absl::StatusOr<std::string> cxx =
//       WriteLimitedCompiler(dir, "c++", absl::Minutes(10), 4ull << 30);
//   settings.cxx = *cxx;  // what pto::compiler runs instead of "c++"
//
// The compiler runs as a subprocess of pto::compiler (compiler/util/
// subprocess.h: own process group, killed as a group at the wall-clock
// timeout). The limits are set by a two-line /bin/sh wrapper that applies
// `ulimit -t` (CPU seconds; past it the kernel sends SIGXCPU, then SIGKILL)
// and `ulimit -v` (address space; allocation fails beyond it) and then execs
// the real compiler, so they bind the driver and everything it spawns
// (cc1plus, as, ld) without any change to how the compiler is started.
#ifndef PTO_SERVER_COMPILER_LIMITS_H_
#define PTO_SERVER_COMPILER_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pto::server {

// Writes the wrapper as `dir`/cxx-limited (mode 0755) around `cxx` (a name
// looked up in PATH, or a path) and returns its path. A zero `cpu` or
// `memory_bytes` leaves that limit off. Fails naming the file if it cannot be
// written.
absl::StatusOr<std::string> WriteLimitedCompiler(const std::string& dir,
                                                 const std::string& cxx,
                                                 absl::Duration cpu,
                                                 uint64_t memory_bytes);

}  // namespace pto::server

#endif  // PTO_SERVER_COMPILER_LIMITS_H_
