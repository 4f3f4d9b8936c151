#include "compiler/key/fingerprint.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "compiler/compile.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

FingerprintInputs Sample() {
  FingerprintInputs in;
  in.build_id = "build-1";
  in.headers = {{"a.h", "int a;"}, {"b.h", "int b;"}};
  in.flags = {"t -O2: -O2 -march=x"};
  in.toolchain = "cc 1.0";
  in.compiler = "/usr/bin/cc: 00ff";
  return in;
}

TEST(FingerprintTest, IsLowercaseHexSha256AndDeterministic) {
  const std::string f = FingerprintOf(Sample());
  ASSERT_EQ(f.size(), 64u);
  EXPECT_EQ(f.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(FingerprintOf(Sample()), f);
}

TEST(FingerprintTest, ChangesWithEveryInput) {
  const std::string base = FingerprintOf(Sample());
  std::vector<std::pair<std::string, std::function<void(FingerprintInputs*)>>>
      changes = {
          {"build id", [](FingerprintInputs* in) { in->build_id = "build-2"; }},
          {"one header's contents",
           [](FingerprintInputs* in) { in->headers[1].second += " "; }},
          {"one header's name",
           [](FingerprintInputs* in) { in->headers[0].first = "c.h"; }},
          {"an added header",
           [](FingerprintInputs* in) { in->headers.emplace_back("d.h", ""); }},
          {"a removed header",
           [](FingerprintInputs* in) { in->headers.pop_back(); }},
          {"header order",
           [](FingerprintInputs* in) { std::swap(in->headers[0], in->headers[1]); }},
          {"a changed flag",
           [](FingerprintInputs* in) { in->flags[0] = "t -O2: -O2 -march=y"; }},
          {"an added flag line",
           [](FingerprintInputs* in) { in->flags.push_back("u -O2: -O2"); }},
          {"no flags", [](FingerprintInputs* in) { in->flags.clear(); }},
          {"toolchain", [](FingerprintInputs* in) { in->toolchain = "cc 1.1"; }},
          {"compiler", [](FingerprintInputs* in) { in->compiler = "/usr/bin/cc: 00fe"; }},
          // Bytes moved from one field to the next: the encoding is unambiguous.
          {"header boundary",
           [](FingerprintInputs* in) {
             in->headers[0] = {"a.hint a;", ""};
           }},
      };
  std::set<std::string> seen = {base};
  for (const auto& [what, change] : changes) {
    FingerprintInputs in = Sample();
    change(&in);
    const std::string f = FingerprintOf(in);
    EXPECT_NE(f, base) << what;
    EXPECT_TRUE(seen.insert(f).second) << what << " collides with another change";
  }
}

// The real fingerprint is FingerprintOf the real inputs, and each of those
// inputs is what the host target actually uses: the embedded headers, the
// compiler arguments of every known host target at every -O level with
// either link, the toolchain. Leaving any of them out of CompilerFingerprint()
// fails here.
TEST(FingerprintTest, CompilerFingerprintHashesTheActualInputs) {
  const FingerprintInputs in = CurrentFingerprintInputs();
  EXPECT_EQ(CompilerFingerprint(), FingerprintOf(in));

  EXPECT_EQ(in.build_id, kCompilerBuildId);
  EXPECT_FALSE(in.build_id.empty());

  const std::vector<EmbeddedFile>& headers = EmbeddedHostHeaders();
  ASSERT_EQ(in.headers.size(), headers.size());
  std::set<std::string> names;
  for (size_t i = 0; i < headers.size(); ++i) {
    EXPECT_EQ(in.headers[i].first, headers[i].name);
    EXPECT_EQ(in.headers[i].second, headers[i].contents) << headers[i].name;
    names.insert(headers[i].name);
  }
  EXPECT_THAT(names, Contains("pto_tile.h"));
  EXPECT_THAT(names, Contains("kernel_abi.h"));

  const std::vector<std::string>& targets = runtime::KnownHostTargets();
  EXPECT_EQ(in.flags.size(), targets.size() * 4 * 2);  // -O0 .. -O3, two links
  for (const std::string& target : targets) {
    for (int level = 0; level <= 3; ++level) {
      const std::vector<std::string> lean =
          HostCompilerArgs(target, level, "kernel.cc", "kernel.so", HostLink::kLean);
      const std::vector<std::string> full =
          HostCompilerArgs(target, level, "kernel.cc", "kernel.so", HostLink::kFull);
      ASSERT_FALSE(lean.empty()) << target;
      EXPECT_NE(lean, full);
      EXPECT_THAT(in.flags, Contains(absl::StrCat(target, " -O", level, ": ",
                                                  absl::StrJoin(lean, " "))));
      EXPECT_THAT(in.flags, Contains(absl::StrCat(target, " -O", level, " full link: ",
                                                  absl::StrJoin(full, " "))));
    }
  }

  EXPECT_EQ(in.toolchain, CompilerIdentity("c++"));
  EXPECT_THAT(in.toolchain, Not(HasSubstr("unresolved")));
  EXPECT_EQ(in.compiler, CompilerIdentity("c++"));
  EXPECT_THAT(in.compiler, Not(HasSubstr("unresolved")));
}

// The toolchain is the `c++` on PATH, identified by its bytes and never run:
// another driver there, or the same path with other bytes (a new release),
// gives another fingerprint.
TEST(FingerprintTest, ToolchainIsTheDriverOnPathReadNotRun) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-fingerprint-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string mark = dir->path() + "/ran";
  const std::string driver = dir->path() + "/c++";
  auto install = [&](const std::string& version) {
    ASSERT_TRUE(WriteFile(driver, absl::StrCat("#!/bin/sh\ntouch '", mark, "'\necho '",
                                               version, "'\n"))
                    .ok());
    chmod(driver.c_str(), 0700);
  };
  const char* old_path = getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  const FingerprintInputs system = CurrentFingerprintInputs("g++");

  install("c++ 99.1");
  setenv("PATH", absl::StrCat(dir->path(), ":", saved).c_str(), 1);
  const FingerprintInputs first = CurrentFingerprintInputs("g++");
  install("c++ 99.2");
  const FingerprintInputs second = CurrentFingerprintInputs("g++");
  setenv("PATH", saved.c_str(), 1);

  EXPECT_TRUE(absl::StartsWith(first.toolchain, driver + ": ")) << first.toolchain;
  EXPECT_NE(first.toolchain, system.toolchain);
  EXPECT_NE(second.toolchain, first.toolchain);
  EXPECT_EQ(first.compiler, system.compiler);  // g++ is not on the stand-in's path
  EXPECT_NE(FingerprintOf(first), FingerprintOf(system));
  EXPECT_NE(FingerprintOf(second), FingerprintOf(first));
  EXPECT_FALSE(std::filesystem::exists(mark)) << "the stand-in driver was run";
}

