#include "server/redis_entry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"

namespace pto::server {
namespace {

constexpr absl::string_view kFormat = "PTR1";
constexpr size_t kSealBytes = 32;

std::string Seal(absl::string_view signing_key, absl::string_view key,
                 absl::string_view record) {
  return runtime::HmacSha256(
      signing_key, absl::StrCat("pto-redis-entry-v1", std::string(1, '\0'),
                                key, std::string(1, '\0'), record));
}

std::string Serialize(const pto::v1::CompileResponse& record) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  record.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

}  // namespace

std::string EncodeRedisEntry(absl::string_view signing_key,
                             absl::string_view key,
                             const CompiledKernel& kernel) {
  pto::v1::CompileResponse record;
  *record.mutable_binary() = kernel.binary;
  record.set_compile_seconds(kernel.compile_seconds);
  for (const pto::v1::StageTiming& stage : kernel.stages) {
    *record.add_stages() = stage;
  }
  const std::string bytes = Serialize(record);
  return absl::StrCat(kFormat, Seal(signing_key, key, bytes), bytes);
}

absl::StatusOr<CompiledKernel> DecodeRedisEntry(absl::string_view signing_key,
                                                absl::string_view key,
                                                absl::string_view entry) {
  if (entry.size() < kFormat.size() + kSealBytes ||
      entry.substr(0, kFormat.size()) != kFormat) {
    return absl::DataLossError("Redis entry: not a PTR1 entry");
  }
  const absl::string_view seal = entry.substr(kFormat.size(), kSealBytes);
  const absl::string_view record_bytes =
      entry.substr(kFormat.size() + kSealBytes);
  if (!runtime::ConstantTimeEquals(seal,
                                   Seal(signing_key, key, record_bytes))) {
    return absl::DataLossError(
        "Redis entry: seal mismatch (changed, moved from another key, or "
        "written under another signing key)");
  }
  pto::v1::CompileResponse record;
  if (!record.ParseFromArray(record_bytes.data(),
                             static_cast<int>(record_bytes.size()))) {
    return absl::DataLossError("Redis entry: record does not parse");
  }
  if (runtime::Sha256(record.binary().native_payload()) !=
      record.binary().payload_sha256()) {
    return absl::DataLossError("Redis entry: payload digest mismatch");
  }
  absl::Status signature =
      runtime::CheckKernelSignature(record.binary(), signing_key);
  if (!signature.ok()) {
    return absl::DataLossError(
        absl::StrCat("Redis entry: ", signature.message()));
  }
  CompiledKernel kernel;
  kernel.binary = std::move(*record.mutable_binary());
  kernel.compile_seconds = record.compile_seconds();
  kernel.stages.assign(record.stages().begin(), record.stages().end());
  return kernel;
}

}  // namespace pto::server
