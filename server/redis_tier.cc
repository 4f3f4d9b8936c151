#include "server/redis_tier.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/redis_entry.h"
#include "spdlog/spdlog.h"

namespace pto::server {
namespace {

std::string KeyPrefix(const std::string& key) { return key.substr(0, 12); }

double SecondsSince(absl::Time start) {
  return absl::ToDoubleSeconds(absl::Now() - start);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedisTier>> RedisTier::Create(
    RedisTierOptions options, Metrics* metrics) {
  if (options.signing_key.empty()) {
    return absl::InvalidArgumentError(
        "the Redis tier needs the cluster's signing key (--signing_key_file): "
        "nothing read from Redis is served unless it verifies");
  }
  // A reply holds at most one entry (and a few bytes of framing).
  options.cluster.connection.max_reply_bytes = options.max_entry_bytes + 1024;
  absl::StatusOr<std::unique_ptr<redis::ClusterClient>> client =
      redis::ClusterClient::Create(options.cluster);
  if (!client.ok()) return client.status();
  if (metrics != nullptr) metrics->EnableRedisTier();
  return std::unique_ptr<RedisTier>(
      new RedisTier(std::move(options), *std::move(client), metrics));
}

RedisTier::RedisTier(RedisTierOptions options,
                     std::unique_ptr<redis::ClusterClient> client,
                     Metrics* metrics)
    : options_(std::move(options)),
      client_(std::move(client)),
      metrics_(metrics) {
  if (metrics_ != nullptr) metrics_->SetRedisUp(true);
  writer_ = std::thread([this] { WriterLoop(); });
}

RedisTier::~RedisTier() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped_ += queue_.size();
    queue_.clear();
  }
  writer_.join();
}

void RedisTier::NoteReachable(bool reachable, const absl::Status& error) {
  if (metrics_ != nullptr) metrics_->SetRedisUp(reachable);
  if (reachable_.exchange(reachable) == reachable) return;
  if (reachable) {
    spdlog::info("Redis Cluster reachable again");
  } else {
    spdlog::warn(
        "Redis Cluster unreachable ({}); serving from local tiers and "
        "compiling until it returns",
        error.ToString());
  }
}

absl::StatusOr<CompiledKernel> RedisTier::Get(const std::string& key) {
  const absl::Time start = absl::Now();
  const std::string redis_key = RedisKey(key);
  absl::StatusOr<std::optional<std::string>> value = client_->Get(redis_key);
  if (absl::IsResourceExhausted(value.status())) {
    // Larger than any entry this tier writes.
    value = std::optional<std::string>(std::string("oversized"));
  }
  if (!value.ok()) {
    ++errors_;
    if (metrics_ != nullptr) {
      metrics_->RecordRedisOperation("get", "error", SecondsSince(start));
    }
    NoteReachable(false, value.status());
    return value.status();
  }
  NoteReachable(true, absl::OkStatus());
  if (!value->has_value()) {
    ++misses_;
    if (metrics_ != nullptr) {
      metrics_->RecordRedisOperation("get", "miss", SecondsSince(start));
    }
    return absl::NotFoundError("not in Redis");
  }
  absl::StatusOr<CompiledKernel> kernel =
      DecodeRedisEntry(options_.signing_key, key, **value);
  if (!kernel.ok()) {
    ++corrupt_;
    if (metrics_ != nullptr) {
      metrics_->RecordRedisOperation("get", "corrupt", SecondsSince(start));
      metrics_->RecordRedisCorruptEntry();
    }
    spdlog::error("Redis entry {} refused and deleted: {}", KeyPrefix(key),
                  std::string(kernel.status().message()));
    Enqueue(Write{redis_key, ""});
    return absl::NotFoundError("Redis entry did not verify; deleted");
  }
  ++hits_;
  if (metrics_ != nullptr) {
    metrics_->RecordRedisOperation("get", "hit", SecondsSince(start));
  }
  return kernel;
}

void RedisTier::PutAsync(const std::string& key,
                         const CompiledKernel& kernel) {
  std::string value = EncodeRedisEntry(options_.signing_key, key, kernel);
  if (value.size() > options_.max_entry_bytes) {
    ++dropped_;
    if (metrics_ != nullptr) metrics_->RecordRedisOperation("set", "dropped", 0);
    return;
  }
  Enqueue(Write{RedisKey(key), std::move(value)});
}

void RedisTier::Discard(const std::string& key) {
  Enqueue(Write{RedisKey(key), ""});
}

void RedisTier::Enqueue(Write write) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.max_queued_writes) {
    ++dropped_;
    if (metrics_ != nullptr) metrics_->RecordRedisOperation("set", "dropped", 0);
    return;
  }
  queue_.push_back(std::move(write));
}

void RedisTier::WriterLoop() {
  while (true) {
    Write write;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      mu_.Await(absl::Condition(
          +[](RedisTier* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) {
            return t->stopping_ || !t->queue_.empty();
          },
          this));
      if (stopping_) return;
      write = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
    }
    const absl::Time start = absl::Now();
    absl::Status status;
    if (write.value.empty()) {
      status = client_->Del(write.redis_key).status();
    } else {
      status = client_->Set(write.redis_key, write.value, options_.ttl);
    }
    if (!status.ok()) {
      ++errors_;
      if (!write.value.empty() && metrics_ != nullptr) {
        metrics_->RecordRedisOperation("set", "error", SecondsSince(start));
      }
      NoteReachable(false, status);
      continue;
    }
    NoteReachable(true, absl::OkStatus());
    if (!write.value.empty()) {
      ++writes_;
      if (metrics_ != nullptr) {
        metrics_->RecordRedisOperation("set", "ok", SecondsSince(start));
      }
    }
  }
}

void RedisTier::WaitForWrites() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](RedisTier* t) ABSL_EXCLUSIVE_LOCKS_REQUIRED(t->mu_) {
        return t->stopping_ || (t->queue_.empty() && !t->writing_);
      },
      this));
}

RedisTier::Stats RedisTier::stats() const {
  Stats s;
  s.hits = hits_.load();
  s.misses = misses_.load();
  s.corrupt = corrupt_.load();
  s.errors = errors_.load();
  s.writes = writes_.load();
  s.dropped = dropped_.load();
  return s;
}

}  // namespace pto::server
