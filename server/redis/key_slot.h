// Redis Cluster key slots, as the cluster specification defines them:
//
//   KeySlot("foo")                    == Crc16("foo") % 16384
//   KeySlot("{user1000}.following")   == KeySlot("user1000")   // hash tag
//
// A hash tag is the part between the first "{" and the first "}" after it,
// when that part is not empty; keys with the same tag share a slot (and so a
// node). Crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
// reflection): Crc16("123456789") == 0x31C3.
#ifndef PTO_SERVER_REDIS_KEY_SLOT_H_
#define PTO_SERVER_REDIS_KEY_SLOT_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace pto::server::redis {

// The number of slots in a Redis Cluster.
inline constexpr int kSlots = 16384;

uint16_t Crc16(absl::string_view bytes);

// The part of `key` that is hashed: its hash tag if it has a non-empty one,
// else the whole key.
absl::string_view HashedPart(absl::string_view key);

// The slot `key` belongs to, in [0, kSlots).
int KeySlot(absl::string_view key);

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_KEY_SLOT_H_
