// Building generated C++ into a shared object: the system C++ compiler in a
// subprocess (no shell) inside a private temporary directory that is removed
// afterwards. Every target that builds with a C++ compiler (host, the Ascend
// CPU simulation) goes through here, so its errors read alike:
//
//   absl::StatusOr<std::string> so = BuildSharedObject(
//       {source, headers, "pto-compile", ""}, options,
//       [&](const std::string& src, const std::string& out) {
//         return HostCompilerArgs(target, options.opt_level, src, out);
//       });
//
// Errors: the compiler failing to start or exiting non-zero is INTERNAL
// "native compiler failed (<cxx>, ...): <its output, cut to about 2 KB>";
// running past options.timeout is DEADLINE_EXCEEDED (the compiler's process
// group is killed); options.canceller firing is UNAVAILABLE.
#ifndef PTO_COMPILER_TARGETS_NATIVE_BUILD_H_
#define PTO_COMPILER_TARGETS_NATIVE_BUILD_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/targets/target.h"

namespace pto::compiler {

// Output of the native compiler kept in error messages.
inline constexpr size_t kMaxCompilerMessageBytes = 2048;

// A file written beside the source before the compiler runs (a header the
// generated code includes).
struct NativeFile {
  std::string name;
  absl::string_view contents;
};

struct NativeSource {
  std::string source;               // written as kernel.cc
  std::vector<NativeFile> headers;  // written beside it
  std::string temp_prefix;          // of the temporary directory's name
  std::string note;                 // added to failure messages; may be empty
};

// The compiler's arguments after its own name, to build `src` into `out`.
using NativeArgs =
    std::function<std::vector<std::string>(const std::string& src, const std::string& out)>;

// The bytes of the shared object the C++ compiler (options.cxx) builds from
// `source` with `args`; on success `compiler_output` (when not null) gets
// what the compiler printed (its warnings).
absl::StatusOr<std::string> BuildSharedObject(const NativeSource& source,
                                              const NativeBuildOptions& options,
                                              const NativeArgs& args,
                                              std::string* compiler_output = nullptr);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_NATIVE_BUILD_H_
