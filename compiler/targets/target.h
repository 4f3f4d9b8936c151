// A code-generation target: turns a PTO program into native code.
//
//   auto target = MakeTarget(*ResolveTargetName("host"));
//   auto source = (*target)->GenerateSource(program);
//   auto payload = (*target)->BuildPayload(*source, build_options);
//
// Host targets are built here; CUDA and Ascend plug in behind this interface
// when their toolchains exist (until then ResolveTargetName says UNIMPLEMENTED).
#ifndef PTO_COMPILER_TARGETS_TARGET_H_
#define PTO_COMPILER_TARGETS_TARGET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "compiler/pto/pto_program.h"
#include "compiler/util/subprocess.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler {

struct NativeBuildOptions {
  int opt_level = 2;
  std::string cxx = "c++";
  std::string cxx_name;  // the compiler in messages; empty: cxx
  absl::Duration timeout = absl::Seconds(120);
  std::string work_dir;  // parent of the temp directory; empty: $TMPDIR
  // Where precompiled preludes are kept (precompiled_prelude.h's PreludeDir:
  // empty: $PTO_PCH_DIR, else the user's cache directory; "off": none).
  std::string pch_dir;
  // The compiler fingerprint cache keys carry (key/fingerprint.h), which
  // keys the precompiled preludes; empty: builds use none.
  std::string compiler_fingerprint;
  SubprocessCanceller* canceller = nullptr;  // may be null
};

class Target {
 public:
  virtual ~Target() = default;

  // The resolved name, e.g. "host-x86_64-v3".
  virtual const std::string& name() const = 0;

  // PTO -> target source text (no user strings reach it).
  virtual absl::StatusOr<std::string> GenerateSource(
      const PtoProgram& program) const = 0;

  // Checks the runtime makes at each launch of a templated kernel, before
  // any task: the symbolic sizes the target's code needs bounded (a row
  // its UB tiles hold). None by default.
  virtual std::vector<pto::v1::RegionCheck> LaunchChecks(const PtoProgram& program) const {
    (void)program;
    return {};
  }

  // Source -> native payload bytes (a shared object for host targets).
  virtual absl::StatusOr<std::string> BuildPayload(
      const std::string& source, const NativeBuildOptions& options) const = 0;
};

// The concrete target a name stands for: ResolveTarget in compile.h says
// what it returns.
absl::StatusOr<std::string> ResolveTargetName(const std::string& target);

// The Target for a name ResolveTargetName returned.
absl::StatusOr<std::unique_ptr<Target>> MakeTarget(const std::string& resolved);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_TARGET_H_
