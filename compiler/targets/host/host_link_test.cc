// The host kernel's lean link (host_backend.h): the generated kernels of the
// golden corpus link with the C libraries alone, and a kernel that calls into
// libstdc++ is built again with the full link.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/util/temp_dir.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"

namespace pto::compiler {
namespace {

// A C++ compiler that appends each command line to `log` (one line a run)
// and runs the system's.
class LoggingCompiler {
 public:
  LoggingCompiler() {
    absl::StatusOr<TempDir> dir = TempDir::Create("pto-host-link-test");
    EXPECT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    log_ = dir_->path() + "/log";
    path_ = dir_->path() + "/logging-cxx";
    EXPECT_TRUE(WriteFile(path_, absl::StrCat("#!/bin/sh\necho \"$*\" >> '", log_,
                                              "'\nexec c++ \"$@\"\n"))
                    .ok());
    chmod(path_.c_str(), 0700);
  }
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_->path(); }
  // The command lines run since the last call.
  std::vector<std::string> Runs() {
    absl::StatusOr<std::string> text = ReadFile(log_);
    std::filesystem::remove(log_);
    if (!text.ok()) return {};
    return absl::StrSplit(*text, '\n', absl::SkipEmpty());
  }

 private:
  std::unique_ptr<TempDir> dir_;
  std::string log_, path_;
};

NativeBuildOptions Options(const LoggingCompiler& cxx) {
  NativeBuildOptions options;
  options.cxx = cxx.path();
  options.opt_level = 2;
  options.work_dir = cxx.dir();
  options.pch_dir = "off";
  return options;
}

TEST(HostLinkTest, GeneratedKernelsLinkLean) {
  LoggingCompiler cxx;
  const HostBackend backend(runtime::NativeHostTarget());
  std::vector<std::string> sources;
  for (const auto& entry : std::filesystem::directory_iterator("compiler/testdata")) {
    if (absl::EndsWith(entry.path().string(), ".cpp.txt")) sources.push_back(entry.path());
  }
  std::sort(sources.begin(), sources.end());
  ASSERT_GE(sources.size(), 10u);
  int cube = 0;
  for (const std::string& path : sources) {
    absl::StatusOr<std::string> source = ReadFile(path);
    ASSERT_TRUE(source.ok()) << source.status();
    cube += absl::StrContains(*source, "pto_cube.h");
    absl::StatusOr<std::string> so = backend.BuildPayload(*source, Options(cxx));
    EXPECT_TRUE(so.ok()) << path << ": " << so.status();
    const std::vector<std::string> runs = cxx.Runs();
    ASSERT_EQ(runs.size(), 1u) << path << " was built again with the full link";
    EXPECT_TRUE(absl::StrContains(runs[0], " -nodefaultlibs ")) << runs[0];
  }
  EXPECT_GE(cube, 1) << "the corpus has a kernel with matmuls";
}

TEST(HostLinkTest, KernelCallingLibstdcxxLinksInFull) {
  LoggingCompiler cxx;
  const HostBackend backend(runtime::NativeHostTarget());
  const std::string source =
      "#include <new>\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void* pto_make() {\n"
      "  return new int(1);\n"
      "}\n";
  absl::StatusOr<std::string> so = backend.BuildPayload(source, Options(cxx));
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_FALSE(so->empty());
  const std::vector<std::string> runs = cxx.Runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(absl::StrContains(runs[0], " -nodefaultlibs ")) << runs[0];
  EXPECT_FALSE(absl::StrContains(runs[1], "-nodefaultlibs")) << runs[1];

  // With a precompiled header: the lean link's undefined symbol is not the
  // .gch's fault, so no build without it comes between the two links.
  NativeBuildOptions with_pch = Options(cxx);
  with_pch.pch_dir = cxx.dir() + "/pch";
  with_pch.compiler_fingerprint = "host-link-test";
  so = backend.BuildPayload(source, with_pch);
  ASSERT_TRUE(so.ok()) << so.status();
  const std::vector<std::string> pch_runs = cxx.Runs();
  ASSERT_EQ(pch_runs.size(), 3u);
  EXPECT_TRUE(absl::StrContains(pch_runs[0], "c++-header")) << pch_runs[0];
  EXPECT_TRUE(absl::StrContains(pch_runs[1], " -nodefaultlibs ")) << pch_runs[1];
  EXPECT_TRUE(absl::StrContains(pch_runs[1], "prelude.h")) << pch_runs[1];
  EXPECT_FALSE(absl::StrContains(pch_runs[2], "-nodefaultlibs")) << pch_runs[2];
  EXPECT_TRUE(absl::StrContains(pch_runs[2], "prelude.h")) << pch_runs[2];
}

// libgcc's CPU model, which pto_cube.h's run-time checks read, is filled in
// when a lean kernel is loaded.
TEST(HostLinkTest, LeanKernelSeesTheCpuModel) {
  LoggingCompiler cxx;
  const HostBackend backend(runtime::NativeHostTarget());
  const std::string source =
      "extern \"C\" __attribute__((visibility(\"default\"))) int pto_cpu() {\n"
      "  return 1 + (__builtin_cpu_supports(\"avx2\") ? 2 : 0) +\n"
      "         (__builtin_cpu_supports(\"avx512f\") ? 4 : 0);\n"
      "}\n";
  absl::StatusOr<std::string> so = backend.BuildPayload(source, Options(cxx));
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_EQ(cxx.Runs().size(), 1u);
  const std::string path = cxx.dir() + "/cpu.so";
  ASSERT_TRUE(WriteFile(path, *so).ok());
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto* cpu = reinterpret_cast<int (*)()>(dlsym(lib, "pto_cpu"));
  ASSERT_NE(cpu, nullptr) << dlerror();
  __builtin_cpu_init();
  EXPECT_EQ(cpu(), 1 + (__builtin_cpu_supports("avx2") ? 2 : 0) +
                       (__builtin_cpu_supports("avx512f") ? 4 : 0));
  dlclose(lib);
}

TEST(HostLinkTest, BadSourceReportsTheFullLinksError) {
  LoggingCompiler cxx;
  const HostBackend backend(runtime::NativeHostTarget());
  absl::StatusOr<std::string> so = backend.BuildPayload("int x = ;\n", Options(cxx));
  ASSERT_FALSE(so.ok());
  EXPECT_EQ(so.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(absl::StrContains(so.status().message(), "native compiler failed"))
      << so.status();
  EXPECT_EQ(cxx.Runs().size(), 2u);
}

}  // namespace
}  // namespace pto::compiler
