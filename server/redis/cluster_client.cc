#include "server/redis/cluster_client.h"

#include <algorithm>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/redis/key_slot.h"

namespace pto::server::redis {
namespace {

PoolOptions PoolOptionsOf(const ClusterOptions& options) {
  PoolOptions pool;
  pool.connection = options.connection;
  // READONLY is harmless on a primary: every connection may serve reads.
  pool.connection.readonly = options.read_from_replicas;
  pool.max_idle_per_node = options.max_idle_per_node;
  pool.down_min = options.down_min;
  pool.down_max = options.down_max;
  return pool;
}

size_t RandomIndex(size_t n) {
  thread_local std::minstd_rand random(std::random_device{}());
  return std::uniform_int_distribution<size_t>(0, n - 1)(random);
}

absl::Status UnexpectedReply(const Reply& reply, absl::string_view command) {
  if (reply.type == Reply::kError) {
    return absl::InternalError(
        absl::StrCat("Redis ", command, ": ", reply.str.substr(0, 200)));
  }
  return absl::InternalError(absl::StrCat("Redis ", command,
                                          ": unexpected reply type ",
                                          static_cast<int>(reply.type)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterClient>> ClusterClient::Create(
    ClusterOptions options) {
  if (options.seeds.empty()) {
    return absl::InvalidArgumentError("Redis Cluster: no seed nodes given");
  }
  for (const std::string& seed : options.seeds) {
    std::string host;
    int port = 0;
    if (!SplitAddress(seed, &host, &port)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Redis Cluster: seed \"", seed, "\" is not host:port"));
    }
  }
  options.max_attempts = std::max(options.max_attempts, 1);
  return std::unique_ptr<ClusterClient>(new ClusterClient(std::move(options)));
}

ClusterClient::ClusterClient(ClusterOptions options)
    : options_(std::move(options)),
      pool_(PoolOptionsOf(options_)),
      map_(std::make_shared<const SlotMap>()) {}

absl::Status ClusterClient::Refresh() {
  absl::MutexLock refreshing(&refresh_mu_);
  std::vector<std::string> candidates = slot_map()->Nodes();
  for (const std::string& seed : options_.seeds) {
    if (std::find(candidates.begin(), candidates.end(), seed) ==
        candidates.end()) {
      candidates.push_back(seed);
    }
  }
  // Spread the load of refreshes over the nodes.
  std::shuffle(candidates.begin(), candidates.end(),
               std::minstd_rand(std::random_device{}()));
  std::vector<std::string> errors;
  for (const std::string& node : candidates) {
    absl::StatusOr<std::unique_ptr<Connection>> c = pool_.Borrow(node);
    if (!c.ok()) {
      errors.push_back(std::string(c.status().message()));
      continue;
    }
    absl::StatusOr<Reply> reply = (*c)->Command({"CLUSTER", "SLOTS"});
    pool_.Return(*std::move(c));
    // A reply over the size bound: the node is fine, the value is not.
    if (absl::IsResourceExhausted(reply.status())) return reply.status();
    if (!reply.ok()) {
      ++node_failures_;
      errors.push_back(std::string(reply.status().message()));
      continue;
    }
    if (reply->type == Reply::kError) {  // e.g. NOAUTH, or not a cluster
      errors.push_back(absl::StrCat(node, ": ", reply->str.substr(0, 200)));
      continue;
    }
    std::string host;
    int port = 0;
    SplitAddress(node, &host, &port);
    absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(*reply, host);
    if (!map.ok() || map->assigned_slots() == 0) {
      errors.push_back(absl::StrCat(
          node, ": ",
          map.ok() ? "no slots assigned"
                   : std::string(map.status().message())));
      continue;
    }
    {
      absl::MutexLock lock(&map_mu_);
      map_ = std::make_shared<const SlotMap>(*std::move(map));
      last_refresh_ = absl::Now();
    }
    stale_ = false;
    ++refreshes_;
    return absl::OkStatus();
  }
  {
    absl::MutexLock lock(&map_mu_);
    last_refresh_ = absl::Now();
  }
  return absl::UnavailableError(
      absl::StrCat("Redis Cluster: no node gave a slot map: ",
                   absl::StrJoin(errors, "; ")));
}

void ClusterClient::MaybeRefresh() {
  {
    absl::MutexLock lock(&map_mu_);
    if (absl::Now() - last_refresh_ < options_.min_refresh_interval) return;
  }
  if (!refresh_mu_.TryLock()) return;  // another thread is loading it
  refresh_mu_.Unlock();
  Refresh().IgnoreError();  // commands report their own failures
}

bool ClusterClient::MapIsOld() const {
  absl::MutexLock lock(&map_mu_);
  return absl::Now() - last_refresh_ > options_.refresh_interval;
}

std::shared_ptr<const SlotMap> ClusterClient::slot_map() const {
  absl::MutexLock lock(&map_mu_);
  return map_;
}

std::string ClusterClient::PickNode(const SlotMap& map, int slot,
                                    bool read) const {
  const SlotMap::Shard* shard = map.ShardFor(slot);
  if (shard == nullptr) return "";
  if (read && options_.read_from_replicas && !shard->replicas.empty()) {
    std::vector<const std::string*> up;
    for (const std::string& r : shard->replicas) {
      if (!pool_.IsDown(r)) up.push_back(&r);
    }
    if (!up.empty()) return *up[RandomIndex(up.size())];
  }
  return shard->primary;
}

absl::StatusOr<Reply> ClusterClient::Command(
    absl::string_view key, const std::vector<std::string>& argv, bool read) {
  const absl::Time deadline = absl::Now() + options_.operation_timeout;
  const int slot = KeySlot(key);
  std::string ask_target;
  absl::Duration pause = absl::Milliseconds(10);
  absl::Status last = absl::UnavailableError("Redis Cluster: not tried");
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0 && absl::Now() >= deadline) break;
    if (stale_ || (attempt == 0 && MapIsOld())) MaybeRefresh();
    std::string node = ask_target;
    if (node.empty()) {
      node = PickNode(*slot_map(), slot, read);
      if (node.empty()) {
        // No map yet (or the slot is unassigned): load one now, and report
        // why none could be loaded if that fails.
        absl::Status refreshed = Refresh();
        node = PickNode(*slot_map(), slot, read);
        if (node.empty()) {
          last = !refreshed.ok()
                     ? refreshed
                     : absl::UnavailableError(absl::StrCat(
                           "Redis Cluster: slot ", slot,
                           " is not served by any node"));
          stale_ = true;
          continue;
        }
      }
    }
    absl::StatusOr<std::unique_ptr<Connection>> c = pool_.Borrow(node);
    if (!c.ok()) {
      last = c.status();
      stale_ = true;
      continue;
    }
    absl::StatusOr<Reply> reply;
    if (!ask_target.empty()) {
      absl::StatusOr<std::vector<Reply>> replies =
          (*c)->Pipeline({{"ASKING"}, argv});
      if (replies.ok()) {
        reply = std::move((*replies)[1]);
      } else {
        reply = replies.status();
      }
      ask_target.clear();
    } else {
      reply = (*c)->Command(argv);
    }
    pool_.Return(*std::move(c));
    // A reply over the size bound: the node is fine, the value is not.
    if (absl::IsResourceExhausted(reply.status())) return reply.status();
    if (!reply.ok()) {
      ++node_failures_;
      last = reply.status();
      stale_ = true;
      continue;
    }
    if (reply->type == Reply::kError) {
      if (std::optional<Redirect> to = ParseRedirect(reply->str)) {
        last = absl::UnavailableError(
            absl::StrCat("Redis Cluster: redirected too often (last: ",
                         reply->str, ")"));
        if (to->ask) {
          ++ask_;
          ask_target = to->address;
        } else {
          ++moved_;
          absl::MutexLock lock(&map_mu_);
          auto patched = std::make_shared<SlotMap>(*map_);
          patched->Move(to->slot, to->address);
          map_ = std::move(patched);
          stale_ = true;
        }
        continue;
      }
      if (IsTransientError(reply->str)) {
        last = absl::UnavailableError(
            absl::StrCat("Redis node ", node, ": ", reply->str.substr(0, 200)));
        stale_ = true;
        absl::SleepFor(std::min(pause, deadline - absl::Now()));
        pause *= 2;
        continue;
      }
    }
    return reply;
  }
  return last;
}

absl::StatusOr<std::optional<std::string>> ClusterClient::Get(
    const std::string& key) {
  absl::StatusOr<Reply> reply = Command(key, {"GET", key}, /*read=*/true);
  if (!reply.ok()) return reply.status();
  if (reply->type == Reply::kNil) return std::nullopt;
  if (reply->type != Reply::kString) return UnexpectedReply(*reply, "GET");
  return std::move(reply->str);
}

absl::Status ClusterClient::Set(const std::string& key,
                                const std::string& value, absl::Duration ttl) {
  std::vector<std::string> argv = {"SET", key, value};
  if (ttl > absl::ZeroDuration()) {
    argv.push_back("PX");
    argv.push_back(absl::StrCat(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl))));
  }
  absl::StatusOr<Reply> reply = Command(key, argv);
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::kStatus) return UnexpectedReply(*reply, "SET");
  return absl::OkStatus();
}

