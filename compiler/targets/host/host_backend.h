// The host target: PTO -> C++ (host_codegen.h) -> shared object, built by the
// system C++ compiler (native_build.h):
//
//   <cxx> -std=c++17 -O<n> <HostTargetFlags: -march=..., -mamx-tile ...>
//         -fPIC -shared
//         -fvisibility=hidden -ffp-contract=off -fno-math-errno -nodefaultlibs
//         -o kernel.so kernel.cc -lmvec -lm -lgcc -lc -lgcc -Wl,--no-undefined
//
// with "-include <dir>/prelude.h -Winvalid-pch" in front when a precompiled
// header of the source's #include lines is ready (precompiled_prelude.h, keyed
// by options.compiler_fingerprint, and none when that is empty; the
// shared object is the same with or without it). A build that fails with the
// prelude is built again without it, and a .gch the compiler refused or
// failed on is discarded. Errors are native_build.h's.
//
// The link names only the C libraries a kernel uses (HostLink::kLean: the
// linker skips reading libstdc++'s and libgcc_s's symbol tables) and fails on
// any symbol they lack. A build that fails so (a kernel calling into
// libstdc++), or fails at all (the linker's message may be translated), is
// built again with the C++ driver's default libraries (HostLink::kFull:
// without -nodefaultlibs and the libraries after -lmvec), whose result is
// BuildPayload's.
#ifndef PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_
#define PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_

#include <string>
#include <vector>

#include "compiler/targets/target.h"

namespace pto::compiler {

// The libraries a host kernel links (above).
enum class HostLink { kLean, kFull };

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
  // BuildPayload with one link.
  absl::StatusOr<std::string> Build(const std::string& source,
                                    const NativeBuildOptions& options,
                                    HostLink link) const;

  std::string name_;
};

// The arguments after the compiler's own name with which BuildPayload has
// the C++ compiler build `source` into the shared object `output` for host
// target `target` at -O`opt_level` (the command line above); empty when
// `target` is not a known host target. The compiler fingerprint hashes them,
// with either link.
std::vector<std::string> HostCompilerArgs(const std::string& target,
                                          int opt_level,
                                          const std::string& source,
                                          const std::string& output,
                                          HostLink link = HostLink::kLean);

// HostCompilerArgs without the file names, -shared and the link's libraries
// and options: the flags that shape the code, which a precompiled header is
// built with (the same for either link).
std::vector<std::string> HostCodeFlags(const std::string& target, int opt_level);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_HOST_BACKEND_H_
