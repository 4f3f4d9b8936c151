// The fuzzer without libFuzzer: replays the seed corpus (valid graphs and
// inputs that once crashed the compiler), then runs FuzzOneInput over chains
// of MutateRequest outputs from a fixed seed, bounded in count and time, so
// the suite catches a crash on the service path the way the long libFuzzer
// run (README.md) does.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/fuzz/compile_request_fuzzer.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"

namespace pto::compiler::fuzz {
namespace {

constexpr size_t kMaxInputSize = 64 * 1024;

std::string CorpusDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (workspace ? workspace : "pto") +
         "/compiler/fuzz/corpus";
}

// The corpus files' names, sorted.
std::vector<std::string> CorpusNames() {
  std::vector<std::string> names;
  const std::string dir = CorpusDir();
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 3 && name.substr(name.size() - 3) == ".pb") names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Their contents, in the same order.
std::vector<std::string> ReadCorpus() {
  const std::string dir = CorpusDir();
  std::vector<std::string> out;
  for (const std::string& name : CorpusNames()) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    out.push_back(bytes.str());
  }
  return out;
}

int RunOne(const std::string& bytes) {
  return FuzzOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

TEST(FuzzReplayTest, CorpusLowersCleanly) {
  const std::vector<std::string> names = CorpusNames();
  ASSERT_GE(names.size(), 10u) << "corpus at " << CorpusDir();
  const std::vector<std::string> corpus = ReadCorpus();
  for (size_t k = 0; k < corpus.size(); ++k) {
    RunOne(corpus[k]);  // aborts on an unclean status
    pto::v1::CompileRequest request;
    ASSERT_TRUE(request.ParseFromString(corpus[k])) << names[k];
    const absl::Status s = CompileToSource(request);
    // Every seed but the crash regressions (which may be valid or not) is a
    // valid graph.
    if (names[k].rfind("crash_", 0) == 0) {
      EXPECT_TRUE(IsCleanStatus(s)) << names[k] << ": " << s;
    } else {
      EXPECT_TRUE(s.ok()) << names[k] << ": " << s;
    }
  }
}

// Mutation chains from the corpus: each step mutates the previous input
// (restarting from a seed every few steps), with a fixed seed, for at most
// kExecutions inputs or kBudget of wall time.
TEST(FuzzReplayTest, MutationsLowerCleanly) {
  constexpr int kExecutions = 300000;
  constexpr auto kBudget = std::chrono::seconds(45);
  const std::vector<std::string> corpus = ReadCorpus();
  ASSERT_FALSE(corpus.empty());
  google::protobuf::SetLogHandler(nullptr);  // byte mutations make invalid UTF-8
  std::mt19937 rng(20240601);
  const auto start = std::chrono::steady_clock::now();
  std::vector<uint8_t> buf(kMaxInputSize);
  size_t size = 0;
  int executions = 0, parsed = 0;
  for (; executions < kExecutions; ++executions) {
    if (executions % 8 == 0) {
      const std::string& seed = corpus[rng() % corpus.size()];
      size = std::min(seed.size(), buf.size());
      std::copy(seed.begin(), seed.begin() + size, buf.begin());
    }
    size = MutateRequest(buf.data(), size, buf.size(), rng());
    pto::v1::CompileRequest request;
    if (request.ParseFromArray(buf.data(), static_cast<int>(size))) ++parsed;
    FuzzOneInput(buf.data(), size);
    if (std::chrono::steady_clock::now() - start > kBudget) break;
  }
  std::printf("fuzz_replay_test: %d executions (%d parsed) in %.1f s\n", executions,
              parsed,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_GT(parsed, executions / 2);
}

}  // namespace
}  // namespace pto::compiler::fuzz
