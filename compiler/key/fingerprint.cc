#include "compiler/key/fingerprint.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "compiler/options.h"
#include "compiler/targets/ascend/ascend_fingerprint.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_backend.h"
#include "runtime/ascend_target.h"
#include "runtime/host_target.h"
#include "runtime/sha256.h"

namespace pto::compiler {
namespace {

std::vector<std::string> HostCompilerFlagLines() {
  std::vector<std::string> lines;
  for (const std::string& target : runtime::KnownHostTargets()) {
    for (int level : AcceptedOptLevels()) {
      for (HostLink link : {HostLink::kLean, HostLink::kFull}) {
        lines.push_back(absl::StrCat(
            target, " -O", level, link == HostLink::kFull ? " full link" : "", ": ",
            absl::StrJoin(HostCompilerArgs(target, level, "kernel.cc", "kernel.so", link),
                          " ")));
      }
    }
  }
  return lines;
}

// The executable `cxx` names, as execvp would find it; empty if none.
std::string ResolveExecutable(const std::string& cxx) {
  if (cxx.empty()) return "";
  std::vector<std::string> candidates;
  if (cxx.find('/') != std::string::npos) {
    candidates.push_back(cxx);
  } else {
    const char* path = getenv("PATH");
    for (absl::string_view dir :
         absl::StrSplit(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
      candidates.push_back(dir.empty() ? cxx : absl::StrCat(dir, "/", cxx));
    }
  }
  for (const std::string& c : candidates) {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(c, ec);
    if (ec || !std::filesystem::is_regular_file(real, ec)) continue;
    if (access(real.c_str(), X_OK) == 0) return real.string();
  }
  return "";
}

// The hex SHA-256 of the file at `path`, read in 1 MiB chunks (a compiler
// executable need not be held in memory whole).
absl::StatusOr<std::string> Sha256HexOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  runtime::Sha256Hasher h;
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    h.Update(absl::string_view(chunk.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("read error in ", path));
  return runtime::ToHex(h.Finish());
}

}  // namespace

std::vector<int> AcceptedOptLevels() {
  std::vector<int> levels;
  for (int level = 0; level <= 9; ++level) {
    absl::StatusOr<ParsedOptions> parsed =
        ParseOptions({{"opt_level", absl::StrCat(level)}});
    if (parsed.ok()) levels.push_back(parsed->opt_level);
  }
  return levels;
}

std::string CompilerIdentity(const std::string& cxx) {
  const std::string path = ResolveExecutable(cxx);
  if (path.empty()) return absl::StrCat("unresolved: ", cxx);
  absl::StatusOr<std::string> digest = Sha256HexOfFile(path);
  if (!digest.ok()) return absl::StrCat(path, ": unreadable: ", digest.status().message());
  return absl::StrCat(path, ": ", *digest);
}

std::string FingerprintOf(const FingerprintInputs& inputs) {
  runtime::Sha256Hasher h;
  auto field = [&h](absl::string_view tag, absl::string_view bytes) {
    h.Update(absl::StrCat(tag, ":", bytes.size(), ":"));
    h.Update(bytes);
  };
  field("build", inputs.build_id);
  field("headers", absl::StrCat(inputs.headers.size()));
  for (const auto& [name, contents] : inputs.headers) {
    field("name", name);
    field("contents", contents);
  }
  field("flags", absl::StrCat(inputs.flags.size()));
  for (const std::string& line : inputs.flags) field("flag", line);
  field("toolchain", inputs.toolchain);
  field("compiler", inputs.compiler);
  return runtime::ToHex(h.Finish());
}

FingerprintInputs CurrentFingerprintInputs(const std::string& cxx) {
  FingerprintInputs in;
  in.build_id = kCompilerBuildId;
  for (const EmbeddedFile& f : EmbeddedHostHeaders()) {
    in.headers.emplace_back(f.name, std::string(f.contents));
  }
  in.flags = HostCompilerFlagLines();
  in.compiler = CompilerIdentity(cxx);
  in.toolchain = cxx == kToolchainDriver ? in.compiler : CompilerIdentity(kToolchainDriver);
  return in;
}

const std::string& FingerprintFor(const std::string& cxx) {
  // One per compiler a process names (ptod and pypto name one or two);
  // computed once each, never freed: callers keep the reference.
  static absl::Mutex mu(absl::kConstInit);
  static auto* by_cxx = new absl::flat_hash_map<std::string, const std::string*>();
  absl::MutexLock lock(&mu);
  const std::string*& fingerprint = (*by_cxx)[cxx];
  if (fingerprint == nullptr) {
    fingerprint = new std::string(FingerprintOf(CurrentFingerprintInputs(cxx)));
  }
  return *fingerprint;
}

std::string FingerprintForTarget(const std::string& target, const std::string& cxx) {
  const std::string& compiler = FingerprintFor(cxx);
  if (!runtime::IsAscendCpuSimTarget(target) && !runtime::IsAscendDeviceTarget(target)) {
    return compiler;
  }
  return AscendFingerprintOf(compiler, CurrentAscendFingerprintInputs(target, AcceptedOptLevels()));
}

}  // namespace pto::compiler
