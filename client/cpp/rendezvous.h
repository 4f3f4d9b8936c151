// Which ptod replica a compile goes to: rendezvous (highest-random-weight)
// hashing of the request's routing key over the replicas' addresses.
//
//   std::string key = RoutingKey(request);
//   std::vector<size_t> order = RendezvousOrder(addresses, key);
//   // addresses[order[0]] first; on UNAVAILABLE, addresses[order[1]], ...
//
// Every replica gets a weight per key, the first 8 bytes of
// SHA-256(address NUL key); the order is by weight, highest first (ties, which
// need a SHA-256 collision, by address). So every client that knows the same
// replicas sends the same request to the same replica, keys spread evenly,
// and removing a replica moves only the keys it was first for (each to its
// own second choice); adding one takes about 1/N of the keys, and nothing
// else moves.
//
// The routing key is SHA-256 of the request's deterministic serialization
// (graph, target, options). ptod keys its cache with the compiler's key,
// which needs the compiler (graph import, canonical encoding, the compiler
// fingerprint of the server's toolchain): a client cannot compute it without
// linking the compiler and knowing the server's toolchain. The request bytes
// are what ptod's own key memo (server/key_memo.h) maps to that key: equal
// bytes always have equal keys, so identical compiles from many ranks (the
// same program building the same graph) converge on one replica. Two
// requests with different bytes and the same compiler key (e.g. symbols or
// values named differently) may land on two replicas; the cluster tier's
// lease still compiles them once.
#ifndef PTO_CLIENT_CPP_RENDEZVOUS_H_
#define PTO_CLIENT_CPP_RENDEZVOUS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "pto/v1/compile_service.pb.h"

namespace pto::client {

// SHA-256 (32 raw bytes) of `request`'s deterministic serialization.
std::string RoutingKey(const pto::v1::CompileRequest& request);

// The weight of `address` for `key`.
uint64_t RendezvousWeight(absl::string_view address, absl::string_view key);

// Indices into `addresses`, highest weight for `key` first.
std::vector<size_t> RendezvousOrder(const std::vector<std::string>& addresses,
                                    absl::string_view key);

}  // namespace pto::client

#endif  // PTO_CLIENT_CPP_RENDEZVOUS_H_
