#include "compiler/util/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

#include "absl/base/internal/raw_logging.h"

namespace pto::compiler {

struct Sha256::Ctx {
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> md;
};

Sha256::Sha256() : ctx_(new Ctx) {
  ctx_->md.reset(EVP_MD_CTX_new());
  // Failure here means OpenSSL cannot allocate or has no SHA-256: nothing a
  // caller could recover from, and continuing would yield wrong cache keys.
  if (ctx_->md == nullptr ||
      EVP_DigestInit_ex(ctx_->md.get(), EVP_sha256(), nullptr) != 1) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP SHA-256 initialisation failed");
  }
}

Sha256::~Sha256() = default;

void Sha256::Update(absl::string_view bytes) {
  if (EVP_DigestUpdate(ctx_->md.get(), bytes.data(), bytes.size()) != 1) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP_DigestUpdate failed");
  }
}

std::string Sha256::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_->md.get(), out, &len) != 1 || len != 32) {
    ABSL_RAW_LOG(FATAL, "OpenSSL EVP_DigestFinal_ex failed");
  }
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string Sha256Digest(absl::string_view bytes) {
  Sha256 h;
  h.Update(bytes);
  return h.Finish();
}

std::string HexEncode(absl::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

}  // namespace pto::compiler
