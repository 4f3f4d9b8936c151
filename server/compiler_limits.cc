#include "server/compiler_limits.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace pto::server {
namespace {

// `s` as one /bin/sh word: single-quoted, quotes inside escaped.
std::string ShellQuote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

}  // namespace

absl::StatusOr<std::string> WriteLimitedCompiler(const std::string& dir,
                                                 const std::string& cxx,
                                                 absl::Duration cpu,
                                                 uint64_t memory_bytes) {
  std::string script = "#!/bin/sh\n# Written by ptod (server/compiler_limits.h).\n";
  if (cpu > absl::ZeroDuration()) {
    // Whole seconds, at least one.
    const int64_t seconds = std::max<int64_t>(1, absl::ToInt64Seconds(cpu));
    absl::StrAppend(&script, "ulimit -t ", seconds, " || exit 125\n");
  }
  if (memory_bytes > 0) {
    const uint64_t kib = std::max<uint64_t>(1, memory_bytes / 1024);
    absl::StrAppend(&script, "ulimit -v ", kib, " || exit 125\n");
  }
  absl::StrAppend(&script, "exec ", ShellQuote(cxx), " \"$@\"\n");

  const std::string path = absl::StrCat(dir, "/cxx-limited");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << script;
    out.close();
    if (!out) {
      return absl::UnavailableError(
          absl::StrCat("cannot write the compiler wrapper ", path));
    }
  }
  if (chmod(path.c_str(), 0755) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot make ", path, " executable: ", std::strerror(errno)));
  }
  return path;
}

}  // namespace pto::server