// Every header an embedded header includes by a quoted name is embedded
// too (a topic header missing from the genrule's list would leave generated
// code unable to compile, and its changes out of the fingerprint), and
// pto_tile.h includes the tile topic headers.
TEST(FingerprintTest, EmbeddedHeadersIncludeOnlyEmbeddedHeaders) {
  const std::vector<EmbeddedFile>& headers = EmbeddedHostHeaders();
  std::set<std::string> names;
  for (const EmbeddedFile& h : headers) names.insert(h.name);
  int topics = 0;
  for (const EmbeddedFile& h : headers) {
    for (absl::string_view line : absl::StrSplit(h.contents, '\n')) {
      if (!absl::ConsumePrefix(&line, "#include \"")) continue;
      const std::string included(line.substr(0, line.find('"')));
      EXPECT_THAT(names, Contains(included)) << h.name << " includes " << included;
      if (std::string(h.name) == "pto_tile.h" && absl::StartsWith(included, "pto_tile_")) {
        ++topics;
      }
    }
  }
  EXPECT_GE(topics, 2) << "pto_tile.h includes its topic headers";
}

TEST(FingerprintTest, FlagLinesCarryEachTargetsIsaFlags) {
  const FingerprintInputs in = CurrentFingerprintInputs();
  const std::string all = absl::StrJoin(in.flags, "\n");
  for (const std::string& target : runtime::KnownHostTargets()) {
    const std::vector<std::string> isa = runtime::HostTargetFlags(target);
    ASSERT_FALSE(isa.empty()) << target;
    EXPECT_THAT(all, HasSubstr(absl::StrCat(target, " -O2: -std=c++17 -O2 ",
                                            absl::StrJoin(isa, " "), " -fPIC")));
  }
  EXPECT_THAT(all, HasSubstr("-ffp-contract=off"));
}

// BuildPayload runs exactly HostCompilerArgs (so a flag added to the command
// line reaches the fingerprint): a stand-in compiler that fails records its
// arguments, the lean link's and then the full link's.
TEST(FingerprintTest, BuildPayloadRunsHostCompilerArgs) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-fingerprint-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string record = dir->path() + "/argv";
  const std::string script = dir->path() + "/record-cxx";
  ASSERT_TRUE(WriteFile(script, absl::StrCat("#!/bin/sh\nprintf '%s\\n' \"$@\" -- >> '",
                                             record, "'\nexit 1\n"))
                  .ok());
  chmod(script.c_str(), 0700);
  for (const std::string& target : runtime::KnownHostTargets()) {
    HostBackend backend(target);
    NativeBuildOptions options;
    options.cxx = script;
    options.opt_level = 3;
    options.work_dir = dir->path();
    options.pch_dir = "off";
    ASSERT_TRUE(WriteFile(record, "").ok());
    EXPECT_FALSE(backend.BuildPayload("int x;\n", options).ok());
    absl::StatusOr<std::string> recorded = ReadFile(record);
    ASSERT_TRUE(recorded.ok()) << recorded.status();
    std::vector<std::vector<std::string>> runs(1);
    for (absl::string_view line : absl::StrSplit(*recorded, '\n', absl::SkipEmpty())) {
      if (line == "--") {
        runs.emplace_back();
      } else {
        runs.back().emplace_back(line);
      }
    }
    runs.pop_back();  // after the last "--"
    ASSERT_EQ(runs.size(), 2u) << *recorded;
    // The private directory's paths, as the command lines named them.
    std::string source, output;
    for (size_t i = 0; i < runs[0].size(); ++i) {
      if (runs[0][i] == "-o" && i + 1 < runs[0].size()) output = runs[0][i + 1];
      if (absl::EndsWith(runs[0][i], "/kernel.cc")) source = runs[0][i];
    }
    ASSERT_FALSE(source.empty()) << *recorded;
    EXPECT_EQ(runs[0], HostCompilerArgs(target, 3, source, output, HostLink::kLean)) << target;
    for (size_t i = 0; i < runs[1].size(); ++i) {
      if (runs[1][i] == "-o" && i + 1 < runs[1].size()) output = runs[1][i + 1];
      if (absl::EndsWith(runs[1][i], "/kernel.cc")) source = runs[1][i];
    }
    EXPECT_EQ(runs[1], HostCompilerArgs(target, 3, source, output, HostLink::kFull)) << target;
  }
}

}  // namespace
}  // namespace pto::compiler
