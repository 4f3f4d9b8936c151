// A private temporary directory that removes itself.
//
//   auto dir = TempDir::Create("pto-compile");   // mkdtemp: mode 0700
//   if (!dir.ok()) return dir.status();
//   WriteFile(dir->path() + "/k.cc", source);
//   // ~TempDir removes the directory and everything in it.
#ifndef PTO_COMPILER_UTIL_TEMP_DIR_H_
#define PTO_COMPILER_UTIL_TEMP_DIR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pto::compiler {

class TempDir {
 public:
  // Makes a fresh directory "<parent>/<prefix>-XXXXXX" readable only by this
  // user; an empty `parent` is $TMPDIR, else /tmp.
  static absl::StatusOr<TempDir> Create(absl::string_view prefix,
                                        const std::string& parent = "");

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void Remove();

  std::string path_;  // empty once moved from
};

// Writes `contents` to `path` (created with mode 0600, truncated).
absl::Status WriteFile(const std::string& path, absl::string_view contents);

// Reads a whole file.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_TEMP_DIR_H_
