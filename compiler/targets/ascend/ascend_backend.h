// The Ascend target: PTO -> PTO-ISA C++ (ascend_codegen.h) -> payload.
//
// ascend-a2a3-cpusim builds the source against the PTO-ISA library's CPU
// simulation with the system C++ compiler, in a subprocess (no shell) inside
// a private temporary directory removed afterwards:
//
//   <cxx> -std=c++20 -O<n> -D__CPU_SIM -DPTO_CPU_MAX_THREADS=1
//         -include cstdint -I<PTO-ISA>/include -fPIC -shared
//         -fvisibility=hidden -ffp-contract=off -o kernel.so kernel.cc
//
// (one thread per task: the executor runs tasks in parallel). The headers
// come from PtoIsaInclude(). The shared object has the host kernel ABI
// (runtime/kernel_abi.h), so the runtime loads and runs it unchanged.
//
// ascend-a2a3 (a device object built by CANN's bisheng) is not built by
// this version: BuildPayload says UNIMPLEMENTED.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_BACKEND_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/targets/target.h"

namespace pto::compiler {

class AscendBackend : public Target {
 public:
  explicit AscendBackend(std::string name) : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  absl::StatusOr<std::string> GenerateSource(const PtoProgram& program) const override;
  // A sort's run-time row length against the rows its UB tiles hold
  // (ascend_sort_codegen.h).
  std::vector<pto::v1::RegionCheck> LaunchChecks(const PtoProgram& program) const override;
  absl::StatusOr<std::string> BuildPayload(const std::string& source,
                                           const NativeBuildOptions& options) const override;

 private:
  std::string name_;
};

// The PTO-ISA include folder (the one holding pto/pto-inst.hpp): from
// $PTO_ISA_ROOT (the library's root, or its include folder), else the
// repository's default ../shared/third_party/pto-isa, looked for beside
// the repository root (the nearest folder above the working directory with
// a WORKSPACE file). FAILED_PRECONDITION naming PTO_ISA_ROOT when neither
// has the headers.
absl::StatusOr<std::string> PtoIsaInclude();

// The arguments after the compiler's name that build `source` into the
// shared object `output` against the CPU simulation headers in `include`.
std::vector<std::string> AscendCpuSimArgs(int opt_level, const std::string& include,
                                          const std::string& source,
                                          const std::string& output);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_BACKEND_H_
