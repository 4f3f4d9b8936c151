// ptod's security on loopback: bearer tokens per tenant, tenant namespaces in
// the cache, signed binaries checked by the runtime, TLS with and without
// client certificates (certificates made at test time by the openssl CLI).
#include <stdlib.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/cpp/compile_client.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "runtime/signature.h"
#include "server/ptod_server.h"
#include "server/tenant_tokens.h"
#include "tests/ptod/test_util.h"

namespace pto::testing {
namespace {

using pto::client::ClientOptions;
using pto::client::CompileClient;
using pto::server::PtodOptions;
using pto::server::PtodServer;

constexpr char kTokens[] =
    "alpha tok-alpha-0123456789abcdef\n"
    "beta  tok-beta-0123456789abcdef\n"
    "ops   tok-ops-0123456789abcdef admin\n";
constexpr char kSigningKey[] = "signing-key-0123456789abcdef-0123456789";

absl::Time In(absl::Duration d) { return absl::Now() + d; }

std::unique_ptr<CompileClient> ClientWith(const PtodServer& ptod,
                                          const std::string& token) {
  ClientOptions options;
  options.token = token;
  return std::make_unique<CompileClient>(ptod.address(), options);
}

class SecurityTest : public ::testing::Test {
 protected:
  void Start(PtodOptions options) {
    auto backend = std::make_unique<CountingBackend>(MakeInnerBackend());
    backend_ = backend.get();
    options.address = "127.0.0.1:0";
    options.cache_dir = dir_.path() + "/cache";
    auto ptod = PtodServer::Start(options, std::move(backend));
    ASSERT_TRUE(ptod.ok()) << ptod.status();
    ptod_ = std::move(*ptod);
  }
  PtodOptions WithTokens() {
    PtodOptions options;
    auto tokens = pto::server::TenantTokens::Parse(kTokens, "test");
    EXPECT_TRUE(tokens.ok()) << tokens.status();
    options.service.tokens = *tokens;
    return options;
  }
  void TearDown() override {
    pto::runtime::SetKernelVerificationKey("");
    if (ptod_ != nullptr) ptod_->Shutdown(absl::Seconds(5));
  }

