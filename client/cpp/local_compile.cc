#include "client/cpp/local_compile.h"

#include <utility>

#include "absl/time/clock.h"

namespace pto::client {

std::function<absl::StatusOr<pto::v1::CompileResponse>(
    const pto::v1::CompileRequest&)>
LocalCompiler(pto::compiler::CompileSettings settings) {
  return [settings = std::move(settings)](
             const pto::v1::CompileRequest& request)
             -> absl::StatusOr<pto::v1::CompileResponse> {
    const absl::Time start = absl::Now();
    absl::StatusOr<pto::compiler::CompileResult> result =
        pto::compiler::Compile(
            request.graph(), request.target(),
            pto::compiler::CompileOptions(request.options().begin(),
                                          request.options().end()),
            settings);
    if (!result.ok()) return result.status();
    pto::v1::CompileResponse response;
    response.set_key(result->binary.key());
    *response.mutable_binary() = std::move(result->binary);
    for (const pto::compiler::StageTime& stage : result->stages) {
      pto::v1::StageTiming* timing = response.add_stages();
      timing->set_stage(stage.stage);
      timing->set_seconds(absl::ToDoubleSeconds(stage.duration));
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    response.set_compile_seconds(seconds);
    response.set_server_seconds(seconds);
    return response;
  };
}

}  // namespace pto::client
