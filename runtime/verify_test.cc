#include <fstream>
#include <random>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"
#include "runtime/kernel.h"
#include "runtime/kernel_abi.h"
#include "runtime/sha256.h"
#include "runtime/signature.h"
#include "runtime/test_payload.h"

namespace pto::runtime {
namespace {

using ::testing::HasSubstr;

pto::v1::KernelBinary Good() {
  auto b = testing::AddOneTimesTwoBinary(100, 32);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : pto::v1::KernelBinary();
}

void ExpectRefused(const pto::v1::KernelBinary& b, absl::StatusCode code,
                   const std::string& what) {
  absl::Status s = VerifyBinary(b);
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_THAT(s.message(), HasSubstr("kernel binary refused: "));
  EXPECT_THAT(s.message(), HasSubstr(what));
  // Load refuses it the same way, before any code is loaded.
  auto k = Kernel::Load(b);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status(), s);
}

TEST(VerifyBinaryTest, AcceptsAGoodBinary) {
  EXPECT_TRUE(VerifyBinary(Good()).ok()) << VerifyBinary(Good());
}

TEST(VerifyBinaryTest, RefusesFlippedPayloadByte) {
  pto::v1::KernelBinary b = Good();
  const std::string expected = ToHex(b.payload_sha256());
  std::string* payload = b.mutable_native_payload();
  (*payload)[payload->size() / 2] ^= 0x01;
  const std::string got = ToHex(Sha256(*payload));
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "payload checksum mismatch (expected " + expected + ", got " +
                    got + ")");
}

TEST(VerifyBinaryTest, RefusesMissingChecksum) {
  pto::v1::KernelBinary b = Good();
  b.clear_payload_sha256();
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "payload checksum mismatch (expected <none>");
}

TEST(VerifyBinaryTest, RefusesForeignTargets) {
  for (const char* target : {"host-riscv64", "cuda-sm90", ""}) {
    pto::v1::KernelBinary b = Good();
    b.set_target(target);
    ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                  std::string("target '") + target +
                      "' cannot run on this machine (this machine runs: " +
                      "host-x86_64");
  }
}

// A CPU (or OS) without AMX-BF16, simulated through the probe: the AMX
// target is refused naming what it needs, "host" no longer resolves to it,
// and the other targets still run.
TEST(VerifyBinaryTest, RefusesAmxTargetWithoutAmx) {
  SetAmxProbeForTesting([] { return false; });
  pto::v1::KernelBinary b = Good();
  b.set_target(kHostAmxTarget);
  ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                std::string("target '") + kHostAmxTarget +
                    "' cannot run on this machine (this machine runs: host-x86_64");
  ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                "the target needs x86-64-v3, AMX-TILE and AMX-BF16, and the OS's "
                "permission for the AMX tile state");
  EXPECT_NE(NativeHostTarget(), kHostAmxTarget);
  EXPECT_FALSE(CanRunHostTarget(kHostAmxTarget));
  EXPECT_TRUE(VerifyBinary(Good()).ok());
  SetAmxProbeForTesting([] { return true; });
  EXPECT_EQ(CanRunHostTarget(kHostAmxTarget), CanRunHostTarget("host-x86_64-v3"));
  SetAmxProbeForTesting(nullptr);
}

// A CPU (or OS) without AVX-512, simulated: both v4 targets are refused
// naming what they need; v3 still runs.
TEST(VerifyBinaryTest, RefusesV4TargetsWithoutAvx512) {
  SetAvx512ProbeForTesting([] { return false; });
  for (const char* target : {kHostV4Target, kHostV4AmxTarget}) {
    pto::v1::KernelBinary b = Good();
    b.set_target(target);
    ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                  std::string("target '") + target + "' cannot run on this machine");
    ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                  "the target needs " + HostTargetNeeds(target));
  }
  EXPECT_NE(NativeHostTarget(), kHostV4Target);
  EXPECT_NE(NativeHostTarget(), kHostV4AmxTarget);
  EXPECT_TRUE(VerifyBinary(Good()).ok());
  SetAvx512ProbeForTesting(nullptr);
}

TEST(VerifyBinaryTest, RefusesWrongFormatVersion) {
  pto::v1::KernelBinary b = Good();
  b.set_format_version(PTO_KERNEL_FORMAT_VERSION + 1);
  ExpectRefused(b, absl::StatusCode::kFailedPrecondition,
                "format version 2 is not supported (this runtime reads "
                "version 1)");
  b.set_format_version(0);
  ExpectRefused(b, absl::StatusCode::kFailedPrecondition, "format version 0");
}

TEST(VerifyBinaryTest, RefusesWrongMagic) {
  pto::v1::KernelBinary b = Good();
  b.set_magic(0x12345678);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "bad magic 0x12345678 (expected 0x4F545031");
  ExpectRefused(pto::v1::KernelBinary(), absl::StatusCode::kInvalidArgument,
                "bad magic 0x00000000");
}

TEST(VerifyBinaryTest, RefusesFunctionIndexOutOfRange) {
  pto::v1::KernelBinary b = Good();
  b.mutable_execute_graph()->mutable_tasks(3)->set_function(2);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "execute graph: task 3: function index 2 out of range (2 "
                "functions)");
}

TEST(VerifyBinaryTest, RefusesDependencyOnLaterTask) {
  pto::v1::KernelBinary b = Good();
  b.mutable_execute_graph()->mutable_tasks(1)->add_deps(1);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "task 1: dependency 1 is not an earlier task");
  b = Good();
  b.mutable_execute_graph()->mutable_tasks(0)->add_deps(5);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "task 0: dependency 5 is not an earlier task");
}

