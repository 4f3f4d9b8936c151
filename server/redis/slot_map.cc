#include "server/redis/slot_map.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/redis/key_slot.h"

namespace pto::server::redis {
namespace {

// A node entry [host, port, id, ...] as "host:port"; "" for an unknown
// endpoint ("?"). False when malformed.
bool NodeAddress(const Reply& node, const std::string& asked_host,
                 std::string* address) {
  if (node.type != Reply::kArray || node.elements.size() < 2) return false;
  const Reply& host = node.elements[0];
  const Reply& port = node.elements[1];
  if (host.type != Reply::kString || port.type != Reply::kInteger) {
    return false;
  }
  if (port.integer < 1 || port.integer > 65535) return false;
  if (host.str == "?") {
    address->clear();
    return true;
  }
  const std::string& h = host.str.empty() ? asked_host : host.str;
  if (h.size() > 255) return false;
  *address = h.find(':') != std::string::npos
                 ? absl::StrCat("[", h, "]:", port.integer)
                 : absl::StrCat(h, ":", port.integer);
  return true;
}

}  // namespace

SlotMap::SlotMap() : slot_to_shard_(kSlots, -1) {}

absl::StatusOr<SlotMap> SlotMap::FromClusterSlots(
    const Reply& reply, const std::string& asked_host) {
  if (reply.type != Reply::kArray) {
    return absl::InvalidArgumentError("CLUSTER SLOTS: reply is not an array");
  }
  if (reply.elements.size() > kSlots) {
    return absl::InvalidArgumentError("CLUSTER SLOTS: more ranges than slots");
  }
  SlotMap map;
  for (const Reply& range : reply.elements) {
    if (range.type != Reply::kArray || range.elements.size() < 3 ||
        range.elements[0].type != Reply::kInteger ||
        range.elements[1].type != Reply::kInteger) {
      return absl::InvalidArgumentError(
          "CLUSTER SLOTS: a range is not [first, last, primary, ...]");
    }
    const int64_t first = range.elements[0].integer;
    const int64_t last = range.elements[1].integer;
    if (first < 0 || last >= kSlots || first > last) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CLUSTER SLOTS: slot range ", first, "-", last, " out of range"));
    }
    Shard shard;
    for (size_t i = 2; i < range.elements.size(); ++i) {
      std::string address;
      if (!NodeAddress(range.elements[i], asked_host, &address)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "CLUSTER SLOTS: malformed node in range ", first, "-", last));
      }
      if (address.empty()) continue;
      if (i == 2) {
        shard.primary = address;
      } else {
        shard.replicas.push_back(address);
      }
    }
    if (shard.primary.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CLUSTER SLOTS: range ", first, "-", last, " has no known primary"));
    }
    // Ranges of one primary share a shard.
    int index = -1;
    for (size_t s = 0; s < map.shards_.size(); ++s) {
      if (map.shards_[s].primary == shard.primary) index = static_cast<int>(s);
    }
    if (index < 0) {
      index = static_cast<int>(map.shards_.size());
      map.shards_.push_back(std::move(shard));
    }
    for (int64_t slot = first; slot <= last; ++slot) {
      map.slot_to_shard_[slot] = static_cast<int16_t>(index);
    }
  }
  return map;
}

const SlotMap::Shard* SlotMap::ShardFor(int slot) const {
  if (slot < 0 || slot >= kSlots || slot_to_shard_[slot] < 0) return nullptr;
  return &shards_[slot_to_shard_[slot]];
}

void SlotMap::Move(int slot, const std::string& address) {
  if (slot < 0 || slot >= kSlots) return;
  for (size_t s = 0; s < shards_.size(); ++s) {
    if (shards_[s].primary == address) {
      slot_to_shard_[slot] = static_cast<int16_t>(s);
      return;
    }
  }
  if (shards_.size() >= kSlots) return;
  shards_.push_back(Shard{address, {}});
  slot_to_shard_[slot] = static_cast<int16_t>(shards_.size() - 1);
}

std::vector<std::string> SlotMap::Nodes() const {
  std::vector<std::string> nodes;
  absl::flat_hash_set<std::string> seen;
  for (const Shard& shard : shards_) {
    if (seen.insert(shard.primary).second) nodes.push_back(shard.primary);
    for (const std::string& r : shard.replicas) {
      if (seen.insert(r).second) nodes.push_back(r);
    }
  }
  return nodes;
}

int SlotMap::assigned_slots() const {
  return static_cast<int>(
      std::count_if(slot_to_shard_.begin(), slot_to_shard_.end(),
                    [](int16_t s) { return s >= 0; }));
}

}  // namespace pto::server::redis
