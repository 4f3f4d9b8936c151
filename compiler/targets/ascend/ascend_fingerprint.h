// What besides the compiler fingerprint (key/fingerprint.h) shapes an Ascend
// binary, so that it reaches the cache key (TargetFingerprint in compile.h):
//
//   AscendFingerprintInputs in =
//       CurrentAscendFingerprintInputs("ascend-a2a3-cpusim", AcceptedOptLevels());
//   std::string hex = AscendFingerprintOf(CompilerFingerprint(), in);
//
// - the CPU simulation's compiler arguments (AscendCpuSimArgs) at every
//   accepted -O level, the include folder written as <PTO-ISA>;
// - the PTO-ISA library's version: a SHA-256 over every file under its
//   include folder (relative path and contents, in path order), so a
//   different snapshot, or the toolkit's own copy, gives other keys;
// - for a device target, CANN's toolchain: `bisheng --version`.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_FINGERPRINT_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_FINGERPRINT_H_

#include <string>
#include <vector>

namespace pto::compiler {

struct AscendFingerprintInputs {
  // The resolved target ("ascend-a2a3-cpusim", "ascend-a2a3").
  std::string target;
  // "-O<n>: <AscendCpuSimArgs(n, "<PTO-ISA>", "kernel.cc", "kernel.so")
  // joined by spaces>", one line per accepted -O level.
  std::vector<std::string> flags;
  // PtoIsaVersion(PtoIsaInclude()), or "unavailable: <why>" (the compile
  // then fails naming PTO_ISA_ROOT).
  std::string pto_isa;
  // CannToolchainVersion() for a device target; empty for the CPU
  // simulation (whose C++ compiler the compiler fingerprint covers).
  std::string toolchain;
};

// "sha256:<hex>" over every regular file under `include` (its relative path
// and contents, in path order); computed once per folder per process.
// "unreadable: <why>" when the folder cannot be walked.
std::string PtoIsaVersion(const std::string& include);

// CANN's compiler: `bisheng --version`'s output (bisheng from PATH), or
// "unavailable: <why>".
std::string CannToolchainVersion();

// The inputs of this process for the resolved Ascend `target`, with the
// CPU simulation's arguments at each of `opt_levels` (the -O levels the
// opt_level option accepts: AcceptedOptLevels, key/fingerprint.h).
AscendFingerprintInputs CurrentAscendFingerprintInputs(const std::string& target,
                                                       const std::vector<int>& opt_levels);

// Lowercase hex SHA-256 over `compiler_fingerprint` and every field of
// `inputs` (each length-prefixed): any change gives another value.
std::string AscendFingerprintOf(const std::string& compiler_fingerprint,
                                const AscendFingerprintInputs& inputs);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_FINGERPRINT_H_
