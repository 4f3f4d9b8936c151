#include "server/pto_compiler_backend.h"

#include <utility>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

pto::compiler::CompileOptions OptionsOf(
    const pto::v1::CompileRequest& request) {
  return pto::compiler::CompileOptions(request.options().begin(),
                                       request.options().end());
}

class PtoCompilerBackend final : public CompilerBackend {
 public:
  explicit PtoCompilerBackend(pto::compiler::CompileSettings settings)
      : settings_(WithCanceller(std::move(settings))) {}

  absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) override {
    return pto::compiler::CacheKey(request.graph(), request.target(),
                                   OptionsOf(request), settings_);
  }

  absl::StatusOr<CompiledKernel> Compile(
      const pto::v1::CompileRequest& request) override {
    const absl::Time start = absl::Now();
    absl::StatusOr<pto::compiler::CompileResult> result =
        pto::compiler::Compile(request.graph(), request.target(),
                               OptionsOf(request), settings_);
    if (!result.ok()) return result.status();
    CompiledKernel kernel;
    kernel.binary = std::move(result->binary);
    kernel.compile_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    for (const pto::compiler::StageTime& stage : result->stages) {
      pto::v1::StageTiming& timing = kernel.stages.emplace_back();
      timing.set_stage(stage.stage);
      timing.set_seconds(absl::ToDoubleSeconds(stage.duration));
    }
    return kernel;
  }

  void CancelCompiles() override {
    const int killed = settings_.canceller->Cancel();
    if (killed > 0) {
      spdlog::warn(
          "compiles cancelled: killed {} running native compiler process "
          "group(s)",
          killed);
    }
  }

 private:
  static pto::compiler::CompileSettings WithCanceller(
      pto::compiler::CompileSettings settings) {
    if (settings.canceller == nullptr) {
      settings.canceller =
          std::make_shared<pto::compiler::SubprocessCanceller>();
    }
    return settings;
  }

  const pto::compiler::CompileSettings settings_;
};

}  // namespace

std::unique_ptr<CompilerBackend> NewPtoCompilerBackend(
    pto::compiler::CompileSettings settings) {
  return std::make_unique<PtoCompilerBackend>(std::move(settings));
}

}  // namespace pto::server
