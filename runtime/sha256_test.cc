#include "runtime/sha256.h"

#include "gtest/gtest.h"

namespace pto::runtime {
namespace {

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(ToHex(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, StreamingEqualsOneShot) {
  Sha256Hasher h;
  h.Update("a");
  h.Update("");
  h.Update("bc");
  EXPECT_EQ(h.Finish(), Sha256("abc"));
}

}  // namespace
}  // namespace pto::runtime
