// The ptod replicas a client sends to, from an address spec:
//
//   "ptod:7070"                       one replica (gRPC resolves the name)
//   "10.0.0.5:7070,10.0.0.6:7070"     a list, each entry a replica
//   "dns:///ptod-headless.ns.svc:7070"
//                                     every address the name resolves to
//                                     (getaddrinfo, IPv4 and IPv6), each a
//                                     replica: a Kubernetes headless Service
//
// Entries may be mixed; duplicates are dropped. Every client that resolves
// the same spec to the same replicas routes a request to the same one
// (client/cpp/rendezvous.h), so the replicas are identified by their
// address text, not by the order they came in.
#ifndef PTO_CLIENT_CPP_REPLICAS_H_
#define PTO_CLIENT_CPP_REPLICAS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace pto::client {

struct Replica {
  // "host:port" or "ip:port" ("[v6]:port"): what the channel connects to and
  // what rendezvous hashing weighs.
  std::string address;
  // For an address resolved from a dns:/// entry, that DNS name: the name a
  // TLS server certificate is checked against. Empty otherwise.
  std::string tls_name;
};

// The replicas of `spec`. INVALID_ARGUMENT (naming the entry) for an empty
// spec or entry, or an entry without a ":port"; UNAVAILABLE when a dns:///
// name does not resolve.
absl::StatusOr<std::vector<Replica>> ResolveReplicas(absl::string_view spec);

// Whether `spec` has a dns:/// entry, whose records may change over time.
bool HasDnsEntry(absl::string_view spec);

}  // namespace pto::client

#endif  // PTO_CLIENT_CPP_REPLICAS_H_
