#include "runtime/sha256.h"

#include <openssl/evp.h>

#include "absl/strings/escaping.h"

namespace pto::runtime {

std::string Sha256(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest is one-shot and thread-safe; SHA256() is deprecated in 3.0.
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(),
                 nullptr) != 1) {
    return std::string();  // Never matches a real 32-byte digest.
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string ToHex(absl::string_view bytes) {
  return absl::BytesToHexString(bytes);
}

}  // namespace pto::runtime
