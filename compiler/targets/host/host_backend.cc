#include "compiler/targets/host/host_backend.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_codegen.h"
#include "compiler/targets/native_build.h"
#include "compiler/targets/precompiled_prelude.h"
#include "runtime/host_target.h"

namespace pto::compiler {
std::vector<std::string> HostCompilerArgs(const std::string& target,
                                          int opt_level,
                                          const std::string& source,
                                          const std::string& output,
                                          HostLink link) {
  const std::vector<std::string> isa = runtime::HostTargetFlags(target);
  if (isa.empty()) return {};
  std::vector<std::string> args = {"-std=c++17", absl::StrCat("-O", opt_level)};
  args.insert(args.end(), isa.begin(), isa.end());
  args.insert(args.end(), {
      "-fPIC",          "-shared",
      "-fvisibility=hidden",
      "-ffp-contract=off",  // results must not depend on FMA contraction
      "-fno-math-errno"});  // lets std::exp vectorize; errno is never read
  if (link == HostLink::kLean) args.push_back("-nodefaultlibs");
  args.insert(args.end(), {"-o", output, source,
                           "-lmvec"});  // glibc's vector math (pto_tile.h's transcendentals)
  if (link == HostLink::kLean) {
    // The C driver's libraries, and no symbol left for the loader to find
    // (a kernel needing libstdc++ fails here and is linked in full).
    args.insert(args.end(), {"-lm", "-lgcc", "-lc", "-lgcc", "-Wl,--no-undefined"});
  }
  return args;
}

std::vector<std::string> HostCodeFlags(const std::string& target, int opt_level) {
  const std::string source = "kernel.cc", output = "kernel.so";
  std::vector<std::string> flags;
  const std::vector<std::string> args = HostCompilerArgs(target, opt_level, source, output);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o") {
      ++i;  // and its file
    } else if (args[i] != source && args[i] != "-shared" && args[i] != "-nodefaultlibs" &&
               !absl::StartsWith(args[i], "-l") && !absl::StartsWith(args[i], "-Wl,")) {
      flags.push_back(args[i]);
    }
  }
  return flags;
}

absl::StatusOr<std::string> HostBackend::GenerateSource(
    const PtoProgram& program) const {
  return GenerateHostCpp(program);
}

namespace {

// Whether a failed lean build's message is the linker's (English) report of a
// symbol the lean libraries lack: the .gch is not at fault then.
bool UndefinedSymbol(const absl::Status& build) {
  return absl::StrContains(build.message(), "undefined reference to");
}

}  // namespace

absl::StatusOr<std::string> HostBackend::BuildPayload(
    const std::string& source, const NativeBuildOptions& options) const {
  absl::StatusOr<std::string> lean = Build(source, options, HostLink::kLean);
  if (lean.ok() || lean.status().code() != absl::StatusCode::kInternal) return lean;
  // The linker's messages may be in another language: any failure is built
  // again with the full link, whose error (if any) is the one reported.
  return Build(source, options, HostLink::kFull);
}

absl::StatusOr<std::string> HostBackend::Build(const std::string& source,
                                               const NativeBuildOptions& options,
                                               HostLink link) const {
  if (runtime::HostTargetFlags(name_).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("host target ", name_, " has no -march setting"));
  }
  NativeSource native{source, {}, "pto-compile", ""};
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) {
    native.headers.push_back({header.name, header.contents});
  }
  const NativeArgs plain = [&](const std::string& src, const std::string& so) {
    return HostCompilerArgs(name_, options.opt_level, src, so, link);
  };
  const std::string dir = PreludeDir(options.pch_dir);
  if (dir.empty() || options.compiler_fingerprint.empty()) {
    return BuildSharedObject(native, options, plain);
  }
  const PreludeSpec spec{LeadingIncludes(source), native.headers,
                         HostCodeFlags(name_, options.opt_level), options.compiler_fingerprint};
  const absl::StatusOr<Prelude> prelude = EnsurePrelude(spec, dir, options);
  if (!prelude.ok()) return BuildSharedObject(native, options, plain);

  std::string output;
  absl::StatusOr<std::string> so = BuildSharedObject(
      native, options,
      [&](const std::string& src, const std::string& out) {
        std::vector<std::string> args = PreludeArgs(*prelude);
        for (std::string& arg : plain(src, out)) args.push_back(std::move(arg));
        return args;
      },
      &output);
  if (so.ok()) {
    if (PreludeRefused(*prelude, output)) DiscardPrelude(*prelude);  // stale or corrupt
    return so;
  }
  if (so.status().code() != absl::StatusCode::kInternal) return so;  // timed out, cancelled
  if (link == HostLink::kLean && UndefinedSymbol(so.status())) return so;  // the link, not the .gch
  // A damaged .gch can make the compiler fail: without it, the build says
  // whether the source is at fault.
  absl::StatusOr<std::string> without = BuildSharedObject(native, options, plain);
  if (without.ok()) DiscardPrelude(*prelude);
  return without;
}

}  // namespace pto::compiler
