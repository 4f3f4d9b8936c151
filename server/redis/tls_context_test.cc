// TlsContext's checks of its files (handshakes against real TLS nodes are in
// tests/cluster/).
#include "server/redis/tls_context.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace pto::server::redis {
namespace {

std::string TempFile(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" +
                           name;
  std::ofstream(path) << contents;
  return path;
}

void ExpectRefused(const TlsOptions& options, const std::string& names) {
  absl::StatusOr<std::shared_ptr<const TlsContext>> context =
      TlsContext::Create(options);
  ASSERT_FALSE(context.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(context.status())) << context.status();
  EXPECT_TRUE(absl::StrContains(context.status().message(), names))
      << context.status();
}

TEST(TlsContextTest, NeedsACaFile) {
  ExpectRefused(TlsOptions(), "needs ca_file");
}

TEST(TlsContextTest, AMissingCaFileIsNamed) {
  TlsOptions options;
  options.ca_file = "/nonexistent/ca.pem";
  ExpectRefused(options, "ca_file /nonexistent/ca.pem: cannot read");
}

TEST(TlsContextTest, ACaFileThatIsNotPemIsNamed) {
  TlsOptions options;
  options.ca_file = TempFile("not-pem.crt", "this is not a certificate\n");
  ExpectRefused(options, "ca_file " + options.ca_file +
                             ": no CA certificate (PEM) could be loaded");
}

TEST(TlsContextTest, ACertificateNeedsItsKey) {
  TlsOptions options;
  options.ca_file = TempFile("ca-for-cert.crt", "unused\n");
  options.cert_file = options.ca_file;
  ExpectRefused(options, "both or neither");
}

// The system's CA bundle, a valid CA file; "" when there is none.
std::string SystemCaBundle() {
  const std::string path = "/etc/ssl/certs/ca-certificates.crt";
  return std::ifstream(path).good() ? path : "";
}

TEST(TlsContextTest, AMissingClientKeyIsNamed) {
  TlsOptions options;
  options.ca_file = SystemCaBundle();
  if (options.ca_file.empty()) GTEST_SKIP() << "no CA bundle (ca-certificates)";
  options.cert_file = TempFile("client.crt", "x\n");
  options.key_file = "/nonexistent/client.key";
  ExpectRefused(options, "key_file /nonexistent/client.key: cannot read");
}

TEST(TlsContextTest, AClientCertificateThatIsNotPemIsNamed) {
  TlsOptions options;
  options.ca_file = SystemCaBundle();
  if (options.ca_file.empty()) GTEST_SKIP() << "no CA bundle (ca-certificates)";
  options.cert_file = TempFile("bad-client.crt", "not a certificate\n");
  options.key_file = TempFile("bad-client.key", "not a key\n");
  ExpectRefused(options, "cert_file " + options.cert_file +
                             ": not a certificate chain (PEM)");
}

TEST(TlsContextTest, AValidCaFileIsAccepted) {
  TlsOptions options;
  options.ca_file = SystemCaBundle();
  if (options.ca_file.empty()) GTEST_SKIP() << "no CA bundle (ca-certificates)";
  options.server_name = "redis.example";
  absl::StatusOr<std::shared_ptr<const TlsContext>> context =
      TlsContext::Create(options);
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_EQ((*context)->server_name(), "redis.example");
}

}  // namespace
}  // namespace pto::server::redis