  TempDir dir_;
  CountingBackend* backend_ = nullptr;
  std::unique_ptr<PtodServer> ptod_;
};

TEST_F(SecurityTest, AnonymousAdminIsRefusedUnlessAllowed) {
  Start(PtodOptions());
  auto anonymous = ClientWith(*ptod_, "");
  auto refused =
      anonymous->Admin(pto::v1::ADMIN_ACTION_PURGE, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("--allow_anonymous_admin"),
            std::string::npos);
  refused =
      anonymous->Admin(pto::v1::ADMIN_ACTION_INVALIDATE, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  ptod_->Shutdown(absl::Seconds(5));
  ptod_.reset();

  PtodOptions allowed;
  allowed.service.allow_anonymous_admin = true;
  Start(allowed);
  auto purged = ClientWith(*ptod_, "")->Admin(pto::v1::ADMIN_ACTION_PURGE,
                                              In(absl::Seconds(30)));
  EXPECT_TRUE(purged.ok()) << purged.status();
}

TEST_F(SecurityTest, RequestMemoryBeyondTheBudgetIsRefusedAtStart) {
  PtodOptions options;
  options.address = "127.0.0.1:0";
  options.cache_dir = dir_.path() + "/cache";
  options.max_rpc_threads = 1024;
  options.max_request_bytes = size_t{64} << 20;
  options.request_memory_bytes = size_t{4} << 30;
  auto ptod = PtodServer::Start(options, MakeInnerBackend());
  ASSERT_FALSE(ptod.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(ptod.status())) << ptod.status();
  EXPECT_NE(ptod.status().message().find("request_memory_bytes"),
            std::string::npos);
  // The defaults fit.
  PtodOptions defaults;
  EXPECT_LE(static_cast<size_t>(defaults.max_rpc_threads) *
                defaults.max_request_bytes,
            defaults.request_memory_bytes);
}

TEST_F(SecurityTest, WrongAndMissingTokensAreUnauthenticated) {
  PtodOptions options = WithTokens();
  options.metrics_address = "127.0.0.1:0";
  Start(options);
  for (const std::string token : {"", "tok-alpha-0123456789abcdeX", "x"}) {
    SCOPED_TRACE("token \"" + token + "\"");
    auto client = ClientWith(*ptod_, token);
    auto compiled = client->Compile(AddGraph(), "host", {}, In(absl::Seconds(60)));
    EXPECT_TRUE(absl::IsUnauthenticated(compiled.status())) << compiled.status();
    auto got = client->GetKernel(std::string(64, 'a'), In(absl::Seconds(60)));
    EXPECT_TRUE(absl::IsUnauthenticated(got.status())) << got.status();
    auto stats = client->Stats(In(absl::Seconds(60)));
    EXPECT_TRUE(absl::IsUnauthenticated(stats.status())) << stats.status();
  }
  EXPECT_EQ(backend_->compiles(), 0);
  auto good = ClientWith(*ptod_, "tok-alpha-0123456789abcdef")
                  ->Compile(AddGraph(), "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(good.ok()) << good.status();
  // Requests by result and tenant.
  auto page = HttpGet(ptod_->metrics_port(), "/metrics");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_NE(page->find(
                "pto_requests_total{result=\"unauthenticated\",tenant=\"-\"} 3"),
            std::string::npos)
      << *page;
  EXPECT_NE(page->find("pto_requests_total{result=\"miss\",tenant=\"alpha\"} 1"),
            std::string::npos)
      << *page;
}

TEST_F(SecurityTest, TenantsWithTheSameGraphGetSeparateEntries) {
  Start(WithTokens());
  auto alpha = ClientWith(*ptod_, "tok-alpha-0123456789abcdef");
  auto beta = ClientWith(*ptod_, "tok-beta-0123456789abcdef");
  const pto::v1::Graph graph = AddGraph();
  auto a = alpha->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->cache_status(), pto::v1::CACHE_STATUS_MISS);
  // Beta cannot read alpha's kernel by its key ...
  auto stolen = beta->GetKernel(a->key(), In(absl::Seconds(60)));
  EXPECT_TRUE(absl::IsNotFound(stolen.status())) << stolen.status();
  // ... and compiling the same graph is beta's own miss.
  auto b = beta->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(b->key(), a->key());  // the compiler's key is the same
  EXPECT_EQ(backend_->compiles(), 2);
  auto again = alpha->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->cache_status(), pto::v1::CACHE_STATUS_HIT);
  auto own = beta->GetKernel(a->key(), In(absl::Seconds(60)));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->key(), a->key());
  const pto::server::KernelStore::Stats stats = ptod_->store_stats();
  EXPECT_EQ(stats.entries, 2u);
  // Identical native code is still stored once.
  if (a->binary().native_payload() == b->binary().native_payload()) {
    EXPECT_EQ(stats.payloads, 1u);
  }
}

TEST_F(SecurityTest, RuntimeLoadsSignedBinariesAndRefusesTamperedOnes) {
  PtodOptions options;
  options.service.signing_key = kSigningKey;
  Start(options);
  CompileClient client(ptod_->address());
  pto::runtime::SetKernelVerificationKey(kSigningKey);
  auto kernel = pto::client::CompileAndLoad(client, AddGraph(), "host", {},
                                            In(absl::Seconds(120)));
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // A hit is signed too.
  auto hit = client.Compile(AddGraph(), "host", {}, In(absl::Seconds(60)));
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->cache_status(), pto::v1::CACHE_STATUS_HIT);
  ASSERT_TRUE(pto::runtime::Kernel::Load(hit->binary()).ok());

