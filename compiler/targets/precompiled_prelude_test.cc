// Precompiled preludes with the system C++ compiler: built once and reused,
// a corrupt or stale .gch rebuilt or ignored, and kernels the same byte for
// byte with and without one.
#include "compiler/targets/precompiled_prelude.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "compiler/compile.h"
#include "compiler/key/fingerprint.h"
#include "compiler/targets/host/embedded_headers.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using ::pto::compiler::testing::ExpAddGraph;
using ::pto::compiler::testing::MatmulGraph;
using ::testing::HasSubstr;

std::vector<std::string> GchFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string path = e.path().string();
    if (path.find(".gch") != std::string::npos) out.push_back(path);
  }
  return out;
}

// The payload Compile() builds for `graph` with precompiled preludes in `pch_dir`.
std::string Payload(const pto::v1::Graph& graph, const std::string& pch_dir) {
  CompileSettings settings;
  settings.pch_dir = pch_dir;
  absl::StatusOr<CompileResult> r = Compile(graph, "host", {}, settings);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->binary.native_payload() : "";
}

PreludeSpec TileSpec() {
  const std::string target = *ResolveTarget("host");
  PreludeSpec spec;
  spec.text = "#include <stdint.h>\n#include \"kernel_abi.h\"\n#include \"pto_tile.h\"\n";
  for (const EmbeddedFile& f : EmbeddedHostHeaders()) spec.headers.push_back({f.name, f.contents});
  spec.flags = HostCodeFlags(target, 2);
  spec.fingerprint = FingerprintFor("c++");
  return spec;
}

TEST(PrecompiledPreludeTest, LeadingIncludesAreTheIncludeLinesTheSourceStartsWith) {
  EXPECT_EQ(LeadingIncludes("// Generated.\n#include <stdint.h>\n#include \"a.h\"\n\nint x;\n"
                            "#include \"b.h\"\n"),
            "#include <stdint.h>\n#include \"a.h\"\n");
  EXPECT_EQ(LeadingIncludes("int x;\n#include \"a.h\"\n"), "");
  EXPECT_EQ(LeadingIncludes(""), "");
}

TEST(PrecompiledPreludeTest, DirectoryFromTheSettingTheEnvironmentOrHome) {
  EXPECT_EQ(PreludeDir("/x/pch"), "/x/pch");
  EXPECT_EQ(PreludeDir("off"), "");
  setenv("PTO_PCH_DIR", "/env/pch", 1);
  EXPECT_EQ(PreludeDir(""), "/env/pch");
  setenv("PTO_PCH_DIR", "off", 1);
  EXPECT_EQ(PreludeDir(""), "");
  unsetenv("PTO_PCH_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(PreludeDir(""), "/xdg/pto/pch");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(PreludeDir(""), "/home/u/.cache/pto/pch");
}

TEST(PrecompiledPreludeTest, KeyChangesWithEveryField) {
  const PreludeSpec spec = TileSpec();
  const std::string key = PreludeKey(spec);
  PreludeSpec other = spec;
  other.flags.back() += "x";
  EXPECT_NE(PreludeKey(other), key);
  other = spec;
  other.fingerprint += "x";
  EXPECT_NE(PreludeKey(other), key);
  other = spec;
  other.text += "#include \"pto_cube.h\"\n";
  EXPECT_NE(PreludeKey(other), key);
  other = spec;
  other.headers[0].contents = "changed";
  EXPECT_NE(PreludeKey(other), key);
}

TEST(PrecompiledPreludeTest, BuiltOnceThenReusedAndUsedByTheCompiler) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pch = dir->path() + "/pch";
  const PreludeSpec spec = TileSpec();
  absl::StatusOr<Prelude> first = EnsurePrelude(spec, pch, NativeBuildOptions{});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->built);
  struct stat before, after;
  ASSERT_EQ(stat((first->header + ".gch").c_str(), &before), 0);
  absl::StatusOr<Prelude> second = EnsurePrelude(spec, pch, NativeBuildOptions{});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->built);
  EXPECT_EQ(second->header, first->header);
  ASSERT_EQ(stat((first->header + ".gch").c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(GchFiles(pch).size(), 1u);

  // The compiler really takes the .gch: -H marks a used one with '!'.
  const std::string src = dir->path() + "/k.cc";
  ASSERT_TRUE(WriteFile(src, "int f(int x) { return x + 1; }\n").ok());
  std::vector<std::string> argv = {"c++"};
  argv.insert(argv.end(), spec.flags.begin(), spec.flags.end());
  for (const std::string& a : PreludeArgs(*second)) argv.push_back(a);
  argv.insert(argv.end(), {"-H", "-fsyntax-only", src});
  SubprocessResult r;
  ASSERT_TRUE(RunSubprocess(argv, absl::Seconds(120), &r).ok());
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat("! ", second->header, ".gch")));
  EXPECT_FALSE(PreludeRefused(*second, r.output)) << r.output;
  EXPECT_TRUE(PreludeRefused(
      *second, absl::StrCat("cc1plus: warning: ", second->header,
                            ".gch: not a PCH file [-Winvalid-pch]\n")));
}

