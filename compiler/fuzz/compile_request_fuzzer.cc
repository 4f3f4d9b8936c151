#include "compiler/fuzz/compile_request_fuzzer.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "compiler/compile.h"
#include "compiler/options.h"
#include "compiler/pipeline.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler::fuzz {

absl::Status CompileToSource(const pto::v1::CompileRequest& request) {
  const CompileOptions options(request.options().begin(), request.options().end());
  // ptod computes the key first (it verifies and imports the graph) ...
  absl::StatusOr<std::string> key = CacheKey(request.graph(), request.target(), options);
  if (!key.ok()) return key.status();
  // ... then compiles: Compile() up to the native compiler.
  absl::StatusOr<std::string> target = ResolveTarget(request.target());
  if (!target.ok()) return target.status();
  absl::StatusOr<ParsedOptions> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();
  LoweringState state;
  state.graph = &request.graph();
  state.target = *std::move(target);
  state.options = *std::move(parsed);
  if (absl::Status s = RunPipeline(&state, nullptr, nullptr, "codegen"); !s.ok()) return s;
  // What Compile() adds to the kernel binary besides the payload: the
  // parameters' shapes and the PTO text.
  pto::v1::KernelBinary binary;
  for (const TensorParam& p : state.tensor.params) {
    const TensorValue& v = state.tensor.values[p.in_value >= 0 ? p.in_value : p.out_value];
    pto::v1::KernelParam* param = binary.add_params();
    for (const SymExpr& d : v.sym_shape) *param->mutable_shape()->add_dims() = SymExprToDim(d);
  }
  binary.set_pto_text(PrintPto(state.pto));
  return absl::OkStatus();
}

bool IsCleanStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return true;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kResourceExhausted:
      return !status.message().empty();
    default:
      return false;
  }
}

int FuzzOneInput(const uint8_t* data, size_t size) {
  pto::v1::CompileRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const absl::Status status = CompileToSource(request);
  if (!IsCleanStatus(status)) {
    std::fprintf(stderr, "compile of a %zu-byte request returned %s\n", size,
                 status.ToString().c_str());
    std::abort();
  }
  return 0;
}

}  // namespace pto::compiler::fuzz
