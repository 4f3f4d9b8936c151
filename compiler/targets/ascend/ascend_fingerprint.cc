#include "compiler/targets/ascend/ascend_fingerprint.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "compiler/targets/ascend/ascend_backend.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "runtime/ascend_target.h"
#include "runtime/sha256.h"

namespace pto::compiler {
namespace {

namespace fs = std::filesystem;

std::string HashFolder(const fs::path& root) {
  std::error_code ec;
  std::vector<std::pair<std::string, fs::path>> files;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      files.emplace_back(fs::relative(it->path(), root, ec).generic_string(), it->path());
    }
  }
  if (ec) return absl::StrCat("unreadable: ", root.string(), ": ", ec.message());
  std::sort(files.begin(), files.end());
  runtime::Sha256Hasher h;
  h.Update(absl::StrCat(files.size(), ":"));
  for (const auto& [name, path] : files) {
    absl::StatusOr<std::string> bytes = ReadFile(path.string());
    if (!bytes.ok()) return absl::StrCat("unreadable: ", bytes.status().message());
    h.Update(absl::StrCat(name.size(), ":", name, bytes->size(), ":"));
    h.Update(*bytes);
  }
  return absl::StrCat("sha256:", runtime::ToHex(h.Finish()));
}

}  // namespace

std::string PtoIsaVersion(const std::string& include) {
  static absl::Mutex mu(absl::kConstInit);
  static auto* by_folder = new absl::flat_hash_map<std::string, std::string>();
  absl::MutexLock lock(&mu);
  auto it = by_folder->find(include);
  if (it == by_folder->end()) it = by_folder->emplace(include, HashFolder(include)).first;
  return it->second;
}

namespace {

std::string RunBishengVersion() {
  SubprocessResult r;
  absl::Status s = RunSubprocess({"bisheng", "--version"}, absl::Seconds(30), &r);
  if (!s.ok()) return absl::StrCat("unavailable: ", s.message());
  if (!r.exited || r.exit_code != 0) {
    return absl::StrCat("unavailable: ", DescribeExit(r, absl::Seconds(30)));
  }
  return r.output;
}

}  // namespace

std::string CannToolchainVersion() {
  // Run once per process: every device key needs it.
  static const std::string* version = new std::string(RunBishengVersion());
  return *version;
}

AscendFingerprintInputs CurrentAscendFingerprintInputs(const std::string& target,
                                                       const std::vector<int>& opt_levels) {
  AscendFingerprintInputs in;
  in.target = target;
  for (int level : opt_levels) {
    in.flags.push_back(absl::StrCat(
        "-O", level, ": ",
        absl::StrJoin(AscendCpuSimArgs(level, "<PTO-ISA>", "kernel.cc", "kernel.so"), " ")));
  }
  absl::StatusOr<std::string> include = PtoIsaInclude();
  in.pto_isa = include.ok() ? PtoIsaVersion(*include)
                            : absl::StrCat("unavailable: ", include.status().message());
  if (runtime::IsAscendDeviceTarget(target)) in.toolchain = CannToolchainVersion();
  return in;
}

std::string AscendFingerprintOf(const std::string& compiler_fingerprint,
                                const AscendFingerprintInputs& inputs) {
  runtime::Sha256Hasher h;
  auto field = [&h](absl::string_view tag, absl::string_view bytes) {
    h.Update(absl::StrCat(tag, ":", bytes.size(), ":"));
    h.Update(bytes);
  };
  field("compiler", compiler_fingerprint);
  field("target", inputs.target);
  field("flags", absl::StrCat(inputs.flags.size()));
  for (const std::string& line : inputs.flags) field("flag", line);
  field("pto-isa", inputs.pto_isa);
  field("toolchain", inputs.toolchain);
  return runtime::ToHex(h.Finish());
}

}  // namespace pto::compiler