  pto::v1::KernelBinary tampered = hit->binary();
  (*tampered.mutable_signature())[0] ^= 1;
  auto refused = pto::runtime::Kernel::Load(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("wrong signature"),
            std::string::npos);

  pto::v1::KernelBinary unsigned_binary = hit->binary();
  unsigned_binary.clear_signature();
  refused = pto::runtime::Kernel::Load(unsigned_binary);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unsigned"), std::string::npos)
      << refused.status();

  // A ptod with another key: its binaries are refused.
  pto::runtime::SetKernelVerificationKey("a different key of 32 bytes or more");
  EXPECT_TRUE(absl::IsPermissionDenied(
      pto::runtime::Kernel::Load(hit->binary()).status()));
}

TEST_F(SecurityTest, AdminInvalidatesAndPurgesOnlyForAdmins) {
  Start(WithTokens());
  auto alpha = ClientWith(*ptod_, "tok-alpha-0123456789abcdef");
  auto ops = ClientWith(*ptod_, "tok-ops-0123456789abcdef");
  const pto::v1::Graph graph = AddGraph();
  ASSERT_TRUE(alpha->Compile(graph, "host", {}, In(absl::Seconds(120))).ok());
  auto denied =
      alpha->Admin(pto::v1::ADMIN_ACTION_PURGE, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsPermissionDenied(denied.status())) << denied.status();
  EXPECT_EQ(ptod_->store_stats().entries, 1u);

  auto invalidated =
      ops->Admin(pto::v1::ADMIN_ACTION_INVALIDATE, In(absl::Seconds(30)));
  ASSERT_TRUE(invalidated.ok()) << invalidated.status();
  EXPECT_EQ(invalidated->generation(), 1u);
  auto recompiled = alpha->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_EQ(recompiled->cache_status(), pto::v1::CACHE_STATUS_MISS);
  EXPECT_EQ(backend_->compiles(), 2);
  auto stats = ops->Stats(In(absl::Seconds(30)));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->generation(), 1u);

  auto purged = ops->Admin(pto::v1::ADMIN_ACTION_PURGE, In(absl::Seconds(30)));
  ASSERT_TRUE(purged.ok()) << purged.status();
  EXPECT_EQ(purged->entries(), 0u);
  EXPECT_EQ(purged->bytes(), 0u);
  auto after = alpha->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->cache_status(), pto::v1::CACHE_STATUS_MISS);
  auto bad = ops->Admin(pto::v1::ADMIN_ACTION_UNSPECIFIED, In(absl::Seconds(30)));
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();

  // The generation survives a restart.
  ptod_->Shutdown(absl::Seconds(5));
  ptod_.reset();
  Start(WithTokens());
  auto restarted = ClientWith(*ptod_, "tok-alpha-0123456789abcdef")
                       ->Compile(graph, "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(restarted->cache_status(), pto::v1::CACHE_STATUS_HIT);
}

