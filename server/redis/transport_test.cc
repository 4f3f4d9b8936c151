// Transport against loopback peers that misbehave: silent, closing, not
// speaking TLS. Every wait ends within its timeout with a status saying
// what happened. (Real TLS nodes: tests/cluster/tls_cluster_test.cc.)
#include "server/redis/transport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace pto::server::redis {
namespace {

// A listening loopback socket; its port. Connections queue in its backlog
// until accepted.
class Listener {
 public:
  Listener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 8), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { close(fd_); }

  int port() const { return port_; }
  // Accepts one connection; its fd.
  int Accept() { return accept(fd_, nullptr, nullptr); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::shared_ptr<const TlsContext> SystemCaContext() {
  TlsOptions options;
  options.ca_file = "/etc/ssl/certs/ca-certificates.crt";
  if (!std::ifstream(options.ca_file).good()) return nullptr;
  absl::StatusOr<std::shared_ptr<const TlsContext>> context =
      TlsContext::Create(options);
  EXPECT_TRUE(context.ok()) << context.status();
  return context.ok() ? *context : nullptr;
}

TEST(TransportTest, ARefusedConnectIsUnavailable) {
  int port = 0;
  {
    Listener closed;  // bound, then closed: nothing listens there now
    port = closed.port();
  }
  absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
      "127.0.0.1", port, nullptr, absl::Milliseconds(500));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsUnavailable(t.status())) << t.status();
  EXPECT_TRUE(absl::StrContains(t.status().message(), "cannot connect"))
      << t.status();
}

TEST(TransportTest, ReadingFromASilentPeerTimesOut) {
  Listener peer;
  absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
      "127.0.0.1", peer.port(), nullptr, absl::Milliseconds(500));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE((*t)->Write("PING\r\n", absl::Milliseconds(100)).ok());
  char buffer[16];
  const absl::Time start = absl::Now();
  absl::StatusOr<size_t> n =
      (*t)->Read(buffer, sizeof(buffer), absl::Milliseconds(100));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(n.status())) << n.status();
}

TEST(TransportTest, APeerThatClosesIsUnavailable) {
  Listener peer;
  absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
      "127.0.0.1", peer.port(), nullptr, absl::Milliseconds(500));
  ASSERT_TRUE(t.ok()) << t.status();
  const int accepted = peer.Accept();
  ASSERT_GE(accepted, 0);
  ASSERT_EQ(write(accepted, "+OK\r\n", 5), 5);
  close(accepted);
  char buffer[16];
  absl::StatusOr<size_t> n =
      (*t)->Read(buffer, sizeof(buffer), absl::Seconds(2));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(buffer, *n), "+OK\r\n");
  n = (*t)->Read(buffer, sizeof(buffer), absl::Seconds(2));
  ASSERT_FALSE(n.ok());
  EXPECT_TRUE(absl::IsUnavailable(n.status())) << n.status();
  EXPECT_TRUE(absl::StrContains(n.status().message(), "closed"))
      << n.status();
}

// The connect timeout bounds the handshake: a peer that accepts TCP and
// never answers the ClientHello costs at most that.
TEST(TransportTest, ATlsHandshakeWithASilentPeerTimesOut) {
  std::shared_ptr<const TlsContext> tls = SystemCaContext();
  if (tls == nullptr) GTEST_SKIP() << "no CA bundle (ca-certificates)";
  Listener peer;
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
      "127.0.0.1", peer.port(), tls.get(), absl::Milliseconds(200));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(t.status())) << t.status();
  EXPECT_TRUE(absl::StrContains(t.status().message(), "TLS handshake"))
      << t.status();
}

// A plaintext Redis answers a ClientHello with an error line: the
// handshake fails at once, saying so.
TEST(TransportTest, APeerNotSpeakingTlsFailsTheHandshake) {
  std::shared_ptr<const TlsContext> tls = SystemCaContext();
  if (tls == nullptr) GTEST_SKIP() << "no CA bundle (ca-certificates)";
  Listener peer;
  std::thread plaintext([&] {
    const int fd = peer.Accept();
    char hello[512];
    read(fd, hello, sizeof(hello));
    const std::string error = "-ERR unknown command\r\n";
    write(fd, error.data(), error.size());
    close(fd);
  });
  absl::StatusOr<std::unique_ptr<Transport>> t = Transport::Connect(
      "127.0.0.1", peer.port(), tls.get(), absl::Seconds(2));
  plaintext.join();
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(absl::IsUnavailable(t.status())) << t.status();
  EXPECT_TRUE(absl::StrContains(t.status().message(), "TLS handshake failed"))
      << t.status();
}

}  // namespace
}  // namespace pto::server::redis
