#include "client/ptoc/graph_io.h"

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::ptoc {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST(GraphIoTest, ParsesTextAndReportsPosition) {
  auto g = ParseGraphText("name: \"k\"\nops { kind: \"add\" }\n", "g.pbtxt");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops(0).kind(), "add");

  auto bad = ParseGraphText("name: \"k\"\nops { kindd: \"add\" }\n", "g.pbtxt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("g.pbtxt: "));
  EXPECT_THAT(bad.status().message(), HasSubstr("line 2, column "));
  EXPECT_THAT(bad.status().message(), HasSubstr("kindd"));
}

TEST(GraphIoTest, ReadsFilesAndWritesBinaries) {
  const std::string text = TempPath("g.pbtxt");
  std::ofstream(text) << "name: \"from_file\"\n";
  auto g = ReadGraphFile(text);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->name(), "from_file");

  const std::string wire = TempPath("g.pb");
  std::ofstream(wire, std::ios::binary) << g->SerializeAsString();
  auto g2 = ReadGraphFile(wire);
  ASSERT_TRUE(g2.ok()) << g2.status();
  EXPECT_EQ(g2->name(), "from_file");

  auto missing = ReadGraphFile(TempPath("nope.pbtxt"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.pbtxt"));

  pto::v1::KernelBinary b;
  b.set_kernel_name("k");
  const std::string out = TempPath("k.bin");
  ASSERT_TRUE(WriteBinaryFile(out, b).ok());
  auto back = ReadBinaryFile(out);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kernel_name(), "k");
  auto not_binary = ReadBinaryFile(text);
  EXPECT_FALSE(not_binary.ok());

  EXPECT_FALSE(WriteBinaryFile("/nonexistent/dir/k.bin", b).ok());
}

}  // namespace
}  // namespace pto::ptoc
