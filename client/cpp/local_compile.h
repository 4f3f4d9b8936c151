// The in-process compile a CompileClient falls back to when ptod cannot be
// reached:
//
//   ClientOptions options;
//   options.local_compile = pto::client::LocalCompiler();
//   CompileClient client("ptod.example.com:7070", options);
//
// Compiles with pto::compiler (compiler/compile.h) in the calling thread and
// answers like ptod would for a miss (cache_status UNSPECIFIED: no cache was
// involved; stages and compile_seconds filled in).
#ifndef PTO_CLIENT_CPP_LOCAL_COMPILE_H_
#define PTO_CLIENT_CPP_LOCAL_COMPILE_H_

#include <functional>

#include "absl/status/statusor.h"
#include "compiler/compile.h"
#include "pto/v1/compile_service.pb.h"

namespace pto::client {

std::function<absl::StatusOr<pto::v1::CompileResponse>(
    const pto::v1::CompileRequest&)>
LocalCompiler(pto::compiler::CompileSettings settings = {});

}  // namespace pto::client

#endif  // PTO_CLIENT_CPP_LOCAL_COMPILE_H_
