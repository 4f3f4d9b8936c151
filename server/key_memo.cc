#include "server/key_memo.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace pto::server {
namespace {

// Per-entry bookkeeping charged on top of the strings (list node, index
// slot, shared_ptr control block): a rough figure, so the bound stays honest
// for small requests.
constexpr size_t kEntryOverhead = 160;

// "<tenant size>:<tenant>" then the request's bytes.
std::string MemoKey(absl::string_view tenant, absl::string_view request_bytes) {
  std::string key = absl::StrCat(tenant.size(), ":", tenant);
  key.append(request_bytes.data(), request_bytes.size());
  return key;
}

// `request` serialized deterministically (map entries in key order).
bool Deterministic(const pto::v1::CompileRequest& request, std::string* out) {
  const size_t size = request.ByteSizeLong();
  out->resize(size);
  google::protobuf::io::ArrayOutputStream array(out->data(),
                                                static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&array);
  coded.SetSerializationDeterministic(true);
  request.SerializeWithCachedSizes(&coded);
  return !coded.HadError() && coded.ByteCount() == static_cast<int>(size);
}

}  // namespace

KeyMemo::KeyMemo(size_t capacity_bytes, size_t max_request_bytes)
    : max_request_bytes_(max_request_bytes),
      cache_(capacity_bytes, [](const Entry& e) { return e.bytes; }) {}

absl::StatusOr<std::string> KeyMemo::Key(
    CompilerBackend& backend, absl::string_view tenant,
    const pto::v1::CompileRequest& request) {
  std::string bytes;
  if (!Remembers(request.ByteSizeLong()) || !Deterministic(request, &bytes)) {
    return backend.Key(request);
  }
  if (std::optional<std::string> known = KeyOfBytes(tenant, bytes)) {
    return *std::move(known);
  }
  absl::StatusOr<std::string> key = backend.Key(request);
  if (key.ok()) Remember(tenant, bytes, *key);
  return key;
}

std::optional<std::string> KeyMemo::KeyOfBytes(
    absl::string_view tenant, absl::string_view request_bytes) {
  if (!Remembers(request_bytes.size())) return std::nullopt;
  if (std::shared_ptr<const Entry> hit =
          cache_.Get(MemoKey(tenant, request_bytes))) {
    return hit->key;
  }
  return std::nullopt;
}

void KeyMemo::Remember(absl::string_view tenant,
                       absl::string_view request_bytes,
                       const std::string& key) {
  if (!Remembers(request_bytes.size())) return;
  std::string memo_key = MemoKey(tenant, request_bytes);
  auto entry = std::make_shared<Entry>();
  entry->key = key;
  entry->bytes = 2 * memo_key.size() + key.size() + kEntryOverhead;
  cache_.Insert(memo_key, std::move(entry));
}

}  // namespace pto::server
