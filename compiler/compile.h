// The compiler's entry point: a Tensor graph in, a kernel binary out.
//
//   pto::v1::Graph graph = ...;               // from pypto, ptoc or the network
//   auto result = pto::compiler::Compile(graph, "host", {});
//   if (!result.ok()) ...                      // INVALID_ARGUMENT names op/field
//   SendOrRun(result->binary);
//
// Compile() is thread-safe and keeps no state between calls; caching is the
// caller's job (ptod, pypto), keyed by CacheKey(). The option types are in
// options.h; each function here is defined in compile.cc, over the floors
// below it (docs/contributing.md).
#ifndef PTO_COMPILER_COMPILE_H_
#define PTO_COMPILER_COMPILE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/options.h"
#include "compiler/stage_time.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

struct CompileResult {
  std::string key;                // == CacheKey(graph, target, options)
  pto::v1::KernelBinary binary;   // magic, version, key, target, payload, ...
  std::vector<StageTime> stages;
  // When CompileSettings::keep_dumps: "tensor", "tile", "block", "execute",
  // "pto", "cpp" -> printed text.
  std::map<std::string, std::string> dumps;
};

// Resolves a target name to the concrete name a binary records: "host" is
// this machine's most capable target (runtime::NativeHostTarget:
// "host-x86_64-v4-amx" where the CPU has AVX-512 and AMX-BF16 and the OS saves
// the zmm state and grants the AMX tile state, "host-x86_64-v4" with AVX-512
// alone, "host-x86_64-v3-amx" / "host-x86_64-v3" without AVX-512, else
// "host-x86_64"), or the concrete host target the
// environment variable PTO_HOST_TARGET names (INVALID_ARGUMENT when it names
// none, FAILED_PRECONDITION when this machine cannot run it); concrete host
// names are returned as given. Unknown or unbuildable targets are
// INVALID_ARGUMENT / UNIMPLEMENTED with the reason.
absl::StatusOr<std::string> ResolveTarget(const std::string& target);

// The cache key: lowercase hex SHA-256 over the canonical graph (value ids
// renumbered in topological order, names stripped), the resolved target, the
// sorted options, the compiler fingerprint and the key-schema version.
// Verifies the graph first (a key is never computed for an invalid graph).
// The fingerprint is that of the compiler Compile() would run with
// `settings` (cxx_name when set, else cxx).
absl::StatusOr<std::string> CacheKey(const pto::v1::Graph& graph,
                                     const std::string& target,
                                     const CompileOptions& options,
                                     const CompileSettings& settings = {});

// A hash of the compiler build, the headers generated code includes, the
// host C++ compiler's arguments for every host target and -O level, the
// system toolchain's version string and the executable of `cxx`, the C++
// compiler host targets run (hex; key/fingerprint.h). Stable within one
// build on one machine.
const std::string& CompilerFingerprint(const std::string& cxx = "c++");

// The fingerprint a binary for the resolved `target` is keyed by and
// records: CompilerFingerprint(cxx) for host targets; for Ascend targets a
// hash of it with the Ascend build's own inputs (the CPU simulation's
// compiler arguments, the PTO-ISA headers' version, for a device target
// CANN's bisheng version: targets/ascend/ascend_fingerprint.h).
std::string TargetFingerprint(const std::string& target, const std::string& cxx = "c++");

// Verifies, lowers and code-generates `graph` for `target`.
absl::StatusOr<CompileResult> Compile(const pto::v1::Graph& graph,
                                      const std::string& target,
                                      const CompileOptions& options,
                                      const CompileSettings& settings = {});

}  // namespace pto::compiler

#endif  // PTO_COMPILER_COMPILE_H_
