#include "compiler/compile.h"

#include <utility>

#include "compiler/key/cache_key.h"
#include "compiler/key/fingerprint.h"
#include "compiler/pipeline.h"
#include "compiler/targets/target.h"
#include "compiler/util/strings.h"
#include "runtime/kernel_abi.h"
#include "runtime/sha256.h"

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

// The state both entry points start from: `graph`, the resolved target and
// the parsed options (their errors name the target or the option).
absl::Status InitState(const pto::v1::Graph& graph, const std::string& target,
                       const CompileOptions& options, LoweringState* state) {
  absl::StatusOr<std::string> resolved = ResolveTarget(target);
  if (!resolved.ok()) return resolved.status();
  absl::StatusOr<ParsedOptions> parsed = ParseOptions(options);
  if (!parsed.ok()) return parsed.status();
  state->graph = &graph;
  state->target = *std::move(resolved);
  state->options = *std::move(parsed);
  return absl::OkStatus();
}

// The compiler `settings` name: the one a wrapper (cxx) runs, if any.
const std::string& CompilerOf(const CompileSettings& settings) {
  return settings.cxx_name.empty() ? settings.cxx : settings.cxx_name;
}

// The cache key of a state the pipeline has imported (state.tensor).
std::string KeyOf(const LoweringState& state) {
  return ComputeCacheKey(state.tensor, state.target, CanonicalOptions(state.options),
                         TargetFingerprint(state.target, CompilerOf(state.settings)));
}

}  // namespace

absl::StatusOr<std::string> ResolveTarget(const std::string& target) {
  return ResolveTargetName(target);
}

const std::string& CompilerFingerprint(const std::string& cxx) {
  return FingerprintFor(cxx);
}

std::string TargetFingerprint(const std::string& target, const std::string& cxx) {
  return FingerprintForTarget(target, cxx);
}

absl::StatusOr<std::string> CacheKey(const pto::v1::Graph& graph,
                                     const std::string& target,
                                     const CompileOptions& options,
                                     const CompileSettings& settings) {
  LoweringState state;
  if (absl::Status s = InitState(graph, target, options, &state); !s.ok()) return s;
  state.settings = settings;
  if (absl::Status s = RunPipeline(&state, nullptr, nullptr, "import"); !s.ok()) {
    return s;
  }
  return KeyOf(state);
}

absl::StatusOr<CompileResult> Compile(const pto::v1::Graph& graph,
                                      const std::string& target,
                                      const CompileOptions& options,
                                      const CompileSettings& settings) {
  LoweringState state;
  if (absl::Status s = InitState(graph, target, options, &state); !s.ok()) return s;
  state.settings = settings;
  CompileResult result;
  if (absl::Status s = RunPipeline(&state, &result.stages, &result.dumps);
      !s.ok()) {
    return s;
  }
  result.key = KeyOf(state);

  pto::v1::KernelBinary& b = result.binary;
  b.set_magic(PTO_KERNEL_MAGIC);
  b.set_format_version(PTO_KERNEL_FORMAT_VERSION);
  b.set_key(result.key);
  b.set_target(state.target);
  b.set_compiler_fingerprint(TargetFingerprint(state.target, CompilerOf(settings)));
  b.set_kernel_name(SanitizeIdentifier(graph.name()));
  FillParams(state.tensor, &b);
  *b.mutable_execute_graph() = std::move(state.execute);
  b.set_pto_text(PrintPto(state.pto));
  b.set_payload_sha256(runtime::Sha256(state.payload));
  b.set_native_payload(std::move(state.payload));
  return result;
}

}  // namespace pto::compiler
