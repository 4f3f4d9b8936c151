#include "server/redis_tier.h"

#include <random>
#include <utility>
#include <vector>

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

// A lease's token: 128 random bits, hex.
std::string NewToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&token, absl::Hex(random(), absl::kZeroPad8));
  }
  return token;
}

// Compare-and-renew and compare-and-delete of a lease: only its holder's
// token may extend or release it.
constexpr char kRenewScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
constexpr char kReleaseScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";
// Max-merge of the generation: raises it to ARGV[1] if lower, returns it.
constexpr char kGenerationScript[] =
    "local c = tonumber(redis.call('get', KEYS[1]) or '0') or 0 "
    "local l = tonumber(ARGV[1]) "
    "if l > c then redis.call('set', KEYS[1], ARGV[1]) return l end "
    "return c";

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
  renewer_ = std::thread([this] { RenewerLoop(); });
}

RedisTier::~RedisTier() {
  StopWaiting();
  {
    absl::MutexLock lock(&lease_mu_);
    stop_renewing_ = true;
  }
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    dropped_ += queue_.size();
    queue_.clear();
  }
  writer_.join();
  renewer_.join();
}

void RedisTier::StopWaiting() {
  absl::MutexLock lock(&lease_mu_);
  stop_waiting_ = true;
}

size_t RedisTier::leases_held() const {
  absl::MutexLock lock(&lease_mu_);
  return held_.size();
}

bool RedisTier::EntryExists(const std::string& key) {
  // The holder writes the kernel before it releases the lease; EXISTS on
  // the primary sees it before a replica would.
  absl::StatusOr<redis::Reply> exists =
      client_->Command(RedisKey(key), {"EXISTS", RedisKey(key)});
  return exists.ok() && exists->type == redis::Reply::kInteger &&
         exists->integer > 0;
}

bool RedisTier::AwaitCompileLease(const std::string& key) {
  if (options_.lease_ttl <= absl::ZeroDuration()) return false;
  const std::string lease_key = LeaseKey(key);
  const std::string token = NewToken();
  const absl::Time give_up = absl::Now() + options_.lease_wait;
  bool saw_holder = false;
  absl::Duration pause = options_.lease_poll_min;
  while (true) {
    absl::StatusOr<bool> taken =
        client_->SetIfAbsent(lease_key, token, options_.lease_ttl);
    if (!taken.ok()) {
      NoteReachable(false, taken.status());
      if (metrics_ != nullptr) metrics_->RecordRedisLease("error");
      return false;
    }
    NoteReachable(true, absl::OkStatus());
    if (*taken) {
      {
        absl::MutexLock lock(&lease_mu_);
        held_[key] = token;
      }
      // The kernel may have been stored between the caller's lookup and
      // now (its lease released just before ours was taken).
      if (EntryExists(key)) {
        ReleaseCompileLease(key);
        if (metrics_ != nullptr) metrics_->RecordRedisLease("waited");
        return true;
      }
      // Taken after another's lease went without a kernel: its holder failed
      // or vanished.
      if (metrics_ != nullptr) {
        metrics_->RecordRedisLease(saw_holder ? "expired" : "taken");
      }
      return false;
    }
    saw_holder = true;
    if (EntryExists(key)) {
      if (metrics_ != nullptr) metrics_->RecordRedisLease("waited");
      return true;
    }
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      spdlog::warn("waited {} for another ptod's compile of {}; compiling",
                   absl::FormatDuration(options_.lease_wait), KeyPrefix(key));
      if (metrics_ != nullptr) metrics_->RecordRedisLease("timeout");
      return false;
    }
    absl::MutexLock lock(&lease_mu_);
    if (lease_mu_.AwaitWithTimeout(absl::Condition(&stop_waiting_),
                                   std::min(pause, give_up - now))) {
      return false;  // shutting down
    }
    pause = std::min(pause * 2, options_.lease_poll_max);
  }
}

void RedisTier::ReleaseCompileLease(const std::string& key) {
  std::string token;
  {
    absl::MutexLock lock(&lease_mu_);
    auto it = held_.find(key);
    if (it == held_.end()) return;
    token = std::move(it->second);
    held_.erase(it);
  }
  Enqueue(Write{Write::kReleaseLease, LeaseKey(key), std::move(token)});
}

void RedisTier::RenewerLoop() {
  if (options_.lease_ttl <= absl::ZeroDuration()) return;
  while (true) {
    std::vector<std::pair<std::string, std::string>> held;
    {
      absl::MutexLock lock(&lease_mu_);
      if (lease_mu_.AwaitWithTimeout(absl::Condition(&stop_renewing_),
                                     options_.lease_ttl / 3)) {
        return;
      }
      held.assign(held_.begin(), held_.end());
    }
    const std::string ttl_ms =
        absl::StrCat(absl::ToInt64Milliseconds(options_.lease_ttl));
    for (const auto& [key, token] : held) {
      const std::string lease_key = LeaseKey(key);
      absl::StatusOr<redis::Reply> renewed = client_->Command(
          lease_key, {"EVAL", kRenewScript, "1", lease_key, token, ttl_ms});
      if (renewed.ok() && renewed->type == redis::Reply::kInteger &&
          renewed->integer == 0) {
        // Lost (it expired while Redis was unreachable): no longer ours.
        absl::MutexLock lock(&lease_mu_);
        auto it = held_.find(key);
        if (it != held_.end() && it->second == token) held_.erase(it);
      }
    }
  }
}

