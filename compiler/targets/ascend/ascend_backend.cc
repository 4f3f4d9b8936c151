#include "compiler/targets/ascend/ascend_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/targets/ascend/ascend_codegen.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "runtime/ascend_target.h"

namespace pto::compiler {
namespace {

namespace fs = std::filesystem;

bool HasHeaders(const fs::path& include) {
  std::error_code ec;
  return fs::is_regular_file(include / "pto" / "pto-inst.hpp", ec);
}

std::string Cut(const std::string& text) {
  if (text.size() <= kMaxCompilerMessageBytes) return text;
  return absl::StrCat(text.substr(0, kMaxCompilerMessageBytes), "\n... (",
                      text.size() - kMaxCompilerMessageBytes, " more bytes)");
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
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-ascend", options.work_dir);
  if (!dir.ok()) return dir.status();
  const std::string src = dir->path() + "/kernel.cc";
  const std::string so = dir->path() + "/kernel.so";
  if (absl::Status s = WriteFile(src, source); !s.ok()) return s;
  std::vector<std::string> argv = {options.cxx};
  for (std::string& a : AscendCpuSimArgs(options.opt_level, *include, src, so)) {
    argv.push_back(std::move(a));
  }
  SubprocessResult result;
  absl::Status started =
      RunSubprocess(argv, options.timeout, &result, dir->path(), 1 << 20, options.canceller);
  const std::string& cxx = options.cxx_name.empty() ? options.cxx : options.cxx_name;
  if (!started.ok()) {
    return absl::InternalError(
        absl::StrCat("native compiler failed (", cxx, "): ", started.message()));
  }
  if (result.timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        "native compiler failed (", cxx, ", ", DescribeExit(result, options.timeout),
        "): it ran past the native compile timeout and its process group was killed"));
  }
  if (result.cancelled) {
    return absl::UnavailableError(absl::StrCat(
        "native compiler failed (", cxx, ", ", DescribeExit(result, options.timeout),
        "): the compile was cancelled because the server is shutting down"));
  }
  if (!result.exited || result.exit_code != 0) {
    return absl::InternalError(absl::StrCat("native compiler failed (", cxx, ", ",
                                            DescribeExit(result, options.timeout),
                                            ", PTO-ISA CPU simulation): ", Cut(result.output)));
  }
  absl::StatusOr<std::string> payload = ReadFile(so);
  if (!payload.ok()) {
    return absl::InternalError(absl::StrCat(
        "native compiler failed: it exited 0 but produced no shared object (",
        payload.status().message(), ")"));
  }
  return payload;
}

}  // namespace pto::compiler
