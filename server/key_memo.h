// A bounded memo of request bytes -> cache key, so that a repeated request
// skips the backend's key computation (graph import, verification, canonical
// encoding, SHA-256: most of ptod's own CPU on a hit) and, on the service's
// hit path, parsing the request at all.
//
//   if (auto key = memo.KeyOfBytes(tenant, wire_bytes)) ...   // no parse
//   ... parse, key = backend.Key(request) ...
//   memo.Remember(tenant, wire_bytes, key);
//
// Sound because CompilerBackend::Key is a deterministic function of the
// request: identical bytes parse to an identical request, hence the same key
// (or the same error; errors are not remembered). Two encodings of one
// request (map entries in another order) are two entries with the same key.
// The memo is keyed on the tenant as well, so one tenant's requests never
// speed up another's. Requests larger than max_request_bytes are not
// remembered. Thread-safe.
#ifndef PTO_SERVER_KEY_MEMO_H_
#define PTO_SERVER_KEY_MEMO_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "pto/v1/compile_service.pb.h"
#include "server/compiler_backend.h"
#include "server/lru_cache.h"

namespace pto::server {

class KeyMemo {
 public:
  // capacity_bytes bounds the remembered requests and keys together; 0 turns
  // the memo off (every call goes to the backend).
  KeyMemo(size_t capacity_bytes, size_t max_request_bytes);

  KeyMemo(const KeyMemo&) = delete;
  KeyMemo& operator=(const KeyMemo&) = delete;

  // backend.Key(request), from the memo when `tenant` sent these exact bytes
  // before and they got a key. The bytes are the request serialized
  // deterministically (map entries in key order).
  absl::StatusOr<std::string> Key(CompilerBackend& backend,
                                  absl::string_view tenant,
                                  const pto::v1::CompileRequest& request);

  // The key remembered for `tenant`'s request whose serialized form is
  // `request_bytes` (as received); nullopt when there is none.
  std::optional<std::string> KeyOfBytes(absl::string_view tenant,
                                        absl::string_view request_bytes);

  // Remembers that `tenant`'s request `request_bytes` has cache key `key`
  // (a no-op when the memo is off or the request too large).
  void Remember(absl::string_view tenant, absl::string_view request_bytes,
                const std::string& key);

  // Whether requests of `request_bytes` bytes are remembered at all.
  bool Remembers(size_t request_bytes) const {
    return cache_.capacity_bytes() > 0 && request_bytes <= max_request_bytes_;
  }

  size_t size() const { return cache_.size(); }
  size_t bytes() const { return cache_.bytes(); }

 private:
  struct Entry {
    std::string key;
    size_t bytes = 0;  // memo key + cache key + bookkeeping
  };

  const size_t max_request_bytes_;
  LruCache<Entry> cache_;
};

}  // namespace pto::server

#endif  // PTO_SERVER_KEY_MEMO_H_
