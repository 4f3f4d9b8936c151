// A byte stream to one Redis node: a TCP socket, plain or TLS (OpenSSL),
// with every wait bounded. Connection (connection.h) speaks RESP over it.
//
//   absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
//       "127.0.0.1", 7000, tls.get(), absl::Milliseconds(200));
//   (*t)->Write(bytes, absl::Milliseconds(200));
//   absl::StatusOr<size_t> n = (*t)->Read(buffer, sizeof(buffer), timeout);
//
// Plain and TLS connections share this one code path (a non-blocking socket
// and poll(2)), so timeouts and errors mean the same on both. The socket is
// non-blocking throughout: `connect_timeout` bounds the TCP connect and the
// TLS handshake together, and each Read or Write waits at most its
// `timeout` for the socket (a TLS read may need to write, and the other way
// round). Name resolution (getaddrinfo) is the system's, not bounded here:
// give nodes as addresses, or names the local resolver answers at once.
//
// Errors: DEADLINE_EXCEEDED when a wait timed out; UNAVAILABLE when the node
// refused or closed the connection, or the TLS handshake failed (the
// message says why: e.g. "certificate not trusted (unable to get local
// issuer certificate)" or "certificate does not match 127.0.0.1"). After
// any error the transport must be dropped.
//
// Not thread-safe: one user at a time.
#ifndef PTO_SERVER_REDIS_TRANSPORT_H_
#define PTO_SERVER_REDIS_TRANSPORT_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/redis/tls_context.h"

typedef struct ssl_st SSL;

namespace pto::server::redis {

class Transport {
 public:
  // Connects to `host`:`port`, then with `tls` (null: plain) does the TLS
  // handshake, verifying the node's certificate (tls_context.h).
  static absl::StatusOr<std::unique_ptr<Transport>> Connect(
      const std::string& host, int port, const TlsContext* tls,
      absl::Duration connect_timeout);
  ~Transport();

  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Writes all of `data`.
  absl::Status Write(absl::string_view data, absl::Duration timeout);

  // Reads at least one byte and at most `size` into `buffer`; how many.
  absl::StatusOr<size_t> Read(char* buffer, size_t size,
                              absl::Duration timeout);

  bool tls() const { return ssl_ != nullptr; }

 private:
  Transport(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

  const int fd_;
  SSL* const ssl_;
};

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_TRANSPORT_H_
