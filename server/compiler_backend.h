// What ptod needs from a compiler: a cache key for a request, and a compile.
//
// The daemon never calls pto::compiler directly; it is handed a
// CompilerBackend. The real one (NewPtoCompilerBackend in
// pto_compiler_backend.h) wraps compiler/compile.h; tests hand in backends
// that count, slow down or fail compiles on purpose.
#ifndef PTO_SERVER_COMPILER_BACKEND_H_
#define PTO_SERVER_COMPILER_BACKEND_H_

#include <string>

#include "absl/status/statusor.h"
#include "pto/v1/compile_service.pb.h"
#include "server/compiled_kernel.h"

namespace pto::server {

class CompilerBackend {
 public:
  virtual ~CompilerBackend() = default;

  // The request's cache key (64 lowercase hex digits). Verifies the graph:
  // INVALID_ARGUMENT naming the op and field for a graph the compiler would
  // reject. Cheap next to Compile(); called on every request.
  virtual absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) = 0;

  // Compiles the request. Called from worker threads, concurrently.
  virtual absl::StatusOr<CompiledKernel> Compile(
      const pto::v1::CompileRequest& request) = 0;

  // Makes the compiles running now end soon (failing UNAVAILABLE), and
  // later ones fail at once: called once by shutdown when its grace period
  // is over, so that nothing a compile waits on (a hung native compiler) can
  // hold ptod. Irreversible. The default does nothing: shutdown then waits
  // for running compiles to end by themselves.
  virtual void CancelCompiles() {}
};

}  // namespace pto::server

#endif  // PTO_SERVER_COMPILER_BACKEND_H_
