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

// "<tenant size>:<tenant>" then the request serialized deterministically
// (map fields in key order). False when the request is too big to remember.
bool MemoKey(absl::string_view tenant, const pto::v1::CompileRequest& request,
             size_t max_request_bytes, std::string* out) {
  const size_t size = request.ByteSizeLong();
  if (size > max_request_bytes) return false;
  *out = absl::StrCat(tenant.size(), ":", tenant);
  const size_t prefix = out->size();
  out->resize(prefix + size);
  google::protobuf::io::ArrayOutputStream array(out->data() + prefix,
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
  std::string memo_key;
  if (cache_.capacity_bytes() == 0 ||
      !MemoKey(tenant, request, max_request_bytes_, &memo_key)) {
    return backend.Key(request);
  }
  if (std::shared_ptr<const Entry> hit = cache_.Get(memo_key)) return hit->key;
  absl::StatusOr<std::string> key = backend.Key(request);
  if (key.ok()) {
    auto entry = std::make_shared<Entry>();
    entry->key = *key;
    entry->bytes = 2 * memo_key.size() + key->size() + kEntryOverhead;
    cache_.Insert(memo_key, std::move(entry));
  }
  return key;
}

}  // namespace pto::server
