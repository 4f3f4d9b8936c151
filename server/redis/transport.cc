#include "server/redis/transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace pto::server::redis {
namespace {

// Waits until `fd` is ready for `events` (POLLIN or POLLOUT) or `deadline`.
absl::Status WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("timed out waiting to ",
                       events == POLLIN ? "read" : "write"));
    }
    pollfd p{fd, events, 0};
    // Round up: a wait of 0 ms would spin.
    const int ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    const int ready = poll(&p, 1, ms);
    if (ready > 0) return absl::OkStatus();  // errors surface in the call
    if (ready < 0 && errno != EINTR) {
      return absl::UnavailableError(
          absl::StrCat("poll: ", std::strerror(errno)));
    }
  }
}

// Connects a non-blocking socket to `address` by `deadline`; its fd.
absl::StatusOr<int> ConnectOne(const addrinfo& address, absl::Time deadline) {
  const int fd = socket(address.ai_family,
                        SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("socket: ", std::strerror(errno)));
  }
  if (connect(fd, address.ai_addr, address.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      const int error = errno;
      close(fd);
      return absl::UnavailableError(std::strerror(error));
    }
    absl::Status ready = WaitFor(fd, POLLOUT, deadline);
    int error = 0;
    socklen_t length = sizeof(error);
    if (ready.ok() &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
      error = errno;
    }
    if (!ready.ok() || error != 0) {
      close(fd);
      if (!ready.ok()) {
        return absl::Status(ready.code(), "timed out connecting");
      }
      return absl::UnavailableError(std::strerror(error));
    }
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  return fd;
}

bool IsIpAddress(const std::string& host) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

// Why the handshake on `ssl` failed with SSL_get_error() `error`, checking
// the name `name`.
std::string HandshakeFailure(SSL* ssl, int error, const TlsContext& tls,
                             const std::string& name) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify == X509_V_ERR_HOSTNAME_MISMATCH ||
      verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    DrainOpenSslErrors();
    return absl::StrCat(
        "TLS handshake failed: the node's certificate does not match \"",
        name, "\" (set the name its certificate carries as the server name)");
  }
  if (verify != X509_V_OK) {
    DrainOpenSslErrors();
    return absl::StrCat(
        "TLS handshake failed: the node's certificate is not trusted by CA "
        "file ",
        tls.ca_file(), " (", X509_verify_cert_error_string(verify), ")");
  }
  const std::string reasons = DrainOpenSslErrors();
  if (!reasons.empty()) {
    return absl::StrCat("TLS handshake failed: ", reasons);
  }
  if (error == SSL_ERROR_SYSCALL && errno != 0) {
    return absl::StrCat("TLS handshake failed: ", std::strerror(errno));
  }
  return "TLS handshake failed: the node closed the connection (does it "
         "serve TLS on this port?)";
}

