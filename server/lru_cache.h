// A thread-safe least-recently-used cache bounded by bytes.
//
//   LruCache<Blob> cache(64 << 20, [](const Blob& b) { return b.size(); });
//   cache.Insert("k", std::make_shared<const Blob>(...));
//   std::shared_ptr<const Blob> hit = cache.Get("k");   // null on a miss
//
// Values are shared, immutable and reference counted: an evicted value stays
// alive for whoever still holds it. A value larger than the whole capacity is
// not cached at all (it would only evict everything else).
#ifndef PTO_SERVER_LRU_CACHE_H_
#define PTO_SERVER_LRU_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace pto::server {

template <typename V>
class LruCache {
 public:
  using SizeFn = std::function<size_t(const V&)>;

  LruCache(size_t capacity_bytes, SizeFn size_of)
      : capacity_bytes_(capacity_bytes), size_of_(std::move(size_of)) {}

  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // The value for `key`, now the most recently used; null on a miss.
  std::shared_ptr<const V> Get(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->value;
  }

  // Inserts or replaces `key`, then evicts least recently used entries until
  // the cache fits its capacity again.
  void Insert(const std::string& key, std::shared_ptr<const V> value) {
    if (value == nullptr) return;
    const size_t bytes = size_of_(*value);
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it != index_.end()) RemoveLocked(it);
    if (bytes > capacity_bytes_) return;
    entries_.push_front(Entry{key, std::move(value), bytes});
    index_.emplace(key, entries_.begin());
    bytes_ += bytes;
    while (bytes_ > capacity_bytes_) {
      auto last = index_.find(entries_.back().key);
      RemoveLocked(last);
      ++evictions_;
    }
  }

  // Drops `key` if present.
  void Erase(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it != index_.end()) RemoveLocked(it);
  }

  // Drops everything (values stay alive for their holders).
  void Clear() {
    absl::MutexLock lock(&mu_);
    index_.clear();
    entries_.clear();
    bytes_ = 0;
  }

  size_t bytes() const {
    absl::MutexLock lock(&mu_);
    return bytes_;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }
  // Entries dropped to make room, since construction.
  uint64_t evictions() const {
    absl::MutexLock lock(&mu_);
    return evictions_;
  }
  size_t capacity_bytes() const { return capacity_bytes_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const V> value;
    size_t bytes;
  };
  using List = std::list<Entry>;
  using Index = absl::flat_hash_map<std::string, typename List::iterator>;

  void RemoveLocked(typename Index::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bytes_ -= it->second->bytes;
    entries_.erase(it->second);
    index_.erase(it);
  }

  const size_t capacity_bytes_;
  const SizeFn size_of_;
  mutable absl::Mutex mu_;
  List entries_ ABSL_GUARDED_BY(mu_);  // most recently used first
  Index index_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pto::server

#endif  // PTO_SERVER_LRU_CACHE_H_
