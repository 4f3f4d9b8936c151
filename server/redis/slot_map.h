// Which node serves each of the 16384 slots: the cluster's topology as
// CLUSTER SLOTS reports it.
//
//   absl::StatusOr<SlotMap> map = SlotMap::FromClusterSlots(reply, asked);
//   const SlotMap::Shard* shard = map->ShardFor(KeySlot(key));
//   shard->primary;     // "10.0.0.5:6379": writes, and reads by default
//   shard->replicas;    // reads when the client is configured for them
//
// A MOVED redirect patches one slot (Move) until the next full refresh.
#ifndef PTO_SERVER_REDIS_SLOT_MAP_H_
#define PTO_SERVER_REDIS_SLOT_MAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/redis/reply.h"

namespace pto::server::redis {

class SlotMap {
 public:
  struct Shard {
    std::string primary;  // "host:port"
    std::vector<std::string> replicas;
  };

  // An empty map: every slot unassigned.
  SlotMap();

  // Parses a CLUSTER SLOTS reply: an array of [first slot, last slot,
  // primary, replica...], each node [host, port, id, ...]. A node whose host
  // is empty is the node that was asked, `asked_host`; one whose host is "?"
  // (unknown endpoint) is skipped. INVALID_ARGUMENT, naming what is wrong,
  // when the reply is not of that shape (slots out of range, ports out of
  // range, a range with no usable primary).
  static absl::StatusOr<SlotMap> FromClusterSlots(const Reply& reply,
                                                  const std::string& asked_host);

  // The shard serving `slot`; null when the slot is unassigned.
  const Shard* ShardFor(int slot) const;

  // A MOVED redirect: `slot` is served by primary `address` now.
  void Move(int slot, const std::string& address);

  // Every node address (primaries and replicas), once each.
  std::vector<std::string> Nodes() const;

  // Assigned slots.
  int assigned_slots() const;

  const std::vector<Shard>& shards() const { return shards_; }

 private:
  std::vector<Shard> shards_;
  // Index into shards_ per slot; -1: unassigned.
  std::vector<int16_t> slot_to_shard_;
};

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_SLOT_MAP_H_