// Runs `command` through /bin/sh; true when it exits 0.
bool Sh(const std::string& command) { return system(command.c_str()) == 0; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TlsTest : public SecurityTest {
 protected:
  void SetUp() override {
    const std::string d = dir_.path();
    // A CA, a server certificate for 127.0.0.1, a client certificate.
    const std::string q = " 2>/dev/null";
    ASSERT_TRUE(Sh("cd " + d +
                   " && openssl req -x509 -newkey rsa:2048 -nodes -days 1"
                   " -subj /CN=test-ca -keyout ca.key -out ca.pem" + q));
    ASSERT_TRUE(Sh("cd " + d +
                   " && openssl req -newkey rsa:2048 -nodes -subj /CN=ptod"
                   " -keyout server.key -out server.csr" + q +
                   " && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext"
                   " && openssl x509 -req -in server.csr -CA ca.pem"
                   " -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext"
                   " -out server.pem" + q));
    ASSERT_TRUE(Sh("cd " + d +
                   " && openssl req -newkey rsa:2048 -nodes -subj /CN=client"
                   " -keyout client.key -out client.csr" + q +
                   " && openssl x509 -req -in client.csr -CA ca.pem"
                   " -CAkey ca.key -CAcreateserial -days 1 -out client.pem" +
                   q));
    ca_ = ReadAll(d + "/ca.pem");
    ASSERT_NE(ca_.find("BEGIN CERTIFICATE"), std::string::npos);
  }

  PtodOptions TlsOptions(bool require_client_cert) {
    PtodOptions options;
    options.tls_cert_pem = ReadAll(dir_.path() + "/server.pem");
    options.tls_key_pem = ReadAll(dir_.path() + "/server.key");
    if (require_client_cert) options.tls_client_ca_pem = ca_;
    return options;
  }

  ClientOptions TlsClient(bool with_cert) {
    ClientOptions options;
    options.tls = true;
    options.tls_root_ca_pem = ca_;
    if (with_cert) {
      options.tls_cert_pem = ReadAll(dir_.path() + "/client.pem");
      options.tls_key_pem = ReadAll(dir_.path() + "/client.key");
    }
    return options;
  }

  std::string ca_;
};

TEST_F(TlsTest, ServerCertificate) {
  Start(TlsOptions(false));
  CompileClient tls(ptod_->address(), TlsClient(false));
  auto r = tls.Compile(AddGraph(), "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(r.ok()) << r.status();
  // Plaintext to a TLS port fails.
  CompileClient plain(ptod_->address());
  EXPECT_FALSE(plain.Stats(In(absl::Seconds(5))).ok());
}

TEST_F(TlsTest, ClientCertificatesRequired) {
  Start(TlsOptions(true));
  CompileClient with_cert(ptod_->address(), TlsClient(true));
  auto r = with_cert.Stats(In(absl::Seconds(30)));
  ASSERT_TRUE(r.ok()) << r.status();
  CompileClient without_cert(ptod_->address(), TlsClient(false));
  auto refused = without_cert.Stats(In(absl::Seconds(5)));
  EXPECT_FALSE(refused.ok());
}

TEST_F(TlsTest, UnauthenticatedCallsAreRefusedBeforeTheirBodyIsRead) {
  PtodOptions options = TlsOptions(false);
  auto tokens = pto::server::TenantTokens::Parse(kTokens, "test");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  options.service.tokens = *tokens;
  Start(options);
  ClientOptions client = TlsClient(false);
  for (const std::string& token : {std::string(), std::string("wrong-token-0123456789")}) {
    client.token = token;
    CompileClient caller(ptod_->address(), client);
    auto r = caller.Compile(AddGraph(), "host", {}, In(absl::Seconds(30)));
    EXPECT_TRUE(absl::IsUnauthenticated(r.status())) << r.status();
    // Refused by the auth processor, from the metadata alone.
    EXPECT_NE(r.status().message().find("before the request was read"),
              std::string::npos)
        << r.status();
  }
  EXPECT_EQ(backend_->compiles(), 0);
  // Health needs no token; a good token compiles.
  client.token = "tok-alpha-0123456789abcdef";
  CompileClient alpha(ptod_->address(), client);
  auto r = alpha.Compile(AddGraph(), "host", {}, In(absl::Seconds(120)));
  ASSERT_TRUE(r.ok()) << r.status();
}

TEST_F(TlsTest, KeyWithoutCertificateIsRefusedAtStart) {
  PtodOptions options;
  options.tls_key_pem = "x";
  options.address = "127.0.0.1:0";
  options.cache_dir = dir_.path() + "/cache";
  auto ptod = PtodServer::Start(options, MakeInnerBackend());
  ASSERT_FALSE(ptod.ok());
  EXPECT_NE(ptod.status().message().find("certificate"), std::string::npos);
}

}  // namespace
}  // namespace pto::testing