TEST(VerifyBinaryTest, RefusesWrongArgumentCount) {
  pto::v1::KernelBinary b = Good();
  b.mutable_execute_graph()->mutable_tasks(2)->add_args(7);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "task 2: 3 args but function 0 'add_one' takes 2");
}

TEST(VerifyBinaryTest, RefusesFewerBuffersThanParameters) {
  pto::v1::KernelBinary b = Good();
  b.add_params()->set_name("z");
  b.add_params()->set_name("q");
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "3 buffers but 4 parameters");
}

TEST(VerifyBinaryTest, RefusesNegativeWorkspace) {
  pto::v1::KernelBinary b = Good();
  b.mutable_execute_graph()->mutable_buffers(2)->set_workspace_bytes(-4);
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                "buffer 2: workspace_bytes -4 is out of range");
}

// Corrupted binaries (random bytes of the serialized form changed) are
// refused or accepted, never crash the verifier or the loader.
TEST(VerifyBinaryTest, SurvivesRandomCorruption) {
  const std::string wire = Good().SerializeAsString();
  std::mt19937 rng(123);
  int refused = 0;
  for (int i = 0; i < 400; ++i) {
    std::string bytes = wire;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    pto::v1::KernelBinary b;
    if (!b.ParseFromString(bytes)) continue;
    absl::Status s = VerifyBinary(b);
    if (!s.ok()) {
      ++refused;
      EXPECT_THAT(s.message(), HasSubstr("kernel binary refused: "));
      continue;
    }
    // Accepted: the change was harmless to the checks (e.g. a name); the
    // loader must cope too.
    auto k = Kernel::Load(b);
    (void)k;
  }
  EXPECT_GT(refused, 100);
}

class SignatureTest : public ::testing::Test {
 protected:
  void SetUp() override { SetKernelVerificationKey(kKey); }
  void TearDown() override { SetKernelVerificationKey(""); }
  static constexpr char kKey[] = "0123456789abcdef0123456789abcdef";

  pto::v1::KernelBinary Signed() {
    pto::v1::KernelBinary b = Good();
    b.set_signature(SignKernelBinary(b, kKey));
    return b;
  }
};

TEST_F(SignatureTest, AcceptsABinarySignedWithTheKey) {
  EXPECT_TRUE(VerifyBinary(Signed()).ok()) << VerifyBinary(Signed());
}

TEST_F(SignatureTest, RefusesUnsigned) {
  ExpectRefused(Good(), absl::StatusCode::kPermissionDenied, "unsigned");
}

TEST_F(SignatureTest, RefusesATamperedSignature) {
  pto::v1::KernelBinary b = Signed();
  (*b.mutable_signature())[5] ^= 0x40;
  ExpectRefused(b, absl::StatusCode::kPermissionDenied, "wrong signature");
  b.set_signature("short");
  ExpectRefused(b, absl::StatusCode::kPermissionDenied, "wrong signature");
}

TEST_F(SignatureTest, RefusesAnotherKeysSignature) {
  pto::v1::KernelBinary b = Good();
  b.set_signature(SignKernelBinary(b, "another key, also 32 bytes long!"));
  ExpectRefused(b, absl::StatusCode::kPermissionDenied, "wrong signature");
}

TEST_F(SignatureTest, RefusesEachSignedFieldChangedAfterSigning) {
  const pto::v1::KernelBinary good = Signed();
  std::vector<std::pair<std::string, pto::v1::KernelBinary>> changed;
  changed.emplace_back("key", good);
  changed.back().second.set_key(std::string(64, 'f'));
  changed.emplace_back("fingerprint", good);
  changed.back().second.set_compiler_fingerprint("other");
  changed.emplace_back("task arg", good);
  {
    pto::v1::Task* task =
        changed.back().second.mutable_execute_graph()->mutable_tasks(0);
    ASSERT_GT(task->args_size(), 0);
    task->set_args(0, task->args(0) + 1);
  }
  // Every field of metadata is signed, the debug text included.
  changed.emplace_back("kernel name", good);
  changed.back().second.set_kernel_name("renamed");
  changed.emplace_back("pto text", good);
  changed.back().second.set_pto_text(good.pto_text() + "\n; changed");
  changed.emplace_back("param shape", good);
  changed.back().second.mutable_params(0)->mutable_shape()->Clear();
  // New native code with a matching checksum: the checksum is signed.
  changed.emplace_back("payload", good);
  changed.back().second.mutable_native_payload()->append("x");
  changed.back().second.set_payload_sha256(
      Sha256(changed.back().second.native_payload()));
  for (const auto& [what, b] : changed) {
    SCOPED_TRACE(what);
    absl::Status s = VerifyBinary(b);
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  }
}

TEST_F(SignatureTest, WithoutAKeyUnsignedBinariesLoad) {
  SetKernelVerificationKey("");
  EXPECT_TRUE(VerifyBinary(Good()).ok());
}

TEST(SigningKeyFileTest, ShortOrMissingKeyFilesFailNamingTheFile) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/k";
  {
    std::ofstream(path) << "too short\n";
  }
  auto key = ReadSigningKeyFile(path);
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(key.status().message(), HasSubstr(path));
  {
    std::ofstream(path) << std::string(64, 'a') << "\n";
  }
  key = ReadSigningKeyFile(path);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(*key, std::string(64, 'a'));
  EXPECT_FALSE(ReadSigningKeyFile(path + ".missing").ok());
}

}  // namespace
}  // namespace pto::runtime
