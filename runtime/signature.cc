#include "runtime/signature.h"

#include <stdlib.h>

#include <cstdint>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "runtime/sha256.h"

namespace pto::runtime {
namespace {

constexpr char kDomain[] = "pto-kernel-signature-v2";
constexpr size_t kMinKeyBytes = 32;

void AppendField(std::string* out, absl::string_view bytes) {
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(n >> (8 * i)));
  out->append(bytes.data(), bytes.size());
}

// The configured key: nullopt until first needed (then read from the
// environment), "" when verification is off.
struct KeyState {
  absl::Mutex mu;
  std::optional<std::string> key ABSL_GUARDED_BY(mu);
  absl::Status error ABSL_GUARDED_BY(mu);
};

KeyState& State() {
  static KeyState* state = new KeyState();
  return *state;
}

}  // namespace

std::string SignedMessage(const pto::v1::KernelBinary& binary) {
  std::string message(kDomain, sizeof(kDomain));  // with its NUL
  AppendField(&message, binary.key());
  AppendField(&message, binary.target());
  AppendField(&message, binary.compiler_fingerprint());
  std::string version;
  for (int i = 0; i < 4; ++i) {
    version.push_back(static_cast<char>(binary.format_version() >> (8 * i)));
  }
  AppendField(&message, version);
  AppendField(&message, binary.payload_sha256());
  pto::v1::KernelBinary meta = binary;
  meta.clear_native_payload();
  meta.clear_signature();
  std::string serialized;
  {
    google::protobuf::io::StringOutputStream stream(&serialized);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    meta.SerializeToCodedStream(&coded);
  }
  AppendField(&message, Sha256(serialized));
  return message;
}

std::string SignKernelBinary(const pto::v1::KernelBinary& binary,
                             absl::string_view key) {
  return HmacSha256(key, SignedMessage(binary));
}

absl::Status CheckKernelSignature(const pto::v1::KernelBinary& binary,
                                  absl::string_view key) {
  if (binary.signature().empty()) {
    return absl::PermissionDeniedError(
        "kernel binary refused: unsigned (a verification key is configured)");
  }
  if (!ConstantTimeEquals(binary.signature(), SignKernelBinary(binary, key))) {
    return absl::PermissionDeniedError(
        "kernel binary refused: wrong signature (not signed with the "
        "configured key, or modified after signing)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSigningKeyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read key file ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string key = text.str();
  key.erase(key.find_last_not_of(" \t\r\n") + 1);
  if (key.size() < kMinKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key file ", path, " holds ", key.size(), " bytes; at least ",
        kMinKeyBytes, " are needed (e.g. openssl rand -hex 32)"));
  }
  return key;
}

void SetKernelVerificationKey(std::string key) {
  KeyState& state = State();
  absl::MutexLock lock(&state.mu);
  state.key = std::move(key);
  state.error = absl::OkStatus();
}

absl::Status CheckConfiguredSignature(const pto::v1::KernelBinary& binary) {
  KeyState& state = State();
  std::string key;
  {
    absl::MutexLock lock(&state.mu);
    if (!state.key.has_value()) {
      const char* file = getenv("PTO_KERNEL_VERIFY_KEY_FILE");
      if (file == nullptr || file[0] == '\0') {
        state.key = "";
      } else {
        absl::StatusOr<std::string> read = ReadSigningKeyFile(file);
        state.key = read.ok() ? *read : "";
        if (!read.ok()) {
          state.error = absl::FailedPreconditionError(absl::StrCat(
              "kernel binary refused: PTO_KERNEL_VERIFY_KEY_FILE is set but ",
              read.status().message()));
        }
      }
    }
    if (!state.error.ok()) return state.error;
    key = *state.key;
  }
  if (key.empty()) return absl::OkStatus();
  return CheckKernelSignature(binary, key);
}

}  // namespace pto::runtime
