// The host target: PTO -> C++ (host_codegen.h) -> shared object, built by the
// system C++ compiler (native_build.h):
//
//   <cxx> -std=c++17 -O<n> <HostTargetFlags: -march=..., -mamx-tile ...>
//         -fPIC -shared
//         -fvisibility=hidden -ffp-contract=off -fno-math-errno
//         -o kernel.so kernel.cc -lmvec
//
// with "-include <dir>/prelude.h -Winvalid-pch" in front when a precompiled
// header of the source's #include lines is ready (precompiled_prelude.h, keyed
// by options.compiler_fingerprint, and none when that is empty; the
// shared object is the same with or without it). A build that fails with the
// prelude is built again without it, and a .gch the compiler refused or
// failed on is discarded. Errors are native_build.h's.
#ifndef PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_
#define PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_

#include <string>
#include <vector>

#include "compiler/targets/target.h"

namespace pto::compiler {

class HostBackend : public Target {
 public:
  explicit HostBackend(std::string name) : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  absl::StatusOr<std::string> GenerateSource(
      const PtoProgram& program) const override;
  absl::StatusOr<std::string> BuildPayload(
      const std::string& source,
      const NativeBuildOptions& options) const override;

 private:
  std::string name_;
};

// The arguments after the compiler's own name with which BuildPayload has
// the C++ compiler build `source` into the shared object `output` for host
// target `target` at -O`opt_level` (the command line above); empty when
// `target` is not a known host target. The compiler fingerprint hashes them.
std::vector<std::string> HostCompilerArgs(const std::string& target,
                                          int opt_level,
                                          const std::string& source,
                                          const std::string& output);

// HostCompilerArgs without the file names, -shared and the libraries: the
// flags that shape the code, which a precompiled header is built with.
std::vector<std::string> HostCodeFlags(const std::string& target, int opt_level);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_