// The alert the node sent before closing, if one is waiting to be read:
// a node that refuses the client's certificate says so after a TLS 1.3
// handshake has completed on the client's side, and closes, so the
// client's next write fails and only this read tells why.
std::string AlertReceived(SSL* ssl) {
  ERR_clear_error();
  char byte;
  SSL_read(ssl, &byte, 1);
  return DrainOpenSslErrors();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> Transport::Connect(
    const std::string& host, int port, const TlsContext* tls,
    absl::Duration connect_timeout) {
  const absl::Time deadline = absl::Now() + connect_timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  const int resolved = getaddrinfo(host.c_str(), std::to_string(port).c_str(),
                                   &hints, &addresses);
  if (resolved != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot resolve ", host, ": ", gai_strerror(resolved)));
  }
  absl::StatusOr<int> fd = absl::UnavailableError("no address");
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    fd = ConnectOne(*a, deadline);
    if (fd.ok() || absl::IsDeadlineExceeded(fd.status())) break;
  }
  freeaddrinfo(addresses);
  if (!fd.ok()) {
    return absl::Status(fd.status().code(),
                        absl::StrCat("cannot connect: ", fd.status().message()));
  }
  if (tls == nullptr) return std::unique_ptr<Transport>(new Transport(*fd, nullptr));

  DrainOpenSslErrors();
  SSL* ssl = SSL_new(tls->ssl_ctx());
  if (ssl == nullptr) {
    close(*fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("SSL_new: ", DrainOpenSslErrors()));
  }
  // Owned from here: the destructor frees the SSL and closes the socket.
  std::unique_ptr<Transport> transport(new Transport(*fd, ssl));
  SSL_set_fd(ssl, *fd);
  const std::string name =
      tls->server_name().empty() ? host : tls->server_name();
  if (IsIpAddress(name)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, name.c_str());
    SSL_set1_host(ssl, name.c_str());
  }
  while (true) {
    ERR_clear_error();
    errno = 0;
    const int done = SSL_connect(ssl);
    if (done == 1) return transport;
    const int error = SSL_get_error(ssl, done);
    absl::Status ready;
    if (error == SSL_ERROR_WANT_READ) {
      ready = WaitFor(*fd, POLLIN, deadline);
    } else if (error == SSL_ERROR_WANT_WRITE) {
      ready = WaitFor(*fd, POLLOUT, deadline);
    } else {
      return absl::UnavailableError(HandshakeFailure(ssl, error, *tls, name));
    }
    if (!ready.ok()) {
      return absl::Status(
          ready.code(), absl::StrCat("TLS handshake: ", ready.message()));
    }
  }
}

Transport::~Transport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  close(fd_);
}

absl::Status Transport::Write(absl::string_view data, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!data.empty()) {
    short wait = POLLOUT;
    if (ssl_ != nullptr) {
      // SSL_get_error reads this thread's error queue: start it empty.
      ERR_clear_error();
      errno = 0;
      const int n = SSL_write(ssl_, data.data(),
                              static_cast<int>(std::min<size_t>(
                                  data.size(), size_t{1} << 30)));
      if (n > 0) {
        data.remove_prefix(n);
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_WANT_READ) {
        wait = POLLIN;
      } else if (error != SSL_ERROR_WANT_WRITE) {
        const int write_errno = errno;
        std::string reasons = DrainOpenSslErrors();
        if (reasons.empty()) reasons = AlertReceived(ssl_);
        return absl::UnavailableError(absl::StrCat(
            "TLS write failed: ",
            !reasons.empty()    ? reasons
            : write_errno != 0 ? std::strerror(write_errno)
                               : "connection closed"));
      }
    } else {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        return absl::UnavailableError(
            absl::StrCat("write failed: ", std::strerror(errno)));
      }
    }
    absl::Status ready = WaitFor(fd_, wait, deadline);
    if (!ready.ok()) return ready;
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> Transport::Read(char* buffer, size_t size,
                                       absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    short wait = POLLIN;
    if (ssl_ != nullptr) {
      // SSL_get_error reads this thread's error queue: start it empty.
      ERR_clear_error();
      errno = 0;
      const int n = SSL_read(
          ssl_, buffer,
          static_cast<int>(std::min<size_t>(size, size_t{1} << 30)));
      if (n > 0) return static_cast<size_t>(n);
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_WANT_WRITE) {
        wait = POLLOUT;
      } else if (error == SSL_ERROR_ZERO_RETURN) {
        return absl::UnavailableError("the node closed the connection");
      } else if (error != SSL_ERROR_WANT_READ) {
        const std::string reasons = DrainOpenSslErrors();
        return absl::UnavailableError(absl::StrCat(
            "TLS read failed: ",
            !reasons.empty() ? reasons
            : errno != 0     ? std::strerror(errno)
                             : "the node closed the connection"));
      }
    } else {
      const ssize_t n = recv(fd_, buffer, size, 0);
      if (n > 0) return static_cast<size_t>(n);
      if (n == 0) {
        return absl::UnavailableError("the node closed the connection");
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        return absl::UnavailableError(
            absl::StrCat("read failed: ", std::strerror(errno)));
      }
    }
    absl::Status ready = WaitFor(fd_, wait, deadline);
    if (!ready.ok()) return ready;
  }
}

}  // namespace pto::server::redis