absl::StatusOr<uint64_t> RedisTier::SyncGeneration(uint64_t local) {
  const std::string& key = options_.generation_key;
  absl::StatusOr<redis::Reply> reply = client_->Command(
      key, {"EVAL", kGenerationScript, "1", key, absl::StrCat(local)});
  if (!reply.ok()) {
    NoteReachable(false, reply.status());
    return reply.status();
  }
  NoteReachable(true, absl::OkStatus());
  if (reply->type != redis::Reply::kInteger || reply->integer < 0) {
    return absl::InternalError(absl::StrCat(
        "Redis ", key, ": the generation is not a number: ",
        reply->type == redis::Reply::kError ? reply->str.substr(0, 200)
                                            : "unexpected reply"));
  }
  return static_cast<uint64_t>(reply->integer);
}

absl::StatusOr<uint64_t> RedisTier::DeleteAll() {
  absl::StatusOr<std::vector<std::string>> keys =
      client_->ScanKeys(options_.key_prefix + "*");
  if (!keys.ok()) {
    NoteReachable(false, keys.status());
    return keys.status();
  }
  uint64_t deleted = 0;
  for (const std::string& key : *keys) {
    absl::StatusOr<bool> existed = client_->Del(key);
    if (!existed.ok()) {
      NoteReachable(false, existed.status());
      return absl::Status(
          existed.status().code(),
          absl::StrCat("deleted ", deleted, " of ", keys->size(),
                       " Redis entries, then: ", existed.status().message()));
    }
    deleted += *existed ? 1 : 0;
  }
  NoteReachable(true, absl::OkStatus());
  return deleted;
}

void RedisTier::NoteReachable(bool reachable, const absl::Status& error) {
  if (metrics_ != nullptr) metrics_->SetRedisUp(reachable);
  const absl::Time now = absl::Now();
  // One warning per kLogEvery while failures go on (a shard down fails only
  // its keys: successes and failures interleave), one notice once a
  // kLogEvery has passed without any.
  constexpr absl::Duration kLogEvery = absl::Seconds(10);
  absl::MutexLock lock(&log_mu_);
  if (!reachable) {
    ++failures_unlogged_;
    last_failure_ = now;
    if (!down_logged_ || now - last_down_log_ >= kLogEvery) {
      spdlog::warn(
          "Redis Cluster: {} ({} failures since the last report); serving "
          "from local tiers and compiling meanwhile",
          error.ToString(), failures_unlogged_);
      down_logged_ = true;
      last_down_log_ = now;
      failures_unlogged_ = 0;
    }
  } else if (down_logged_ && now - last_failure_ >= kLogEvery) {
    spdlog::info("Redis Cluster reachable again");
    down_logged_ = false;
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
    // Deleted now (one round trip, on this rare path) so that the next read
    // does not meet it again.
    absl::StatusOr<bool> deleted = client_->Del(redis_key);
    if (!deleted.ok()) ++errors_;
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
    if (metrics_ != nullptr) {
      metrics_->RecordRedisOperation("set", "dropped", 0);
    }
    return;
  }
  Enqueue(Write{Write::kSet, RedisKey(key), std::move(value)});
}

void RedisTier::Discard(const std::string& key) {
  Enqueue(Write{Write::kDelete, RedisKey(key), ""});
}

void RedisTier::Enqueue(Write write) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.max_queued_writes) {
    ++dropped_;
    if (metrics_ != nullptr) {
      metrics_->RecordRedisOperation("set", "dropped", 0);
    }
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
    switch (write.kind) {
      case Write::kSet:
        status = client_->Set(write.redis_key, write.value, options_.ttl);
        break;
      case Write::kDelete:
        status = client_->Del(write.redis_key).status();
        break;
      case Write::kReleaseLease:
        status = client_
                     ->Command(write.redis_key,
                               {"EVAL", kReleaseScript, "1", write.redis_key,
                                write.value})
                     .status();
        break;
    }
    const bool is_set = write.kind == Write::kSet;
    if (!status.ok()) {
      ++errors_;
      if (is_set && metrics_ != nullptr) {
        metrics_->RecordRedisOperation("set", "error", SecondsSince(start));
      }
      NoteReachable(false, status);
      continue;
    }
    NoteReachable(true, absl::OkStatus());
    if (is_set) {
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
