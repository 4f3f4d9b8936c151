// The integration tests compile with the real compiler.
#include "server/pto_compiler_backend.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {

std::unique_ptr<pto::server::CompilerBackend> MakeInnerBackend() {
  return pto::server::NewPtoCompilerBackend();
}

bool InnerBackendIsReal() { return true; }

}  // namespace pto::testing
