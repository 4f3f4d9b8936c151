// A real Redis Cluster on loopback for tests: redis-server processes with
// cluster-enabled, joined by `redis-cli --cluster create`.
//
//   std::string why;
//   if (!RedisCluster::Available(&why)) GTEST_SKIP() << why;
//   absl::StatusOr<std::unique_ptr<RedisCluster>> cluster =
//       RedisCluster::Start(dir, RedisCluster::Options());
//   ASSERT_TRUE(cluster.ok()) << cluster.status();
//   (*cluster)->seeds();          // {"127.0.0.1:31001", ...}
//   (*cluster)->Kill(0);          // SIGKILL one node
//
// Start() picks free loopback ports (each with its cluster bus port, +10000,
// free too), starts 3 primaries and 3 replicas by default, each in its own
// directory under `dir` (its log there: "<dir>/<port>/redis.log"), creates
// the cluster, and waits until every node reports cluster_state:ok with all
// slots covered and every replica is in sync. Nodes require AUTH as the ACL
// user in Options (the default user is off). With Options::tls the nodes
// serve TLS only (port 0, tls-port; the cluster bus and replication over TLS
// too) and require client certificates: Start() first makes a test CA, a
// node certificate for 127.0.0.1/localhost and a client certificate with
// openssl under "<dir>/tls" (MakeTestCertificates), and every connection
// the fixture opens uses them. Every process is killed
// (SIGKILL) and reaped by the destructor, and by the kernel if the test
// process dies first (PR_SET_PDEATHSIG), so a failing test leaves none.
#ifndef PTO_TESTS_CLUSTER_REDIS_CLUSTER_FIXTURE_H_
#define PTO_TESTS_CLUSTER_REDIS_CLUSTER_FIXTURE_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/redis/connection.h"
#include "server/redis/tls_context.h"

namespace pto::testing {

// PEM files of a test PKI: a CA, a certificate for the nodes (SANs
// IP:127.0.0.1 and DNS:localhost, also their client certificate on the
// cluster bus) and one for clients, each signed by the CA.
struct TestCertificates {
  std::string ca_file;
  std::string server_cert_file;
  std::string server_key_file;
  std::string client_cert_file;
  std::string client_key_file;

  // TLS options of a client trusting this CA, with its client certificate.
  pto::server::redis::TlsOptions ClientOptions() const;
};

// Makes a fresh CA and its certificates in `dir` (created if absent) with
// openssl (EC P-256 keys, valid for two days). Each call is a different CA.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

class RedisCluster {
 public:
  struct Options {
    int primaries = 3;
    int replicas_per_primary = 1;
    // The ACL user every client (and replication) authenticates as.
    std::string user = "ptod";
    std::string password = "test-redis-password";
    // cluster-node-timeout: how soon a dead primary is failed over.
    absl::Duration node_timeout = absl::Milliseconds(1000);
    // TLS only, with client certificates (see above).
    bool tls = false;
  };

  // Whether redis-server and redis-cli (and with `tls`, openssl) are
  // installed; if not, `*why` names the Debian packages to install.
  static bool Available(std::string* why, bool tls = false);

  static absl::StatusOr<std::unique_ptr<RedisCluster>> Start(
      const std::string& dir, const Options& options);
  static absl::StatusOr<std::unique_ptr<RedisCluster>> Start(
      const std::string& dir) {
    return Start(dir, Options());
  }

  // Kills every node.
  ~RedisCluster();

  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  // Every node's address, "127.0.0.1:<port>", in start order.
  std::vector<std::string> seeds() const;
  int size() const { return static_cast<int>(nodes_.size()); }
  const std::string& address(int node) const { return nodes_[node].address; }

  // Connection options with the cluster's credentials (and with TLS, its
  // CA and client certificate).
  pto::server::redis::ConnectionOptions connection_options() const;

  // With TLS: the certificates the nodes and clients use.
  const TestCertificates& certificates() const { return certificates_; }

  // A direct connection to node `node` (authenticated).
  absl::StatusOr<std::unique_ptr<pto::server::redis::Connection>> Connect(
      int node) const;

  // Whether node `node` is running (not killed).
  bool running(int node) const { return nodes_[node].pid > 0; }

  // The node index serving `address`; -1 if none.
  int IndexOf(const std::string& address) const;

  // SIGKILLs node `node` and reaps it.
  void Kill(int node);
  // SIGKILLs every node.
  void KillAll();
  // Starts node `node` again on its port, with its directory (and so its
  // cluster identity, nodes.conf) as it was.
  absl::Status Restart(int node);

  // Deletes every key (FLUSHALL on each running primary).
  absl::Status FlushAll();

  // Waits until every running node reports cluster_state:ok with all slots
  // ok, lists every running node in CLUSTER SLOTS, agrees with the others on
  // it, and every replica is in sync; UNAVAILABLE with the last state seen
  // after `timeout`.
  absl::Status WaitUntilHealthy(absl::Duration timeout);

 private:
  struct Node {
    std::string address;
    int port = 0;
    std::string dir;
    pid_t pid = -1;
  };

  RedisCluster(Options options) : options_(std::move(options)) {}
  absl::Status Launch(Node* node);

  const Options options_;
  std::vector<Node> nodes_;
  TestCertificates certificates_;
  std::shared_ptr<const pto::server::redis::TlsContext> tls_;
};

}  // namespace pto::testing

#endif  // PTO_TESTS_CLUSTER_REDIS_CLUSTER_FIXTURE_H_
