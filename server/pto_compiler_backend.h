// The CompilerBackend that ptod ships with: pto::compiler (compiler/compile.h).
#ifndef PTO_SERVER_PTO_COMPILER_BACKEND_H_
#define PTO_SERVER_PTO_COMPILER_BACKEND_H_

#include <memory>

#include "compiler/compile.h"
#include "server/compiler_backend.h"

namespace pto::server {

// Keys with pto::compiler::CacheKey and compiles with pto::compiler::Compile
// under `settings`. CancelCompiles() kills the running native compilers'
// process groups through settings.canceller (made when not given).
std::unique_ptr<CompilerBackend> NewPtoCompilerBackend(
    pto::compiler::CompileSettings settings = {});

}  // namespace pto::server

#endif  // PTO_SERVER_PTO_COMPILER_BACKEND_H_
