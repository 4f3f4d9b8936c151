#include "compiler/targets/ascend/testing/pto_isa_for_tests.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "compiler/targets/ascend/ascend_backend.h"

namespace pto::compiler::testing {

std::string UsePtoIsaForTests(const std::string& data_file) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("PTO_ISA_ROOT");
  if (env == nullptr || *env == '\0') {
    std::error_code ec;
    // The data file is a link into the source tree; the repository root is
    // as many folders above it as the file's path has parts.
    fs::path source = fs::canonical(data_file, ec);
    if (!ec) {
      fs::path root = source;
      for (const auto& part : fs::path(data_file)) {
        (void)part;
        root = root.parent_path();
      }
      const fs::path lib = root.parent_path() / "shared" / "third_party" / "pto-isa";
      if (fs::is_regular_file(lib / "include" / "pto" / "pto-inst.hpp", ec)) {
        setenv("PTO_ISA_ROOT", lib.c_str(), 1);
      }
    }
  }
  absl::StatusOr<std::string> include = PtoIsaInclude();
  if (include.ok()) return "";
  return std::string("skipped: ") + std::string(include.status().message()) +
         " (the PTO-ISA library: ../shared/third_party/pto-isa beside the repository, "
         "or any checkout of its public repository)";
}

}  // namespace pto::compiler::testing
