#include "compiler/targets/host/host_backend.h"

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_codegen.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

std::string CutMessage(const std::string& text) {
  if (text.size() <= kMaxCompilerMessageBytes) return text;
  return absl::StrCat(text.substr(0, kMaxCompilerMessageBytes),
                      "\n... (", text.size() - kMaxCompilerMessageBytes,
                      " more bytes)");
}

}  // namespace

std::vector<std::string> HostCompilerArgs(const std::string& target,
                                          int opt_level,
                                          const std::string& source,
                                          const std::string& output) {
  const std::vector<std::string> isa = runtime::HostTargetFlags(target);
  if (isa.empty()) return {};
  std::vector<std::string> args = {"-std=c++17", absl::StrCat("-O", opt_level)};
  args.insert(args.end(), isa.begin(), isa.end());
  args.insert(args.end(), {
      "-fPIC",          "-shared",
      "-fvisibility=hidden",
      "-ffp-contract=off",  // results must not depend on FMA contraction
      "-fno-math-errno",    // lets std::exp vectorize; errno is never read
      "-o",             output,
      source,
      "-lmvec"});  // glibc's vector math (pto_tile.h's transcendentals)
  return args;
}

absl::StatusOr<std::string> HostBackend::GenerateSource(
    const PtoProgram& program) const {
  return GenerateHostCpp(program);
}

absl::StatusOr<std::string> HostBackend::BuildPayload(
    const std::string& source, const NativeBuildOptions& options) const {
  if (runtime::HostTargetFlags(name_).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("host target ", name_, " has no -march setting"));
  }
  absl::StatusOr<TempDir> dir =
      TempDir::Create("pto-compile", options.work_dir);
  if (!dir.ok()) return dir.status();
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) {
    absl::Status s =
        WriteFile(absl::StrCat(dir->path(), "/", header.name), header.contents);
    if (!s.ok()) return s;
  }
  const std::string src = dir->path() + "/kernel.cc";
  const std::string so = dir->path() + "/kernel.so";
  if (absl::Status s = WriteFile(src, source); !s.ok()) return s;

  std::vector<std::string> argv = {options.cxx};
  for (std::string& arg : HostCompilerArgs(name_, options.opt_level, src, so)) {
    argv.push_back(std::move(arg));
  }
  SubprocessResult result;
  absl::Status started = RunSubprocess(argv, options.timeout, &result,
                                       dir->path(), 1 << 20, options.canceller);
  const std::string& cxx =
      options.cxx_name.empty() ? options.cxx : options.cxx_name;
  if (!started.ok()) {
    return absl::InternalError(absl::StrCat("native compiler failed (", cxx,
                                            "): ", started.message()));
  }
  if (result.timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        "native compiler failed (", cxx, ", ",
        DescribeExit(result, options.timeout),
        "): it ran past the native compile timeout and its process group was "
        "killed",
        result.output.empty() ? "" : "; output: ", CutMessage(result.output)));
  }
  if (result.cancelled) {
    return absl::UnavailableError(absl::StrCat(
        "native compiler failed (", cxx, ", ", DescribeExit(result, options.timeout),
        "): the compile was cancelled because the server is shutting down"));
  }
  if (!result.exited || result.exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "native compiler failed (", cxx, ", ",
        DescribeExit(result, options.timeout), "): ", CutMessage(result.output)));
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
