// A stand-in for pto::compiler, for builds where it is not linked: keys are
// SHA-256 of the deterministic request encoding after a few structural checks,
// and a "kernel" is a binary with a recognizable payload.
#include "absl/strings/escaping.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "absl/strings/str_cat.h"
#include "server/kernel_store.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

class FakeBackend final : public pto::server::CompilerBackend {
 public:
  absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) override {
    const pto::v1::Graph& graph = request.graph();
    if (graph.schema_version() != pto::v1::SCHEMA_VERSION_1) {
      return absl::InvalidArgumentError(
          "graph: schema_version must be SCHEMA_VERSION_1");
    }
    for (int i = 0; i < graph.ops_size(); ++i) {
      if (graph.ops(i).kind() != "add") {
        return absl::InvalidArgumentError(absl::StrCat(
            "op ", i, ": unknown kind \"", graph.ops(i).kind(), "\""));
      }
    }
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      request.SerializeToCodedStream(&coded);
    }
    return pto::server::Sha256Hex(bytes);
  }

  absl::StatusOr<pto::server::CompiledKernel> Compile(
      const pto::v1::CompileRequest& request) override {
    absl::StatusOr<std::string> key = Key(request);
    if (!key.ok()) return key.status();
    pto::server::CompiledKernel kernel;
    kernel.binary.set_magic(0x4F545031);
    kernel.binary.set_format_version(1);
    kernel.binary.set_key(*key);
    kernel.binary.set_target(request.target());
    kernel.binary.set_kernel_name(request.graph().name());
    kernel.binary.set_native_payload(absl::StrCat("fake payload for ", *key));
    kernel.compile_seconds = 0.25;
    pto::v1::StageTiming& stage = kernel.stages.emplace_back();
    stage.set_stage("fake");
    stage.set_seconds(0.25);
    return kernel;
  }
};

}  // namespace

std::unique_ptr<pto::server::CompilerBackend> MakeInnerBackend() {
  return std::make_unique<FakeBackend>();
}

bool InnerBackendIsReal() { return false; }

}  // namespace pto::testing
