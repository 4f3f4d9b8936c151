// SHA-256 of a byte string, for kernel payload checksums.
#ifndef PTO_RUNTIME_SHA256_H_
#define PTO_RUNTIME_SHA256_H_

#include <string>

#include "absl/strings/string_view.h"

namespace pto::runtime {

// The 32-byte SHA-256 digest of `data` (raw bytes, not hex).
std::string Sha256(absl::string_view data);

// Lowercase hex of `bytes` (for messages).
std::string ToHex(absl::string_view bytes);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_SHA256_H_
