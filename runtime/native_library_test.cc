#include "runtime/native_library.h"

#include <dirent.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/test_payload.h"

namespace pto::runtime {
namespace {

using ::testing::HasSubstr;

// A payload whose single block writes `value` to ((int64_t*)buffers[0])[0].
std::string ValueSource(int value, int abi = 1, bool with_block = true) {
  std::string src = R"cc(
#include <stdint.h>
extern "C" {
static void write_value(void* const* b, const int64_t*) {
  static_cast<int64_t*>(b[0])[0] = VALUE;
}
typedef void (*fn)(void* const*, const int64_t*);
int pto_abi_version(void) { return ABI; }
int pto_num_blocks(void) { return 1; }
)cc";
  if (with_block) {
    src += "fn pto_block(int i) { return i == 0 ? write_value : 0; }\n";
  }
  src += "}\n";
  return absl::StrReplaceAll(src, {{"VALUE", absl::StrCat(value)},
                                   {"ABI", absl::StrCat(abi)}});
}

std::string Compile(const std::string& source) {
  auto so = testing::CompileSharedObject(source);
  EXPECT_TRUE(so.ok()) << so.status();
  return so.ok() ? *so : std::string();
}

int64_t CallBlock(const NativeLibrary& lib, int index) {
  int64_t out = -1;
  void* buffers[] = {&out};
  lib.block(index)(buffers, nullptr);
  return out;
}

TEST(NativeLibraryTest, LoadsAndResolvesBlocks) {
  auto lib = NativeLibrary::Load(Compile(ValueSource(42)));
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ((*lib)->num_blocks(), 1);
  ASSERT_NE((*lib)->block(0), nullptr);
  EXPECT_EQ((*lib)->block(1), nullptr);
  EXPECT_EQ((*lib)->block(-1), nullptr);
  EXPECT_EQ(CallBlock(**lib, 0), 42);
}

// Two payloads loaded at once, and payloads loaded after others were
// unloaded (file descriptor numbers get reused), are each their own code.
TEST(NativeLibraryTest, DistinctPayloadsStayDistinct) {
  const std::string a = Compile(ValueSource(1));
  const std::string b = Compile(ValueSource(2));
  for (int round = 0; round < 20; ++round) {
    auto la = NativeLibrary::Load(a);
    auto lb = NativeLibrary::Load(b);
    ASSERT_TRUE(la.ok() && lb.ok());
    EXPECT_EQ(CallBlock(**la, 0), 1);
    EXPECT_EQ(CallBlock(**lb, 0), 2);
    la->reset();
    auto lb2 = NativeLibrary::Load(round % 2 ? a : b);
    ASSERT_TRUE(lb2.ok());
    EXPECT_EQ(CallBlock(**lb2, 0), round % 2 ? 1 : 2);
  }
}

TEST(NativeLibraryTest, TempFileFallbackLoadsAndLeavesNoFile) {
  const std::string dir = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
  setenv("TMPDIR", dir.c_str(), 1);
  auto count_files = [&] {
    int n = 0;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        n += std::string(e->d_name).rfind("pto_kernel_", 0) == 0;
      }
      closedir(d);
    }
    return n;
  };
  const int before = count_files();
  auto lib = NativeLibrary::Load(Compile(ValueSource(9)),
                                 NativeLibrary::Backing::kTempFile);
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_EQ(CallBlock(**lib, 0), 9);
  EXPECT_EQ(count_files(), before);  // unlinked right after dlopen
  auto garbage = NativeLibrary::Load("garbage", NativeLibrary::Backing::kTempFile);
  EXPECT_THAT(garbage.status().message(), HasSubstr("dlopen failed"));
  EXPECT_EQ(count_files(), before);
}

TEST(NativeLibraryTest, RefusesWrongAbiVersion) {
  auto lib = NativeLibrary::Load(Compile(ValueSource(1, /*abi=*/7)));
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(lib.status().message(), HasSubstr("ABI version 7"));
}

TEST(NativeLibraryTest, RefusesMissingSymbol) {
  auto lib = NativeLibrary::Load(Compile(ValueSource(1, 1, false)));
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(),
              HasSubstr("missing exported symbol pto_block"));
}

TEST(NativeLibraryTest, RefusesGarbage) {
  auto lib = NativeLibrary::Load("this is not an ELF file");
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(), HasSubstr("dlopen failed"));
  auto empty = NativeLibrary::Load("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("empty"));
}

}  // namespace
}  // namespace pto::runtime
