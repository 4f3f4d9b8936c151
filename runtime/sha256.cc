#include "runtime/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/escaping.h"

namespace pto::runtime {

struct Sha256Hasher::Ctx {
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> md;
};

Sha256Hasher::Sha256Hasher() : ctx_(new Ctx) {
  ctx_->md.reset(EVP_MD_CTX_new());
  // Failure here means OpenSSL cannot allocate or has no SHA-256: nothing a
  // caller could recover from, and continuing would yield wrong keys.
  if (ctx_->md == nullptr ||
      EVP_DigestInit_ex(ctx_->md.get(), EVP_sha256(), nullptr) != 1) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP SHA-256 initialisation failed");
  }
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Update(absl::string_view bytes) {
  if (EVP_DigestUpdate(ctx_->md.get(), bytes.data(), bytes.size()) != 1) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP_DigestUpdate failed");
  }
}

std::string Sha256Hasher::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md.get(), out, &len) != 1 || len != 32) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP_DigestFinal_ex failed");
  }
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Sha256(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest is one-shot and thread-safe; SHA256() is deprecated in 3.0.
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(),
                 nullptr) != 1) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP_Digest failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string ToHex(absl::string_view bytes) {
  return absl::BytesToHexString(bytes);
}

std::string HmacSha256(absl::string_view key, absl::string_view message) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()),
           message.size(), mac, &length) == nullptr ||
      length != 32) {
    ABSL_RAW_LOG(FATAL, "OpenSSL HMAC-SHA256 failed");
  }
  return std::string(reinterpret_cast<const char*>(mac), length);
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  return a.size() == b.size() &&
         CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace pto::runtime
