#include "compiler/targets/host/host_backend.h"

#include "absl/strings/str_cat.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_codegen.h"
#include "compiler/targets/native_build.h"
#include "runtime/host_target.h"

namespace pto::compiler {
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
  NativeSource native{source, {}, "pto-compile", ""};
  for (const EmbeddedFile& header : EmbeddedHostHeaders()) {
    native.headers.push_back({header.name, header.contents});
  }
  return BuildSharedObject(native, options, [&](const std::string& src, const std::string& so) {
    return HostCompilerArgs(name_, options.opt_level, src, so);
  });
}

}  // namespace pto::compiler
