// SHA-256 through OpenSSL's EVP interface.
//
//   Sha256 h;
//   h.Update("abc");
//   std::string digest = h.Finish();        // 32 raw bytes
//   std::string hex = HexEncode(digest);    // 64 lowercase hex digits
#ifndef PTO_COMPILER_UTIL_SHA256_H_
#define PTO_COMPILER_UTIL_SHA256_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"

namespace pto::compiler {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(absl::string_view bytes);
  // The 32-byte digest. The object must not be used afterwards.
  std::string Finish();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

// One-shot digest (32 raw bytes).
std::string Sha256Digest(absl::string_view bytes);

// Lowercase hex of arbitrary bytes.
std::string HexEncode(absl::string_view bytes);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_UTIL_SHA256_H_