absl::StatusOr<bool> ClusterClient::SetIfAbsent(const std::string& key,
                                                const std::string& value,
                                                absl::Duration ttl) {
  absl::StatusOr<Reply> reply = Command(
      key, {"SET", key, value, "NX", "PX",
            absl::StrCat(std::max<int64_t>(1, absl::ToInt64Milliseconds(ttl)))});
  if (!reply.ok()) return reply.status();
  if (reply->type == Reply::kNil) return false;
  if (reply->type != Reply::kStatus) return UnexpectedReply(*reply, "SET NX");
  return true;
}

absl::StatusOr<bool> ClusterClient::Del(const std::string& key) {
  absl::StatusOr<Reply> reply = Command(key, {"DEL", key});
  if (!reply.ok()) return reply.status();
  if (reply->type != Reply::kInteger) return UnexpectedReply(*reply, "DEL");
  return reply->integer > 0;
}

absl::StatusOr<std::vector<std::string>> ClusterClient::ScanKeys(
    const std::string& pattern, int count) {
  if (slot_map()->assigned_slots() == 0 || stale_) {
    absl::Status refreshed = Refresh();
    if (!refreshed.ok()) return refreshed;
  }
  std::vector<std::string> primaries;
  for (const SlotMap::Shard& shard : slot_map()->shards()) {
    if (std::find(primaries.begin(), primaries.end(), shard.primary) ==
        primaries.end()) {
      primaries.push_back(shard.primary);
    }
  }
  std::vector<std::string> keys;
  for (const std::string& node : primaries) {
    std::string cursor = "0";
    do {
      absl::StatusOr<std::unique_ptr<Connection>> c = pool_.Borrow(node);
      if (!c.ok()) return c.status();
      absl::StatusOr<Reply> reply =
          (*c)->Command({"SCAN", cursor, "MATCH", pattern, "COUNT",
                         absl::StrCat(std::max(count, 1))});
      pool_.Return(*std::move(c));
      if (!reply.ok()) {
        stale_ = true;
        return reply.status();
      }
      if (reply->type != Reply::kArray || reply->elements.size() != 2 ||
          reply->elements[1].type != Reply::kArray) {
        return absl::UnavailableError(absl::StrCat(
            "Redis node ", node, ": SCAN: ", UnexpectedReply(*reply, "SCAN")
                                                 .message()));
      }
      cursor = reply->elements[0].str;
      for (Reply& key : reply->elements[1].elements) {
        keys.push_back(std::move(key.str));
      }
    } while (cursor != "0");
  }
  return keys;
}

ClusterClient::Stats ClusterClient::stats() const {
  Stats s;
  s.moved = moved_.load();
  s.ask = ask_.load();
  s.refreshes = refreshes_.load();
  s.node_failures = node_failures_.load();
  return s;
}

}  // namespace pto::server::redis
