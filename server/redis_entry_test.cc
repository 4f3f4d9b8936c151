#include "server/redis_entry.h"

#include "gtest/gtest.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"

namespace pto::server {
namespace {

const char kKey[] = "0123456789abcdef0123456789abcdef0123456789abcdef";
const char kSigningKey[] = "a-signing-key-of-at-least-32-bytes-long";

CompiledKernel SignedKernel() {
  CompiledKernel kernel;
  kernel.binary.set_key(kKey);
  kernel.binary.set_kernel_name("add");
  kernel.binary.set_native_payload(std::string(1000, '\x90'));
  kernel.binary.set_payload_sha256(
      runtime::Sha256(kernel.binary.native_payload()));
  kernel.binary.set_signature(
      runtime::SignKernelBinary(kernel.binary, kSigningKey));
  kernel.compile_seconds = 1.5;
  pto::v1::StageTiming& stage = kernel.stages.emplace_back();
  stage.set_stage("native_compile");
  stage.set_seconds(1.25);
  return kernel;
}

TEST(RedisEntryTest, RoundTrips) {
  const CompiledKernel kernel = SignedKernel();
  const std::string entry = EncodeRedisEntry(kSigningKey, kKey, kernel);
  absl::StatusOr<CompiledKernel> back =
      DecodeRedisEntry(kSigningKey, kKey, entry);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->binary.SerializeAsString(),
            kernel.binary.SerializeAsString());
  EXPECT_EQ(back->compile_seconds, 1.5);
  ASSERT_EQ(back->stages.size(), 1u);
  EXPECT_EQ(back->stages[0].stage(), "native_compile");
}

TEST(RedisEntryTest, AnyChangedByteIsRefused) {
  const std::string entry =
      EncodeRedisEntry(kSigningKey, kKey, SignedKernel());
  // Every position: the format, the seal, the record (metadata and payload).
  for (size_t i = 0; i < entry.size(); i += 7) {
    std::string tampered = entry;
    tampered[i] = static_cast<char>(tampered[i] ^ 0x01);
    absl::StatusOr<CompiledKernel> back =
        DecodeRedisEntry(kSigningKey, kKey, tampered);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << i;
  }
  EXPECT_FALSE(DecodeRedisEntry(kSigningKey, kKey, "").ok());
  EXPECT_FALSE(DecodeRedisEntry(kSigningKey, kKey, entry.substr(0, 30)).ok());
  EXPECT_FALSE(DecodeRedisEntry(kSigningKey, kKey, entry + "x").ok());
}

TEST(RedisEntryTest, AnEntryMovedToAnotherKeyIsRefused) {
  const std::string entry =
      EncodeRedisEntry(kSigningKey, kKey, SignedKernel());
  absl::StatusOr<CompiledKernel> back =
      DecodeRedisEntry(kSigningKey, "another-key", entry);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RedisEntryTest, AnotherSigningKeyIsRefused) {
  const std::string entry =
      EncodeRedisEntry(kSigningKey, kKey, SignedKernel());
  absl::StatusOr<CompiledKernel> back = DecodeRedisEntry(
      "some-other-signing-key-of-32-bytes-or-more", kKey, entry);
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
}

TEST(RedisEntryTest, ABinaryWithoutAValidSignatureIsRefusedEvenWhenSealed) {
  CompiledKernel unsigned_kernel = SignedKernel();
  unsigned_kernel.binary.clear_signature();
  absl::StatusOr<CompiledKernel> back = DecodeRedisEntry(
      kSigningKey, kKey,
      EncodeRedisEntry(kSigningKey, kKey, unsigned_kernel));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(back.status().message().find("unsigned"), std::string::npos)
      << back.status();

  CompiledKernel changed = SignedKernel();
  changed.binary.set_kernel_name("sub");  // signature no longer covers it
  back = DecodeRedisEntry(kSigningKey, kKey,
                          EncodeRedisEntry(kSigningKey, kKey, changed));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);

  CompiledKernel payload = SignedKernel();
  payload.binary.set_native_payload(std::string(1000, '\xcc'));
  back = DecodeRedisEntry(kSigningKey, kKey,
                          EncodeRedisEntry(kSigningKey, kKey, payload));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace pto::server
