// One synchronous connection to one Redis node: RESP (hiredis's command
// encoder and reply parser, which need no socket) over a Transport
// (transport.h: a TCP socket, plain or TLS).
//
//   ConnectionOptions options;
//   options.connect_timeout = absl::Milliseconds(200);
//   auto c = Connection::Open("127.0.0.1:7000", options);
//   absl::StatusOr<Reply> r = (*c)->Command({"GET", "k"});
//
// Open() authenticates (AUTH user password, or AUTH password for the default
// user) and, with `readonly`, sends READONLY so a replica serves reads of its
// slots. A Redis error reply is a Reply of type kError, not a failed status;
// the status fails only when the node could not be reached or did not
// answer within the timeout (UNAVAILABLE or DEADLINE_EXCEEDED; the
// connection is then broken() and must be dropped), or its reply held more
// than `max_reply_bytes` (RESOURCE_EXHAUSTED; hiredis has read it by then,
// Redis's proto-max-bulk-len bounds it, and the connection stays usable).
// With `tls`, the connection is TLS and the node's certificate is verified
// (tls_context.h); a failed handshake is UNAVAILABLE saying why (not
// trusted, wrong name), and the connect timeout bounds it.
//
// Not thread-safe: one user at a time (ConnectionPool lends them out).
#ifndef PTO_SERVER_REDIS_CONNECTION_H_
#define PTO_SERVER_REDIS_CONNECTION_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/redis/reply.h"
#include "server/redis/tls_context.h"
#include "server/redis/transport.h"

struct redisReader;

namespace pto::server::redis {

struct ConnectionOptions {
  // Bound of the TCP connect and the TLS handshake together.
  absl::Duration connect_timeout = absl::Milliseconds(200);
  // Bound of each socket read or write of a command.
  absl::Duration command_timeout = absl::Milliseconds(200);
  // ACL user ("" with a password: the default user) and password ("": no
  // AUTH).
  std::string user;
  std::string password;
  // Send READONLY after connecting (reads from replicas).
  bool readonly = false;
  // Largest reply accepted (a bulk string, or an array's strings together).
  size_t max_reply_bytes = size_t{256} << 20;
  // TLS settings (shared by every connection); null: plain TCP.
  std::shared_ptr<const TlsContext> tls;
};

class Connection {
 public:
  // Connects to `address` ("host:port"). UNAVAILABLE when it cannot connect;
  // PERMISSION_DENIED when AUTH is refused (the message says which user).
  static absl::StatusOr<std::unique_ptr<Connection>> Open(
      const std::string& address, const ConnectionOptions& options);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  absl::StatusOr<Reply> Command(const std::vector<std::string>& argv);

  // Sends `commands` in one write and reads their replies in order (e.g.
  // ASKING followed by the command an ASK redirect named).
  absl::StatusOr<std::vector<Reply>> Pipeline(
      const std::vector<std::vector<std::string>>& commands);

  // Whether the connection failed and must not be reused, and why.
  bool broken() const { return broken_; }
  const std::string& error() const { return error_; }
  const std::string& address() const { return address_; }

 private:
  Connection(std::string address, std::unique_ptr<Transport> transport,
             redisReader* reader, const ConnectionOptions& options);

  // `error` (from the transport or the parser) naming the node and `what`
  // failed; marks the connection broken.
  absl::Status Broken(const std::string& what, const absl::Status& error);

  const std::string address_;
  const std::unique_ptr<Transport> transport_;
  redisReader* const reader_;
  const absl::Duration command_timeout_;
  const size_t max_reply_bytes_;
  bool broken_ = false;
  std::string error_;
};

}  // namespace pto::server::redis

#endif  // PTO_SERVER_REDIS_CONNECTION_H_
