#include "server/redis/credentials.h"

#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"

namespace pto::server::redis {
namespace {

TEST(CredentialsTest, OneLineIsTheDefaultUsersPassword) {
  absl::StatusOr<Credentials> c = ParseCredentials("s3cret pass\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->user, "");
  EXPECT_EQ(c->password, "s3cret pass");
}

TEST(CredentialsTest, TwoLinesAreUserThenPassword) {
  absl::StatusOr<Credentials> c = ParseCredentials("ptod\r\ns3cret\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->user, "ptod");
  EXPECT_EQ(c->password, "s3cret");
}

TEST(CredentialsTest, MalformedFilesAreRefused) {
  EXPECT_FALSE(ParseCredentials("").ok());
  EXPECT_FALSE(ParseCredentials("\n").ok());
  EXPECT_FALSE(ParseCredentials("a\nb\nc\n").ok());
  EXPECT_FALSE(ParseCredentials("\npassword").ok());
  EXPECT_FALSE(ParseCredentials("us er\npassword").ok());
  EXPECT_FALSE(ParseCredentials(std::string(5000, 'x')).ok());
}

TEST(CredentialsTest, FileErrorsNameTheFileNotTheSecret) {
  const std::string path =
      std::string(getenv("TEST_TMPDIR")) + "/redis-credentials";
  std::ofstream(path) << "a\nb\nsecret-value\n";
  absl::StatusOr<Credentials> c = ReadCredentialsFile(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(path), std::string::npos);
  EXPECT_EQ(c.status().message().find("secret-value"), std::string::npos);
  EXPECT_EQ(ReadCredentialsFile(path + ".missing").status().code(),
            absl::StatusCode::kNotFound);
  std::ofstream(path) << "ptod\ns3cret\n";
  c = ReadCredentialsFile(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->user, "ptod");
}

}  // namespace
}  // namespace pto::server::redis
