#include "server/tenant_tokens.h"

#include "gtest/gtest.h"

namespace pto::server {
namespace {

TEST(TenantTokensTest, ParsesTenantsTokensAndAdmins) {
  auto tokens = TenantTokens::Parse(
      "# comment\n"
      "training  tok-training-0123456789\n"
      "\n"
      "ops\ttok-ops-0123456789abcdef admin  # trailing comment\n",
      "tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_TRUE(tokens->enabled());
  EXPECT_EQ(tokens->size(), 2u);
  auto training = tokens->Lookup("tok-training-0123456789");
  ASSERT_TRUE(training.ok());
  EXPECT_EQ(training->tenant, "training");
  EXPECT_FALSE(training->admin);
  auto ops = tokens->Lookup("tok-ops-0123456789abcdef");
  ASSERT_TRUE(ops.ok());
  EXPECT_TRUE(ops->admin);
  EXPECT_TRUE(absl::IsUnauthenticated(
      tokens->Lookup("tok-training-012345678").status()));
  EXPECT_TRUE(absl::IsUnauthenticated(tokens->Lookup("").status()));
}

TEST(TenantTokensTest, BadLinesAreRefusedNamingTheLine) {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c : {
           Case{"a\n", "tokens:1: expected"},
           Case{"\nbad/name tok-0123456789abcdef\n", "tokens:2: tenant names"},
           Case{"a short\n", "tokens:1: the token of tenant a is shorter"},
           Case{"a tok-0123456789abcdef root\n", "tokens:1: expected"},
           Case{"a tok-0123456789abcdef\nb tok-0123456789abcdef\n",
                "tokens:2: this token is already given"},
       }) {
    auto tokens = TenantTokens::Parse(c.text, "tokens");
    ASSERT_FALSE(tokens.ok()) << c.text;
    EXPECT_NE(tokens.status().message().find(c.error), std::string::npos)
        << tokens.status();
  }
}

TEST(TenantTokensTest, MissingOrOpenFilesAreRefused) {
  EXPECT_TRUE(absl::IsNotFound(
      TenantTokens::Load("/nonexistent/tokens").status()));
}

TEST(TenantTokensTest, NoTokensMeansNoAuthentication) {
  TenantTokens none;
  EXPECT_FALSE(none.enabled());
}

}  // namespace
}  // namespace pto::server
