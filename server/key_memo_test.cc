#include "server/key_memo.h"

#include <atomic>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pto::server {
namespace {

// Keys a request by its target and counts the calls; targets starting with
// "bad" are errors.
class CountingBackend : public CompilerBackend {
 public:
  absl::StatusOr<std::string> Key(
      const pto::v1::CompileRequest& request) override {
    ++keys;
    if (request.target().rfind("bad", 0) == 0) {
      return absl::InvalidArgumentError("bad target");
    }
    std::string key = absl::StrCat("k", request.target(), ":",
                                   request.options_size());
    // In name order, as a cache key must be.
    std::map<std::string, std::string> options(request.options().begin(),
                                               request.options().end());
    for (const auto& [name, value] : options) {
      absl::StrAppend(&key, ",", name, "=", value);
    }
    return key;
  }
  absl::StatusOr<CompiledKernel> Compile(
      const pto::v1::CompileRequest&) override {
    return absl::UnimplementedError("not here");
  }
  std::atomic<int> keys{0};
};

pto::v1::CompileRequest Request(const std::string& target) {
  pto::v1::CompileRequest request;
  request.set_target(target);
  (*request.mutable_options())["b"] = "2";
  (*request.mutable_options())["a"] = "1";
  return request;
}

TEST(KeyMemoTest, RepeatedRequestSkipsTheBackend) {
  CountingBackend backend;
  KeyMemo memo(1 << 20, 1 << 16);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::string> key = memo.Key(backend, "t", Request("host"));
    ASSERT_TRUE(key.ok()) << key.status();
    EXPECT_EQ(*key, "khost:2,a=1,b=2");
  }
  EXPECT_EQ(backend.keys.load(), 1);
  EXPECT_EQ(memo.size(), 1u);

  // An equal request built in another order: same bytes, same entry.
  pto::v1::CompileRequest other;
  (*other.mutable_options())["a"] = "1";
  other.set_target("host");
  (*other.mutable_options())["b"] = "2";
  ASSERT_TRUE(memo.Key(backend, "t", other).ok());
  EXPECT_EQ(backend.keys.load(), 1);

  // A different request is keyed by the backend.
  ASSERT_EQ(*memo.Key(backend, "t", Request("gpu")), "kgpu:2,a=1,b=2");
  EXPECT_EQ(backend.keys.load(), 2);
}

TEST(KeyMemoTest, TenantsDoNotShareEntries) {
  CountingBackend backend;
  KeyMemo memo(1 << 20, 1 << 16);
  ASSERT_TRUE(memo.Key(backend, "alice", Request("host")).ok());
  ASSERT_TRUE(memo.Key(backend, "bob", Request("host")).ok());
  // "a" + "lice..." must not collide with "al" + "ice...".
  ASSERT_TRUE(memo.Key(backend, "", Request("host")).ok());
  EXPECT_EQ(backend.keys.load(), 3);
  ASSERT_TRUE(memo.Key(backend, "bob", Request("host")).ok());
  EXPECT_EQ(backend.keys.load(), 3);
}

TEST(KeyMemoTest, ErrorsAreNotRemembered) {
  CountingBackend backend;
  KeyMemo memo(1 << 20, 1 << 16);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::string> key = memo.Key(backend, "t", Request("bad"));
    EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(backend.keys.load(), 2);
  EXPECT_EQ(memo.size(), 0u);
}

TEST(KeyMemoTest, LargeRequestsAndAZeroCapacityBypassTheMemo) {
  CountingBackend backend;
  KeyMemo small(1 << 20, /*max_request_bytes=*/8);
  ASSERT_TRUE(small.Key(backend, "t", Request("host")).ok());
  ASSERT_TRUE(small.Key(backend, "t", Request("host")).ok());
  EXPECT_EQ(backend.keys.load(), 2);
  EXPECT_EQ(small.size(), 0u);

  KeyMemo off(0, 1 << 16);
  ASSERT_TRUE(off.Key(backend, "t", Request("host")).ok());
  ASSERT_TRUE(off.Key(backend, "t", Request("host")).ok());
  EXPECT_EQ(backend.keys.load(), 4);
  EXPECT_EQ(off.size(), 0u);
}

TEST(KeyMemoTest, StaysWithinItsBound) {
  CountingBackend backend;
  KeyMemo memo(4096, 1 << 16);
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(memo.Key(backend, "t", Request(absl::StrCat("t", i))).ok());
    EXPECT_LE(memo.bytes(), 4096u);
  }
  EXPECT_GT(memo.size(), 0u);
  EXPECT_LT(memo.size(), 200u);
}

TEST(KeyMemoTest, KeysOfWireBytesAreRememberedPerTenant) {
  KeyMemo memo(1 << 20, /*max_request_bytes=*/64);
  const std::string bytes = Request("host").SerializeAsString();
  EXPECT_FALSE(memo.KeyOfBytes("t", bytes).has_value());
  memo.Remember("t", bytes, "k1");
  ASSERT_TRUE(memo.KeyOfBytes("t", bytes).has_value());
  EXPECT_EQ(*memo.KeyOfBytes("t", bytes), "k1");
  // Another tenant, other bytes: not found.
  EXPECT_FALSE(memo.KeyOfBytes("u", bytes).has_value());
  EXPECT_FALSE(memo.KeyOfBytes("t", bytes + "x").has_value());
  // Key() of the same request finds what Remember() stored: the bytes of a
  // request without maps in disorder are its deterministic serialization.
  CountingBackend backend;
  pto::v1::CompileRequest plain;
  plain.set_target("host");
  memo.Remember("t", plain.SerializeAsString(), "k2");
  ASSERT_EQ(*memo.Key(backend, "t", plain), "k2");
  EXPECT_EQ(backend.keys.load(), 0);

  // Too large to remember, and a memo that is off, remember nothing.
  const std::string big(65, 'x');
  memo.Remember("t", big, "k3");
  EXPECT_FALSE(memo.KeyOfBytes("t", big).has_value());
  KeyMemo off(0, 1 << 16);
  off.Remember("t", bytes, "k1");
  EXPECT_FALSE(off.KeyOfBytes("t", bytes).has_value());
  EXPECT_EQ(off.size(), 0u);
}

}  // namespace
}  // namespace pto::server
