#include "compiler/key/fingerprint.h"

#include <sys/stat.h>

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
#include "compiler/util/subprocess.h"
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

std::string CxxVersion() {
  SubprocessResult r;
  absl::Status s = RunSubprocess({"c++", "--version"}, absl::Seconds(30), &r);
  EXPECT_TRUE(s.ok() && r.exited && r.exit_code == 0) << s;
  return r.output;
}

// The real fingerprint is FingerprintOf the real inputs, and each of those
// inputs is what the host target actually uses: the embedded headers, the
// compiler arguments of every known host target at every -O level, the
// toolchain's version. Leaving any of them out of CompilerFingerprint()
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
  EXPECT_EQ(in.flags.size(), targets.size() * 4);  // -O0 .. -O3
  for (const std::string& target : targets) {
    for (int level = 0; level <= 3; ++level) {
      const std::vector<std::string> args =
          HostCompilerArgs(target, level, "kernel.cc", "kernel.so");
      ASSERT_FALSE(args.empty()) << target;
      EXPECT_THAT(in.flags, Contains(absl::StrCat(target, " -O", level, ": ",
                                                  absl::StrJoin(args, " "))));
    }
  }

  EXPECT_EQ(in.toolchain, CxxVersion());
  EXPECT_FALSE(in.toolchain.empty());
  EXPECT_EQ(in.compiler, CompilerIdentity("c++"));
  EXPECT_THAT(in.compiler, Not(HasSubstr("unresolved")));
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
// line reaches the fingerprint): a stand-in compiler records its arguments.
TEST(FingerprintTest, BuildPayloadRunsHostCompilerArgs) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-fingerprint-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string record = dir->path() + "/argv";
  const std::string script = dir->path() + "/record-cxx";
  ASSERT_TRUE(WriteFile(script, absl::StrCat("#!/bin/sh\nprintf '%s\\n' \"$@\" > '",
                                             record, "'\nexit 1\n"))
                  .ok());
  chmod(script.c_str(), 0700);
  for (const std::string& target : runtime::KnownHostTargets()) {
    HostBackend backend(target);
    NativeBuildOptions options;
    options.cxx = script;
    options.opt_level = 3;
    options.work_dir = dir->path();
    EXPECT_FALSE(backend.BuildPayload("int x;\n", options).ok());
    absl::StatusOr<std::string> recorded = ReadFile(record);
    ASSERT_TRUE(recorded.ok()) << recorded.status();
    std::vector<std::string> argv = absl::StrSplit(*recorded, '\n');
    ASSERT_FALSE(argv.empty());
    argv.pop_back();  // after the last newline
    // The private directory's paths, as the command line named them.
    std::string source, output;
    for (size_t i = 0; i < argv.size(); ++i) {
      if (argv[i] == "-o" && i + 1 < argv.size()) output = argv[i + 1];
      if (absl::EndsWith(argv[i], "/kernel.cc")) source = argv[i];
    }
    ASSERT_FALSE(source.empty()) << *recorded;
    EXPECT_EQ(argv, HostCompilerArgs(target, 3, source, output)) << target;
  }
}

}  // namespace
}  // namespace pto::compiler
