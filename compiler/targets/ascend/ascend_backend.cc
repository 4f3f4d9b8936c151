#include "compiler/targets/ascend/ascend_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/targets/ascend/ascend_codegen.h"
#include "compiler/targets/ascend/ascend_sort_codegen.h"
#include "compiler/targets/native_build.h"
#include "runtime/ascend_target.h"

namespace pto::compiler {
namespace {

namespace fs = std::filesystem;

bool HasHeaders(const fs::path& include) {
  std::error_code ec;
  return fs::is_regular_file(include / "pto" / "pto-inst.hpp", ec);
}

}  // namespace

absl::StatusOr<std::string> PtoIsaInclude() {
  if (const char* env = std::getenv("PTO_ISA_ROOT"); env != nullptr && *env != '\0') {
    const fs::path root(env);
    if (HasHeaders(root / "include")) return (root / "include").string();
    if (HasHeaders(root)) return root.string();
    return absl::FailedPreconditionError(absl::StrCat(
        "PTO_ISA_ROOT=", env, " has no include/pto/pto-inst.hpp: set PTO_ISA_ROOT to the "
        "PTO-ISA library's folder (its include/ holds pto/pto-inst.hpp)"));
  }
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  for (; !ec && !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / "WORKSPACE", ec)) {
      const fs::path include = dir / ".." / "shared" / "third_party" / "pto-isa" / "include";
      if (HasHeaders(include)) return fs::weakly_canonical(include, ec).string();
      break;
    }
    if (dir == dir.parent_path()) break;
  }
  return absl::FailedPreconditionError(
      "the Ascend CPU simulation needs the PTO-ISA headers: set PTO_ISA_ROOT to the "
      "PTO-ISA library's folder (its include/ holds pto/pto-inst.hpp); the default, "
      "../shared/third_party/pto-isa beside the repository root, is not there");
}

std::vector<std::string> AscendCpuSimArgs(int opt_level, const std::string& include,
                                          const std::string& source,
                                          const std::string& output) {
  return {"-std=c++20",
          absl::StrCat("-O", opt_level),
          "-D__CPU_SIM",
          "-DPTO_CPU_MAX_THREADS=1",
          "-include",
          "cstdint",
          absl::StrCat("-I", include),
          "-fPIC",
          "-shared",
          "-fvisibility=hidden",
          "-ffp-contract=off",
          "-o",
          output,
          source};
}

absl::StatusOr<std::string> AscendBackend::GenerateSource(const PtoProgram& program) const {
  return GenerateAscendSource(program);
}

std::vector<pto::v1::RegionCheck> AscendBackend::LaunchChecks(const PtoProgram& program) const {
  return AscendSortLaunchChecks(program);
}

absl::StatusOr<std::string> AscendBackend::BuildPayload(
    const std::string& source, const NativeBuildOptions& options) const {
  if (!runtime::IsAscendCpuSimTarget(name_)) {
    return absl::UnimplementedError(absl::StrCat(
        "target ", name_, ": building a device object with CANN's bisheng is not in this "
        "version; compile for ", name_, "-cpusim to build the same source against the "
        "PTO-ISA CPU simulation"));
  }
  absl::StatusOr<std::string> include = PtoIsaInclude();
  if (!include.ok()) return include.status();
  return BuildSharedObject({source, {}, "pto-ascend", "PTO-ISA CPU simulation"}, options,
                           [&](const std::string& src, const std::string& so) {
                             return AscendCpuSimArgs(options.opt_level, *include, src, so);
                           });
}

}  // namespace pto::compiler
