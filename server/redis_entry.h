// The bytes of a kernel entry in Redis, sealed to its key with the cluster's
// signing key so that nothing read back is served unless a ptod holding
// that key wrote it for that key:
//
//   "PTR1"                    4 bytes, the format
//   seal                      32 bytes: HMAC-SHA256 under the signing key of
//                             "pto-redis-entry-v1" NUL key NUL record
//   record                    pto.v1.CompileResponse (binary, compile_seconds,
//                             stages), deterministic serialization
//
// Decoding checks, in order: the format, the seal (constant time), that the
// record parses, that the payload's SHA-256 is the binary's payload_sha256,
// and the binary's own signature (runtime/signature.h: key, metadata and
// payload) under the same signing key. Any failure is DATA_LOSS naming it.
#ifndef PTO_SERVER_REDIS_ENTRY_H_
#define PTO_SERVER_REDIS_ENTRY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/compiled_kernel.h"

namespace pto::server {

// `kernel` (already signed) as the entry for `key`.
std::string EncodeRedisEntry(absl::string_view signing_key,
                             absl::string_view key,
                             const CompiledKernel& kernel);

// The kernel in `entry`, read under `key`; DATA_LOSS when it does not
// verify (see above).
absl::StatusOr<CompiledKernel> DecodeRedisEntry(absl::string_view signing_key,
                                                absl::string_view key,
                                                absl::string_view entry);

}  // namespace pto::server

#endif  // PTO_SERVER_REDIS_ENTRY_H_
