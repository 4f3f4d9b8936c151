#include "compiler/targets/native_build.h"

#include "absl/strings/str_cat.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"

namespace pto::compiler {
namespace {

std::string CutMessage(const std::string& text) {
  if (text.size() <= kMaxCompilerMessageBytes) return text;
  return absl::StrCat(text.substr(0, kMaxCompilerMessageBytes), "\n... (",
                      text.size() - kMaxCompilerMessageBytes, " more bytes)");
}

}  // namespace

absl::StatusOr<std::string> BuildSharedObject(const NativeSource& source,
                                              const NativeBuildOptions& options,
                                              const NativeArgs& args,
                                              std::string* compiler_output) {
  absl::StatusOr<TempDir> dir = TempDir::Create(source.temp_prefix, options.work_dir);
  if (!dir.ok()) return dir.status();
  for (const NativeFile& header : source.headers) {
    absl::Status s = WriteFile(absl::StrCat(dir->path(), "/", header.name), header.contents);
    if (!s.ok()) return s;
  }
  const std::string src = dir->path() + "/kernel.cc";
  const std::string so = dir->path() + "/kernel.so";
  if (absl::Status s = WriteFile(src, source.source); !s.ok()) return s;

  std::vector<std::string> argv = {options.cxx};
  for (std::string& arg : args(src, so)) argv.push_back(std::move(arg));
  SubprocessResult result;
  absl::Status started = RunSubprocess(argv, options.timeout, &result, dir->path(), 1 << 20,
                                       options.canceller);
  const std::string& cxx = options.cxx_name.empty() ? options.cxx : options.cxx_name;
  const std::string note = source.note.empty() ? "" : absl::StrCat(", ", source.note);
  if (!started.ok()) {
    return absl::InternalError(
        absl::StrCat("native compiler failed (", cxx, note, "): ", started.message()));
  }
  const std::string ran = absl::StrCat(cxx, ", ", DescribeExit(result, options.timeout), note);
  if (result.timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        "native compiler failed (", ran,
        "): it ran past the native compile timeout and its process group was killed",
        result.output.empty() ? "" : "; output: ", CutMessage(result.output)));
  }
  if (result.cancelled) {
    return absl::UnavailableError(absl::StrCat(
        "native compiler failed (", ran,
        "): the compile was cancelled because the server is shutting down"));
  }
  if (!result.exited || result.exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("native compiler failed (", ran, "): ", CutMessage(result.output)));
  }
  absl::StatusOr<std::string> payload = ReadFile(so);
  if (!payload.ok()) {
    return absl::InternalError(absl::StrCat(
        "native compiler failed: it exited 0 but produced no shared object (",
        payload.status().message(), ")"));
  }
  if (compiler_output != nullptr) *compiler_output = std::move(result.output);
  return payload;
}

}  // namespace pto::compiler
