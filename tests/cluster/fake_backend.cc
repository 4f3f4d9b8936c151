#include "tests/cluster/fake_backend.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "runtime/sha256.h"

namespace pto::testing {

std::string FakePayload(const std::string& key) {
  return absl::StrCat("native code of ", key, std::string(512, '\xc3'));
}

absl::StatusOr<std::string> FakeBackend::Key(
    const pto::v1::CompileRequest& request) {
  if (request.target().empty()) {
    return absl::InvalidArgumentError("fake backend: no target");
  }
  std::string text = request.target();
  const std::map<std::string, std::string> options(request.options().begin(),
                                                   request.options().end());
  for (const auto& [name, value] : options) {
    absl::StrAppend(&text, "\n", name, "=", value);
  }
  return runtime::ToHex(runtime::Sha256(text));
}

absl::StatusOr<pto::server::CompiledKernel> FakeBackend::Compile(
    const pto::v1::CompileRequest& request) {
  absl::StatusOr<std::string> key = Key(request);
  if (!key.ok()) return key.status();
  ++*compiles_;
  if (delay_ > absl::ZeroDuration()) absl::SleepFor(delay_);
  if (request.options().contains("fail")) {
    return absl::InternalError("fake backend: the request asked to fail");
  }
  pto::server::CompiledKernel kernel;
  kernel.binary.set_magic(0x4F545031);
  kernel.binary.set_key(*key);
  kernel.binary.set_target(request.target());
  kernel.binary.set_kernel_name(request.target());
  kernel.binary.set_native_payload(FakePayload(*key));
  kernel.binary.set_payload_sha256(
      runtime::Sha256(kernel.binary.native_payload()));
  kernel.compile_seconds = 0.25;
  return kernel;
}

}  // namespace pto::testing