TEST(PrecompiledPreludeTest, KernelsAreTheSameBytesWithAndWithoutIt) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pch = dir->path() + "/pch";
  const std::vector<pto::v1::Graph> graphs = {
      ExpAddGraph(), MatmulGraph({32, 64}, {64, 32}, {32, 32}),
      MatmulGraph({16, 64}, {64, 32}, {16, 32}, false, false, pto::v1::DT_BF16,
                  pto::v1::DT_BF16)};
  for (const pto::v1::Graph& g : graphs) {
    const std::string plain = Payload(g, "off");
    ASSERT_FALSE(plain.empty());
    EXPECT_EQ(Payload(g, pch), plain);  // builds the .gch
    EXPECT_EQ(Payload(g, pch), plain);  // uses it
  }
  // One prelude for the elementwise kernel, one with the cube header.
  EXPECT_EQ(GchFiles(pch).size(), 2u);
}

TEST(PrecompiledPreludeTest, CorruptOrStaleGchIsIgnoredThenRebuilt) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pch = dir->path() + "/pch";
  const pto::v1::Graph g = ExpAddGraph();
  const std::string plain = Payload(g, "off");
  ASSERT_EQ(Payload(g, pch), plain);
  std::vector<std::string> gch = GchFiles(pch);
  ASSERT_EQ(gch.size(), 1u);
  absl::StatusOr<std::string> good = ReadFile(gch[0]);
  ASSERT_TRUE(good.ok());

  // Damage of three kinds: not a PCH at all, a valid one cut short, and one
  // built with other code-shaping flags (stale).
  const PreludeSpec spec = TileSpec();
  PreludeSpec o0 = spec;
  o0.flags = HostCodeFlags(*ResolveTarget("host"), 0);
  absl::StatusOr<Prelude> other = EnsurePrelude(o0, pch, NativeBuildOptions{});
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<std::string> stale = ReadFile(other->header + ".gch");
  ASSERT_TRUE(stale.ok());
  for (const std::string& bad :
       {std::string("not a precompiled header"), good->substr(0, good->size() / 2), *stale}) {
    ASSERT_TRUE(WriteFile(gch[0], bad).ok());
    EXPECT_EQ(Payload(g, pch), plain);  // built without it; the .gch is discarded
    EXPECT_FALSE(std::filesystem::exists(gch[0]));
    EXPECT_EQ(Payload(g, pch), plain);  // built again, and used
    ASSERT_TRUE(std::filesystem::exists(gch[0]));
  }
  // No temporary files are left behind.
  for (const auto& e : std::filesystem::recursive_directory_iterator(pch)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST(PrecompiledPreludeTest, ConcurrentBuildersLeaveOneWholeGch) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pch = dir->path() + "/pch";
  const pto::v1::Graph g = ExpAddGraph();
  const std::string plain = Payload(g, "off");
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { got[i] = Payload(g, pch); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& p : got) EXPECT_EQ(p, plain);
  EXPECT_EQ(GchFiles(pch).size(), 1u);
}

TEST(PrecompiledPreludeTest, ADirectoryOthersCanWriteIsNotUsed) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string pch = dir->path() + "/pch";
  ASSERT_EQ(mkdir(pch.c_str(), 0777), 0);
  ASSERT_EQ(chmod(pch.c_str(), 0777), 0);
  absl::StatusOr<Prelude> p = EnsurePrelude(TileSpec(), pch, NativeBuildOptions{});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("writable by it alone"));
  const pto::v1::Graph g = ExpAddGraph();
  EXPECT_EQ(Payload(g, pch), Payload(g, "off"));  // built without a prelude
  EXPECT_TRUE(GchFiles(pch).empty());
}

TEST(PrecompiledPreludeTest, AFailingCompilerIsRememberedAndTheBuildStillReportsItsError) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  NativeBuildOptions options;
  options.cxx = "/bin/false";
  const std::string pch = dir->path() + "/pch";
  absl::StatusOr<Prelude> p = EnsurePrelude(TileSpec(), pch, options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInternal);
  p = EnsurePrelude(TileSpec(), pch, options);
  EXPECT_THAT(p.status().message(), HasSubstr("earlier in this process"));
  EXPECT_TRUE(GchFiles(pch).empty());
}

TEST(PrecompiledPreludeTest, AHangingCompilerIsKilledAndNotRunAgain) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-pch-test");
  ASSERT_TRUE(dir.ok());
  const std::string script = dir->path() + "/hanging-c++";
  ASSERT_TRUE(WriteFile(script, "#!/bin/sh\nsleep 3600\n").ok());
  chmod(script.c_str(), 0700);
  NativeBuildOptions options;
  options.cxx = script;
  options.timeout = absl::Seconds(1);
  const std::string pch = dir->path() + "/pch";
  absl::StatusOr<Prelude> p = EnsurePrelude(TileSpec(), pch, options);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(p.status().message(), HasSubstr("timed out"));
  const absl::Time start = absl::Now();
  p = EnsurePrelude(TileSpec(), pch, options);
  EXPECT_THAT(p.status().message(), HasSubstr("earlier in this process"));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_TRUE(GchFiles(pch).empty());
}

}  // namespace
}  // namespace pto::compiler
