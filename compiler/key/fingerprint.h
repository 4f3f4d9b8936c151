// The compiler fingerprint (CompilerFingerprint in compile.h): a hash of
// everything besides the graph, the target and the options that shapes the
// kernel a compile produces.
//
//   FingerprintInputs in = CurrentFingerprintInputs();
//   std::string hex = FingerprintOf(in);      // == CompilerFingerprint()
//
// The target and the opt_level option reach the cache key themselves; what
// they turn into on the C++ compiler's command line (the -march and AMX flags
// of each host target, the -O flag, the fixed flags) is one of the inputs
// here, so a change to any of those flags changes every key.
#ifndef PTO_COMPILER_KEY_FINGERPRINT_H_
#define PTO_COMPILER_KEY_FINGERPRINT_H_

#include <string>
#include <utility>
#include <vector>

namespace pto::compiler {

// Bump when lowering or code generation changes what a graph compiles to.
inline constexpr char kCompilerBuildId[] = "pto-compiler/0.1 codegen=50";

// The driver that names the system's toolchain (FingerprintInputs::toolchain).
inline constexpr char kToolchainDriver[] = "c++";

struct FingerprintInputs {
  // kCompilerBuildId.
  std::string build_id;
  // The headers generated code includes, (file name, contents), in
  // EmbeddedHostHeaders() order.
  std::vector<std::pair<std::string, std::string>> headers;
  // The host C++ compiler's arguments (HostCompilerArgs), two lines per known
  // host target and accepted -O level, one per link: "<target> -O<n>: <args
  // joined by spaces>" (the lean link) and "<target> -O<n> full link: ...",
  // with the file arguments named kernel.cc and kernel.so.
  std::vector<std::string> flags;
  // The system's toolchain, whose headers and libraries every host kernel
  // builds against: CompilerIdentity(kToolchainDriver), its driver's path and
  // bytes (which carry its version), read, never run.
  std::string toolchain;
  // The C++ compiler host targets run: "<path>: <hex SHA-256 of the
  // executable>" for the file `cxx` names (on PATH, links followed), read,
  // never run (a compiler that hangs or lies cannot stall or fake a key);
  // "unresolved: <cxx>" when there is none.
  std::string compiler;
};

// Lowercase hex SHA-256 over an unambiguous encoding of `inputs` (every
// string length-prefixed, every list counted): any change to any field,
// including adding, removing or reordering a header or a flag line, gives a
// different fingerprint.
std::string FingerprintOf(const FingerprintInputs& inputs);

// The inputs of this build on this machine with `cxx` as the host C++
// compiler (reads the executables of `cxx` and of kToolchainDriver, once when
// they are the same name; runs nothing).
FingerprintInputs CurrentFingerprintInputs(const std::string& cxx = "c++");

// What FingerprintInputs::compiler holds for `cxx`.
std::string CompilerIdentity(const std::string& cxx);

// FingerprintOf(CurrentFingerprintInputs(cxx)), computed once per `cxx` a
// process names (the reference stays valid): CompilerFingerprint in
// compile.h.
const std::string& FingerprintFor(const std::string& cxx);

// FingerprintFor(cxx) for a host target; for an Ascend target a hash of it
// with the Ascend build's inputs (targets/ascend/ascend_fingerprint.h):
// TargetFingerprint in compile.h.
std::string FingerprintForTarget(const std::string& target, const std::string& cxx);

// The -O levels the opt_level option accepts (ParseOptions decides).
std::vector<int> AcceptedOptLevels();

}  // namespace pto::compiler

#endif  // PTO_COMPILER_KEY_FINGERPRINT_H_
