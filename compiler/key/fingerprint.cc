// CompilerFingerprint (compile.h): what a cache key must change with besides
// the graph: this compiler's code generation, the headers generated code
// includes, and the native toolchain.
#include "absl/strings/str_cat.h"
#include "compiler/compile.h"
#include "compiler/targets/host/embedded_headers.h"
#include "runtime/sha256.h"
#include "compiler/util/subprocess.h"

namespace pto::compiler {
namespace {

// Bump when lowering or code generation changes what a graph compiles to.
constexpr char kCompilerBuildId[] = "pto-compiler/0.1 codegen=35";

std::string ToolchainVersion() {
  SubprocessResult r;
  absl::Status s = RunSubprocess({"c++", "--version"}, absl::Seconds(30), &r);
  if (!s.ok()) return absl::StrCat("unavailable: ", s.message());
  if (!r.exited || r.exit_code != 0) {
    return absl::StrCat("failed: ", DescribeExit(r, absl::Seconds(30)));
  }
  return r.output;
}

}  // namespace

const std::string& CompilerFingerprint() {
  static const std::string* fingerprint = [] {
    runtime::Sha256Hasher h;
    auto field = [&h](absl::string_view tag, absl::string_view bytes) {
      h.Update(absl::StrCat(tag, ":", bytes.size(), ":"));
      h.Update(bytes);
    };
    field("build", kCompilerBuildId);
    for (const EmbeddedFile& f : EmbeddedHostHeaders()) {
      field(f.name, f.contents);
    }
    field("toolchain", ToolchainVersion());
    return new std::string(runtime::ToHex(h.Finish()));
  }();
  return *fingerprint;
}

}  // namespace pto::compiler
