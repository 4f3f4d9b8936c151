#include "compiler/compile.h"

#include "compiler/key/cache_key.h"
#include "compiler/options.h"
#include "compiler/pipeline.h"
#include "runtime/sha256.h"
#include "compiler/util/strings.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler {
namespace {

void FillParams(const TensorGraph& g, pto::v1::KernelBinary* binary) {
  for (const TensorParam& p : g.params) {
    const TensorValue& v = g.values[p.in_value >= 0 ? p.in_value : p.out_value];
    pto::v1::KernelParam* param = binary->add_params();
    param->set_name(p.name);
    param->set_role(p.role);
    param->set_dtype(v.dtype);
    for (const SymExpr& d : v.sym_shape) {
      *param->mutable_shape()->add_dims() = SymExprToDim(d);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> CacheKey(const pto::v1::Graph& graph,
                                     const std::string& target,
                                     const CompileOptions& options) {
  absl::StatusOr<std::string> resolved = ResolveTarget(target);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<ParsedOptions> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();
  LoweringState state;
  state.graph = &graph;
  state.target = *resolved;
  state.options = *parsed;
  if (absl::Status s = RunPipeline(&state, nullptr, nullptr, "import"); !s.ok()) {
    return s;
  }
  return ComputeCacheKey(state.tensor, *resolved, CanonicalOptions(*parsed),
                         CompilerFingerprint());
}

absl::StatusOr<CompileResult> Compile(const pto::v1::Graph& graph,
                                      const std::string& target,
                                      const CompileOptions& options,
                                      const CompileSettings& settings) {
  absl::StatusOr<std::string> resolved = ResolveTarget(target);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<ParsedOptions> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();

  LoweringState state;
  state.graph = &graph;
  state.target = *resolved;
  state.options = *parsed;
  state.settings = settings;
  CompileResult result;
  if (absl::Status s = RunPipeline(&state, &result.stages, &result.dumps);
      !s.ok()) {
    return s;
  }
  result.key = ComputeCacheKey(state.tensor, *resolved,
                               CanonicalOptions(*parsed), CompilerFingerprint());

  pto::v1::KernelBinary& b = result.binary;
  b.set_magic(PTO_KERNEL_MAGIC);
  b.set_format_version(PTO_KERNEL_FORMAT_VERSION);
  b.set_key(result.key);
  b.set_target(*resolved);
  b.set_compiler_fingerprint(CompilerFingerprint());
  b.set_kernel_name(SanitizeIdentifier(graph.name()));
  FillParams(state.tensor, &b);
  *b.mutable_execute_graph() = std::move(state.execute);
  b.set_pto_text(PrintPto(state.pto));
  b.set_payload_sha256(runtime::Sha256(state.payload));
  b.set_native_payload(std::move(state.payload));
  return result;
}

}  // namespace pto::compiler
