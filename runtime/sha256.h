// SHA-256 and HMAC-SHA256 through OpenSSL: payload checksums, cache keys,
// compiler fingerprints, content-addressed storage, kernel signatures and
// ptod's record seals all use these.
//
//   std::string digest = Sha256("abc");        // 32 raw bytes
//   std::string hex = ToHex(digest);           // 64 lowercase hex digits
//
//   Sha256Hasher h;                            // streaming form
//   h.Update("a"); h.Update("bc");
//   digest = h.Finish();
//
//   std::string mac = HmacSha256(secret, message);  // 32 raw bytes
//   if (ConstantTimeEquals(mac, claimed)) ...
#ifndef PTO_RUNTIME_SHA256_H_
#define PTO_RUNTIME_SHA256_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace pto::runtime {

class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(absl::string_view bytes);
  // The 32-byte digest. The object must not be used afterwards.
  std::string Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// The 32-byte SHA-256 digest of `data` (raw bytes, not hex).
std::string Sha256(absl::string_view data);

// Lowercase hex of `bytes`.
std::string ToHex(absl::string_view bytes);

// The 32-byte HMAC-SHA256 of `message` under `key`.
std::string HmacSha256(absl::string_view key, absl::string_view message);

// Whether `a` and `b` are equal, in time that depends only on their sizes
// (for comparing MACs).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_SHA256_H_
