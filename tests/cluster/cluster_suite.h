// GoogleTest bases for suites that share one real Redis Cluster (starting
// one takes seconds): started before the suite's first test, killed after
// its last. Each test starts with every node running (SetUp restarts any a
// test killed), the cluster healthy, and no keys. Without redis-server (or
// for TLS, openssl) the tests are skipped, naming the package to install.
//
//   class MyTest : public pto::testing::RedisClusterSuite {};
//   TEST_F(MyTest, X) { cluster().seeds(); ... }
//
// RedisClusterSuite: 3 primaries with a replica each, plain TCP.
// TlsRedisClusterSuite: 3 primaries without replicas, TLS with client
// certificates (redis_cluster_fixture.h).
#ifndef PTO_TESTS_CLUSTER_CLUSTER_SUITE_H_
#define PTO_TESTS_CLUSTER_CLUSTER_SUITE_H_

#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/redis/cluster_client.h"
#include "tests/cluster/redis_cluster_fixture.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {

// `Config::Options()`: the cluster's options.
template <typename Config>
class RedisClusterSuiteOf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!RedisCluster::Available(&why, Config::Options().tls)) return;
    dir_ = new TempDir();
    absl::StatusOr<std::unique_ptr<RedisCluster>> cluster =
        RedisCluster::Start(dir_->path(), Config::Options());
    if (cluster.ok()) {
      cluster_ = cluster->release();
    } else {
      start_error_ = new std::string(cluster.status().ToString());
    }
  }

  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete dir_;
    dir_ = nullptr;
    delete start_error_;
    start_error_ = nullptr;
  }

  void SetUp() override {
    std::string why;
    if (!RedisCluster::Available(&why, Config::Options().tls)) {
      GTEST_SKIP() << why;
    }
    ASSERT_NE(cluster_, nullptr) << *start_error_;
    for (int i = 0; i < cluster_->size(); ++i) {
      if (!cluster_->running(i)) {
        ASSERT_TRUE(cluster_->Restart(i).ok());
      }
    }
    absl::Status healthy = cluster_->WaitUntilHealthy(absl::Seconds(30));
    ASSERT_TRUE(healthy.ok()) << healthy;
    absl::Status flushed = cluster_->FlushAll();
    ASSERT_TRUE(flushed.ok()) << flushed;
  }

  RedisCluster& cluster() { return *cluster_; }

  // The files ptod's --signing_key_file and --redis_credentials_file read
  // (mode 0600, in `dir`): the cluster's signing key, and the ACL user and
  // password the cluster was started with.
  struct PtodSecretFiles {
    std::string key_file;
    std::string credentials_file;
  };
  PtodSecretFiles WritePtodSecretFiles(const std::string& dir) {
    PtodSecretFiles files{dir + "/signing.key", dir + "/redis-credentials"};
    const RedisCluster::Options options = Config::Options();
    std::ofstream(files.key_file) << "the-cluster-signing-key-0123456789abcdef\n";
    std::ofstream(files.credentials_file) << options.user << "\n" << options.password << "\n";
    chmod(files.key_file.c_str(), 0600);
    chmod(files.credentials_file.c_str(), 0600);
    return files;
  }

  // A cluster client with `options` (a failed start is a test failure).
  std::unique_ptr<pto::server::redis::ClusterClient> NewClient(
      const pto::server::redis::ClusterOptions& options) {
    absl::StatusOr<std::unique_ptr<pto::server::redis::ClusterClient>> client =
        pto::server::redis::ClusterClient::Create(options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Runs `argv` on node `node` itself (no routing); the reply.
  pto::server::redis::Reply On(int node, const std::vector<std::string>& argv) {
    using pto::server::redis::Reply;
    absl::StatusOr<std::unique_ptr<pto::server::redis::Connection>> c = cluster().Connect(node);
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return Reply::Error("no connection");
    absl::StatusOr<Reply> reply = (*c)->Command(argv);
    EXPECT_TRUE(reply.ok()) << reply.status();
    return reply.ok() ? *reply : Reply::Error("failed");
  }

 private:
  static inline TempDir* dir_ = nullptr;
  static inline RedisCluster* cluster_ = nullptr;
  static inline std::string* start_error_ = nullptr;
};

struct PlainClusterConfig {
  static RedisCluster::Options Options() { return RedisCluster::Options(); }
};

struct TlsClusterConfig {
  static RedisCluster::Options Options() {
    RedisCluster::Options options;
    options.replicas_per_primary = 0;
    options.tls = true;
    return options;
  }
};

using RedisClusterSuite = RedisClusterSuiteOf<PlainClusterConfig>;
using TlsRedisClusterSuite = RedisClusterSuiteOf<TlsClusterConfig>;

}  // namespace pto::testing

#endif  // PTO_TESTS_CLUSTER_CLUSTER_SUITE_H_
