// Kernel binary signatures: ptod signs what it serves, the runtime checks the
// signature before it loads native code.
//
//   // ptod (server side):
//   binary.set_signature(SignKernelBinary(binary, key));
//   // runtime (every Kernel::Load, via VerifyBinary):
//   SetKernelVerificationKey(key);   // or PTO_KERNEL_VERIFY_KEY_FILE=<file>
//
// The signature is HMAC-SHA256 (32 bytes) under a shared secret over
// SignedMessage(binary):
//
//   "pto-kernel-signature-v2" NUL
//   then six fields, each as an 8-byte little-endian length and the bytes:
//     key                   the cache key (ASCII hex)
//     target                e.g. "host-x86_64-v3"
//     compiler_fingerprint
//     format_version        4 bytes, little-endian
//     payload_sha256        32 bytes: SHA-256 of native_payload
//     SHA-256 (32 bytes) of the deterministic protobuf serialization of the
//       whole KernelBinary but `native_payload` and `signature`
//
// So the key, every field of metadata (parameters, tasks, names, the PTO
// text) and the native code are covered together: a binary cannot be moved
// to another key, nor any byte of it changed, without the secret. The
// runtime checks payload_sha256 against the payload before the signature,
// so signing the digest signs the payload. ptod signs a kernel once, when it
// is compiled; what it serves from its cache carries that signature.
//
// With no verification key configured the runtime accepts unsigned binaries
// (a single trusted process). With one, an unsigned or wrongly signed binary
// is refused with PERMISSION_DENIED naming the problem.
#ifndef PTO_RUNTIME_SIGNATURE_H_
#define PTO_RUNTIME_SIGNATURE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pto/v1/kernel.pb.h"

namespace pto::runtime {

// The bytes the signature covers (see above).
std::string SignedMessage(const pto::v1::KernelBinary& binary);

// HMAC-SHA256 of SignedMessage(binary) under `key` (32 raw bytes).
std::string SignKernelBinary(const pto::v1::KernelBinary& binary,
                             absl::string_view key);

// OK when binary.signature() is SignKernelBinary(binary, key) (compared in
// constant time); PERMISSION_DENIED saying "unsigned" or "wrong signature"
// otherwise.
absl::Status CheckKernelSignature(const pto::v1::KernelBinary& binary,
                                  absl::string_view key);

// Reads a key file: its bytes without trailing whitespace, at least 32 of
// them (e.g. `openssl rand -hex 32 > key`). Errors name the file.
absl::StatusOr<std::string> ReadSigningKeyFile(const std::string& path);

// Sets the process-wide verification key; empty turns verification off.
// Overrides PTO_KERNEL_VERIFY_KEY_FILE.
void SetKernelVerificationKey(std::string key);

// What VerifyBinary calls: checks the signature when a key is configured
// (SetKernelVerificationKey, else the file named by the environment variable
// PTO_KERNEL_VERIFY_KEY_FILE, read once; if that file cannot be read every
// binary is refused, naming it).
absl::Status CheckConfiguredSignature(const pto::v1::KernelBinary& binary);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_SIGNATURE_H_
