// Compile() end to end: real shared objects from the system C++ compiler,
// run serially through dlopen and checked against a scalar reference; plus
// the failure modes of the native build.
#include "compiler/compile.h"

#include <signal.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "compiler/targets/host/host_backend.h"
#include "compiler/targets/native_build.h"
#include "compiler/targets/host/pto_tile.h"
#include "compiler/testing/graph_builder.h"
#include "compiler/testing/kernel_runner.h"
#include "runtime/sha256.h"
#include "compiler/util/subprocess.h"
#include "compiler/util/temp_dir.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"
#include "runtime/kernel_abi.h"

namespace pto::compiler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ExpAddGraph;
using testing::GraphBuilder;

struct OpCase {
  const char* kind;
  int arity;
  double scalar;  // for the *s kinds
  bool has_scalar;
};

const OpCase kOps[] = {
    {"add", 2, 0, false},   {"sub", 2, 0, false},    {"mul", 2, 0, false},
    {"div", 2, 0, false},   {"adds", 1, 1.5, true},  {"subs", 1, 0.25, true},
    {"muls", 1, -3.0, true}, {"divs", 1, 0.7, true}, {"rsubs", 1, 2.0, true},
    {"rdivs", 1, 1.25, true}, {"exp", 1, 0, false},  {"neg", 1, 0, false},
    {"abs", 1, 0, false},   {"copy", 1, 0, false},
};

float Reference(const OpCase& op, float a, float b) {
  const float s = static_cast<float>(op.scalar);
  const std::string k = op.kind;
  if (k == "add") return a + b;
  if (k == "sub") return a - b;
  if (k == "mul") return a * b;
  if (k == "div") return a / b;
  if (k == "adds") return a + s;
  if (k == "subs") return a - s;
  if (k == "muls") return a * s;
  if (k == "divs") return a / s;
  if (k == "rsubs") return s - a;
  if (k == "rdivs") return s / a;
  if (k == "exp") return std::exp(a);
  if (k == "neg") return -a;
  if (k == "abs") return std::fabs(a);
  return a;  // copy
}

struct Shape {
  std::vector<int64_t> dims;
  std::vector<int64_t> tile;
};

class AllOpsTest
    : public ::testing::TestWithParam<std::tuple<pto::v1::DataType, Shape>> {};

// One kernel per (dtype, shape) computing every op into its own output.
TEST_P(AllOpsTest, MatchesReference) {
  const auto [dtype, shape] = GetParam();
  const bool f16 = dtype == pto::v1::DT_FP16;
  int64_t n = 1;
  for (int64_t d : shape.dims) n *= d;

  GraphBuilder b("all_ops");
  uint32_t a = b.Input("a", dtype, shape.dims);
  uint32_t bb = b.Input("b", dtype, shape.dims);
  for (const OpCase& op : kOps) {
    std::vector<uint32_t> ins = {a};
    if (op.arity == 2) ins.push_back(bb);
    b.Output(absl::StrCat("out_", op.kind),
             b.Op(op.kind, ins, shape.tile,
                  op.has_scalar ? std::optional<double>(op.scalar) : std::nullopt));
  }
  absl::StatusOr<CompileResult> r = Compile(b.Build(), "host", {});
  ASSERT_TRUE(r.ok()) << r.status();

  // Inputs: a in [-3, 3], b away from zero; stored in the kernel's dtype.
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> ua(-3.0f, 3.0f), ub(0.5f, 2.0f);
  std::vector<float> av(n), bv(n);
  for (int64_t i = 0; i < n; ++i) {
    av[i] = ua(rng);
    bv[i] = (rng() & 1 ? 1.0f : -1.0f) * ub(rng);
  }
  const size_t esize = f16 ? 2 : 4;
  auto encode = [&](const std::vector<float>& v) {
    std::vector<char> out(n * esize);
    for (int64_t i = 0; i < n; ++i) {
      if (f16) {
        uint16_t h = pto_tile::FloatToHalf(v[i]);
        std::memcpy(&out[i * 2], &h, 2);
      } else {
        std::memcpy(&out[i * 4], &v[i], 4);
      }
    }
    return out;
  };
  auto decode = [&](const std::vector<char>& buf, int64_t i) {
    if (!f16) {
      float f;
      std::memcpy(&f, &buf[i * 4], 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, &buf[i * 2], 2);
    return pto_tile::HalfToFloat(h);
  };
  std::vector<char> abuf = encode(av), bbuf = encode(bv);
  std::vector<std::vector<char>> outs(std::size(kOps),
                                      std::vector<char>(n * esize, 0x7f));
  std::vector<void*> params = {abuf.data(), bbuf.data()};
  for (auto& o : outs) params.push_back(o.data());
  absl::Status s = testing::RunSerially(r->binary, params);
  ASSERT_TRUE(s.ok()) << s;

  for (size_t k = 0; k < std::size(kOps); ++k) {
    const OpCase& op = kOps[k];
    for (int64_t i = 0; i < n; ++i) {
      float want = Reference(op, decode(abuf, i), decode(bbuf, i));
      if (f16) want = pto_tile::HalfToFloat(pto_tile::FloatToHalf(want));
      const float got = decode(outs[k], i);
      if (std::string(op.kind) == "exp") {
        ASSERT_NEAR(got, want, std::fabs(want) * (f16 ? 1e-3 : 1e-6))
            << op.kind << " element " << i;
      } else {
        ASSERT_EQ(got, want) << op.kind << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AllOpsTest,
    ::testing::Combine(
        ::testing::Values(pto::v1::DT_FP32, pto::v1::DT_FP16),
        ::testing::Values(Shape{{37}, {16}}, Shape{{5, 7}, {2, 4}},
                          Shape{{3, 4, 5}, {2, 3, 2}},
                          Shape{{2, 3, 2, 9}, {1, 2, 2, 4}})));

// muls -> exp -> sub in f16, once fused into one block and once split by a
// different tile shape (the intermediate then passes through a workspace).
// Every f16 result is rounded, so the tiling cannot change the bits.
std::vector<uint16_t> RunF16Chain(const std::vector<int64_t>& exp_tile,
                                  int* num_workspaces) {
  GraphBuilder b("chain16");
  uint32_t x = b.Input("x", pto::v1::DT_FP16, {40, 70});
  uint32_t y = b.Input("y", pto::v1::DT_FP16, {40, 70});
  uint32_t s = b.Op("muls", {x}, {16, 32}, 0.3);
  uint32_t e = b.Op("exp", {s}, exp_tile);
  b.Output("out", b.Op("sub", {e, y}, {16, 32}));
  absl::StatusOr<CompileResult> r = Compile(b.Build(), "host", {});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  *num_workspaces = r->binary.execute_graph().buffers_size() - 3;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<uint16_t> xs(40 * 70), ys(40 * 70), out(40 * 70);
  for (auto& v : xs) v = pto_tile::FloatToHalf(u(rng));
  // y close to exp(0.3 x) so that sub cancels and exposes any rounding.
  for (size_t i = 0; i < ys.size(); ++i) {
    ys[i] = pto_tile::FloatToHalf(
        std::exp(0.3f * pto_tile::HalfToFloat(xs[i])) * 0.999f);
  }
  absl::Status st = testing::RunSerially(r->binary, {xs.data(), ys.data(), out.data()});
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

// PTO_HOST_TARGET picks what "host" resolves to: a known target this
// machine runs, else an error naming the variable.
TEST(CompileTest, HostTargetFromEnvironment) {
  setenv("PTO_HOST_TARGET", "host-x86_64", 1);
  EXPECT_EQ(ResolveTarget("host").value_or(""), "host-x86_64");
  setenv("PTO_HOST_TARGET", "host-sparc", 1);
  absl::StatusOr<std::string> bad = ResolveTarget("host");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("PTO_HOST_TARGET="));
  EXPECT_THAT(bad.status().message(), HasSubstr("is not a host target (known: host-x86_64"));
  runtime::SetAmxProbeForTesting([] { return false; });
  setenv("PTO_HOST_TARGET", runtime::kHostAmxTarget, 1);
  bad = ResolveTarget("host");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(bad.status().message(), HasSubstr("this machine cannot run it (it needs"));
  runtime::SetAmxProbeForTesting(nullptr);
  // The same for v4 on a CPU (or OS) without AVX-512, simulated.
  runtime::SetAvx512ProbeForTesting([] { return false; });
  setenv("PTO_HOST_TARGET", runtime::kHostV4Target, 1);
  bad = ResolveTarget("host");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(bad.status().message(),
              HasSubstr("PTO_HOST_TARGET=\"host-x86_64-v4\": this machine cannot run it "
                        "(it needs AVX-512 F, BW, CD, DQ and VL, and the OS's saving of "
                        "the zmm and opmask state (x86-64-v4); \"host\" here is "));
  EXPECT_THAT(std::string(bad.status().message()), Not(HasSubstr("\"host\" here is host-x86_64-v4")));
  setenv("PTO_HOST_TARGET", runtime::kHostV4AmxTarget, 1);
  EXPECT_EQ(ResolveTarget("host").status().code(), absl::StatusCode::kFailedPrecondition);
  runtime::SetAvx512ProbeForTesting(nullptr);
  unsetenv("PTO_HOST_TARGET");
  EXPECT_EQ(ResolveTarget("host").value_or(""), runtime::NativeHostTarget());
  // Concrete names are not checked against this machine (cross-compiling).
  EXPECT_EQ(ResolveTarget(runtime::kHostAmxTarget).value_or(""), runtime::kHostAmxTarget);
}

TEST(CompileTest, F16ResultsDoNotDependOnTiling) {
  int fused_ws = -1, split_ws = -1;
  std::vector<uint16_t> fused = RunF16Chain({16, 32}, &fused_ws);
  std::vector<uint16_t> split = RunF16Chain({8, 64}, &split_ws);
  EXPECT_EQ(fused_ws, 0);
  EXPECT_EQ(split_ws, 2);  // muls -> exp and exp -> sub cross groups
  ASSERT_EQ(fused.size(), split.size());
  for (size_t i = 0; i < fused.size(); ++i) ASSERT_EQ(fused[i], split[i]) << i;
}

// Every f16 bit pattern through the generated (vectorized) conversions:
// copy and x * 1 must return it unchanged (NaNs stay NaN).
TEST(CompileTest, F16ConversionsAreExactForEveryHalf) {
  GraphBuilder b("f16_all");
  uint32_t x = b.Input("x", pto::v1::DT_FP16, {65536});
  b.Output("copy", b.Op("copy", {x}, {4096}));
  b.Output("mul1", b.Op("muls", {x}, {4096}, 1.0));
  absl::StatusOr<CompileResult> r = Compile(b.Build(), "host", {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<uint16_t> in(65536), copy(65536), mul1(65536);
  for (uint32_t i = 0; i < 65536; ++i) in[i] = static_cast<uint16_t>(i);
  absl::Status s = testing::RunSerially(r->binary, {in.data(), copy.data(), mul1.data()});
  ASSERT_TRUE(s.ok()) << s;
  for (uint32_t i = 0; i < 65536; ++i) {
    const bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0;
    for (uint16_t got : {copy[i], mul1[i]}) {
      if (nan) {
        ASSERT_EQ(got & 0x7c00, 0x7c00) << i;
        ASSERT_NE(got & 0x3ff, 0) << i;
      } else {
        ASSERT_EQ(got, in[i]) << i;
      }
    }
  }
}

TEST(CompileTest, BinaryIsCompleteAndConsistent) {
  pto::v1::Graph g = ExpAddGraph();
  absl::StatusOr<CompileResult> r = Compile(g, "host", {});
  ASSERT_TRUE(r.ok()) << r.status();
  const pto::v1::KernelBinary& bin = r->binary;
  EXPECT_EQ(bin.magic(), PTO_KERNEL_MAGIC);
  EXPECT_EQ(bin.format_version(), static_cast<uint32_t>(PTO_KERNEL_FORMAT_VERSION));
  absl::StatusOr<std::string> key = CacheKey(g, "host", {});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(r->key, *key);
  EXPECT_EQ(bin.key(), *key);
  EXPECT_EQ(bin.target(), runtime::NativeHostTarget());
  EXPECT_EQ(bin.compiler_fingerprint(), CompilerFingerprint());
  EXPECT_EQ(bin.kernel_name(), "exp_add");
  ASSERT_GE(bin.native_payload().size(), 4u);
  EXPECT_EQ(bin.native_payload().substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(bin.payload_sha256(), runtime::Sha256(bin.native_payload()));
  EXPECT_EQ(bin.payload_sha256().size(), 32u);
  ASSERT_EQ(bin.params_size(), 3);
  EXPECT_EQ(bin.params(2).name(), "out");
  EXPECT_EQ(bin.params(2).role(), pto::v1::PARAM_ROLE_OUT);
  EXPECT_EQ(bin.params(0).shape().dims(1).size(), 5);
  EXPECT_THAT(bin.pto_text(), HasSubstr("TEXP"));
  EXPECT_EQ(bin.execute_graph().tasks_size(), 4);

  std::vector<std::string> stages;
  for (const StageTime& st : r->stages) stages.push_back(st.stage);
  EXPECT_THAT(stages, ::testing::ElementsAre("verify", "import", "tensor_to_tile",
                                             "tile_to_block", "block_to_execute",
                                             "codegen", "native_compile"));
  EXPECT_TRUE(r->dumps.empty());
}

TEST(CompileTest, UntrustedNamesNeverReachGeneratedCode) {
  const std::string evil = "x\"; } */ #include <evil>\n int pwn = 1; /*";
  pto::v1::Graph g = ExpAddGraph(pto::v1::DT_FP32, evil);
  g.set_name(evil);
  g.mutable_ops(0)->set_name(evil);
  g.mutable_params(2)->set_name(evil + "out");
  CompileSettings settings;
  settings.keep_dumps = true;
  absl::StatusOr<CompileResult> r = Compile(g, "host", {}, settings);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string& cpp = r->dumps.at("cpp");
  EXPECT_THAT(cpp, Not(HasSubstr("evil")));
  EXPECT_THAT(cpp, Not(HasSubstr("pwn")));
  EXPECT_THAT(r->dumps.at("pto"), Not(HasSubstr("pwn = 1")));
  EXPECT_THAT(r->binary.kernel_name(),
              ::testing::MatchesRegex("[A-Za-z0-9_]+"));
}

TEST(CompileTest, FailingNativeCompilerIsInternalWithItsMessage) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-cxx-test");
  ASSERT_TRUE(dir.ok());
  const std::string script = dir->path() + "/bad-cxx";
  ASSERT_TRUE(WriteFile(script,
                        "#!/bin/sh\n"
                        "echo 'kernel.cc:1:1: error: boom' >&2\n"
                        "head -c 100000 /dev/zero | tr '\\0' x\n"
                        "exit 3\n")
                  .ok());
  chmod(script.c_str(), 0700);
  CompileSettings settings;
  settings.cxx = script;
  absl::StatusOr<CompileResult> r = Compile(ExpAddGraph(), "host", {}, settings);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("native compiler failed"));
  EXPECT_THAT(r.status().message(), HasSubstr("error: boom"));
  EXPECT_THAT(r.status().message(), HasSubstr("exit status 3"));
  EXPECT_LT(r.status().message().size(), kMaxCompilerMessageBytes + 1024);

  settings.cxx = "/bin/false";
  r = Compile(ExpAddGraph(), "host", {}, settings);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("native compiler failed"));

  settings.cxx = dir->path() + "/no-such-compiler";
  r = Compile(ExpAddGraph(), "host", {}, settings);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(r.status().message(), HasSubstr("native compiler failed"));
}

TEST(CompileTest, HangingNativeCompilerIsKilledAtTheTimeout) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-cxx-test");
  ASSERT_TRUE(dir.ok());
  const std::string script = dir->path() + "/slow-cxx";
  const std::string pid_file = dir->path() + "/pid";
  ASSERT_TRUE(WriteFile(script, absl::StrCat("#!/bin/sh\necho $$ > ", pid_file,
                                             "\nexec sleep 60\n"))
                  .ok());
  chmod(script.c_str(), 0700);
  CompileSettings settings;
  settings.cxx = script;
  settings.native_compile_timeout = absl::Seconds(1);
  absl::StatusOr<CompileResult> r = Compile(ExpAddGraph(), "host", {}, settings);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("native compiler failed"));
  EXPECT_THAT(r.status().message(), HasSubstr("timed out"));
  EXPECT_THAT(r.status().message(), HasSubstr("killed"));
  absl::StatusOr<std::string> pid = ReadFile(pid_file);
  ASSERT_TRUE(pid.ok());
  const pid_t child = std::atoi(pid->c_str());
  ASSERT_GT(child, 0);
  // Killed: the pid soon names no process. The compiler runs under a
  // supervisor killed with it, so the compiler may be left a zombie for init
  // to reap; a zombie is dead, and init reaps it within moments.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = kill(child, 0) == -1 && errno == ESRCH;
    if (!gone) {
      const std::string state = ReadFile(absl::StrCat("/proc/", child, "/stat")).value_or("");
      const size_t paren = state.rfind(')');
      gone = paren != std::string::npos && paren + 2 < state.size() && state[paren + 2] == 'Z';
    }
    if (!gone) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(gone) << "pid " << child << " still runs after the timeout";
}

TEST(CompileTest, TemporaryDirectoriesAreRemoved) {
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-tmpdir-test");
  ASSERT_TRUE(dir.ok());
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", dir->path().c_str(), 1);
  absl::StatusOr<CompileResult> ok = Compile(ExpAddGraph(), "host", {});
  CompileSettings bad;
  bad.cxx = "/bin/false";
  absl::StatusOr<CompileResult> failed = Compile(ExpAddGraph(), "host", {}, bad);
  if (old) setenv("TMPDIR", saved.c_str(), 1); else unsetenv("TMPDIR");
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir->path()));
}

// The generated code is vector code at the target's ISA
// level. exp(a) + b over rows of 256 compiled for each x86-64 level and
// disassembled (objdump, binutils beside the C++ compiler): the baseline
// target adds with SSE's addps on xmm registers and nothing wider, v3 with
// AVX2's vaddps on ymm and no AVX-512 register, v4 uses zmm registers.
TEST(CompileTest, GeneratedCodeIsVectorCodeAtTheTargetsIsaLevel) {
  GraphBuilder b("vector_code");
  const uint32_t a = b.Input("a", pto::v1::DT_FP32, {64, 256});
  const uint32_t x = b.Input("b", pto::v1::DT_FP32, {64, 256});
  b.Output("out", b.Op("add", {b.Op("exp", {a}, {16, 256}), x}, {16, 256}));
  struct Case {
    const char* target;
    const char* add;      // an add of packed floats ...
    const char* reg;      // ... on these registers
    const char* widest;   // registers the code uses somewhere
    const char* never;    // registers the code must not use
  };
  const Case cases[] = {
      {"host-x86_64", "addps", "%xmm", "%xmm", "%ymm"},
      {"host-x86_64-v3", "vaddps", "%ymm", "%ymm", "%zmm"},
      {"host-x86_64-v4", "vaddps", "mm", "%zmm", nullptr},
  };
  absl::StatusOr<TempDir> dir = TempDir::Create("pto-vector-code");
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    absl::StatusOr<CompileResult> r = Compile(b.Build(), c.target, {});
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string so = absl::StrCat(dir->path(), "/", c.target, ".so");
    ASSERT_TRUE(WriteFile(so, r->binary.native_payload()).ok());
    SubprocessResult objdump;
    ASSERT_TRUE(RunSubprocess({"objdump", "-d", "--no-show-raw-insn", so},
                              absl::Seconds(60), &objdump, "", 64 << 20)
                    .ok());
    ASSERT_TRUE(objdump.exited && objdump.exit_code == 0) << objdump.output;
    ASSERT_FALSE(objdump.output_truncated);
    int adds = 0, widest = 0, never = 0;
    for (size_t at = 0; at < objdump.output.size();) {
      size_t end = objdump.output.find('\n', at);
      if (end == std::string::npos) end = objdump.output.size();
      const std::string line = objdump.output.substr(at, end - at);
      at = end + 1;
      const size_t op = line.find('\t');  // "  addr:\tmnemonic operands"
      if (op == std::string::npos) continue;
      const std::string insn = line.substr(op + 1);
      if (insn.rfind(absl::StrCat(c.add, " "), 0) == 0 &&
          insn.find(c.reg) != std::string::npos) {
        ++adds;
      }
      if (insn.find(c.widest) != std::string::npos) ++widest;
      if (c.never != nullptr && insn.find(c.never) != std::string::npos) ++never;
    }
    EXPECT_GT(adds, 0) << "no " << c.add << " on " << c.reg;
    EXPECT_GT(widest, 0) << "no " << c.widest << " register";
    EXPECT_EQ(never, 0) << c.never << " registers used";
  }
}

TEST(CompileTest, DumpsEveryLevel) {
  CompileSettings settings;
  settings.keep_dumps = true;
  absl::StatusOr<CompileResult> r = Compile(ExpAddGraph(), "host", {}, settings);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const char* level : {"tensor", "tile", "block", "execute", "pto", "cpp"}) {
    EXPECT_FALSE(r->dumps[level].empty()) << level;
  }
  EXPECT_EQ(r->dumps["pto"], r->binary.pto_text());
}

TEST(CompileTest, ConcurrentCompilesAgree) {
  absl::StatusOr<CompileResult> r1, r2;
  std::thread t1([&] { r1 = Compile(ExpAddGraph(), "host", {}); });
  std::thread t2([&] { r2 = Compile(ExpAddGraph(), "host", {}); });
  t1.join();
  t2.join();
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r1->key, r2->key);
}

TEST(CompileTest, MatmulCompilesToACubeFunction) {
  pto::v1::Graph g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    schema_version: SCHEMA_VERSION_1
    values { id: 1 dtype: DT_FP32 shape { dims { size: 8 } dims { size: 5 } } }
    values { id: 2 dtype: DT_FP32 shape { dims { size: 5 } dims { size: 3 } } }
    values { id: 3 dtype: DT_FP32 shape { dims { size: 8 } dims { size: 3 } } }
    params { name: "a" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "b" role: PARAM_ROLE_IN value_id: 2 }
    params { name: "c" role: PARAM_ROLE_OUT value_id: 3 }
    ops { kind: "matmul" inputs: 1 inputs: 2 outputs: 3
          attrs { key: "out_dtype" value { dtype: DT_FP32 } }
          cube_tile { m: 16 m: 32 k: 16 k: 32 n: 16 n: 32 } }
  )pb", &g));
  CompileSettings settings;
  settings.keep_dumps = true;
  absl::StatusOr<CompileResult> r = Compile(g, "host", {}, settings);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->dumps["pto"], HasSubstr(".func @f0 cube"));
  EXPECT_THAT(r->dumps["execute"], HasSubstr(" cube"));
  // The cube tile is part of the cache key.
  pto::v1::Graph other = g;
  other.mutable_ops(0)->mutable_cube_tile()->set_k(0, 8);
  absl::StatusOr<std::string> key = CacheKey(other, "host", {});
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_NE(*key, r->key);
}

// Symbolic dims: an outermost symbolic dim compiles into task
// templates, and so does a symbolic inner dim.
TEST(CompileTest, SymbolicDimsCompileIntoTemplates) {
  pto::v1::Graph g;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    schema_version: SCHEMA_VERSION_1
    name: "sym"
    values { id: 1 dtype: DT_FP32 shape { dims { symbol: "bs" } dims { size: 5 } } }
    values { id: 2 dtype: DT_FP32 shape { dims { symbol: "bs" } dims { size: 5 } } }
    params { name: "a" role: PARAM_ROLE_IN value_id: 1 }
    params { name: "out" role: PARAM_ROLE_OUT value_id: 2 }
    ops { kind: "exp" inputs: 1 outputs: 2 vec_tile { dims: 2 dims: 4 } }
  )pb", &g));
  EXPECT_TRUE(CacheKey(g, "host", {}).ok());
  absl::StatusOr<CompileResult> r = Compile(g, "host", {});
  ASSERT_TRUE(r.ok()) << r.status();
  const pto::v1::ExecuteGraph& e = r->binary.execute_graph();
  EXPECT_EQ(e.tasks_size(), 0);
  ASSERT_EQ(e.symbols_size(), 1);
  EXPECT_EQ(e.symbols(0).name(), "bs");
  ASSERT_EQ(e.templates_size(), 1);
  // The full tile, the static tail along 5 (2x1), and one generic function
  // for tails along bs (extents 0: read from the task's args).
  ASSERT_EQ(e.templates(0).functions_size(), 3);
  EXPECT_TRUE(e.templates(0).extents_in_args());
  EXPECT_THAT(e.templates(0).functions(2).extent(), ::testing::ElementsAre(0, 0));
  EXPECT_EQ(r->binary.params(0).shape().dims(0).symbol(), "bs");

  g.mutable_values(0)->mutable_shape()->mutable_dims(0)->set_size(3);
  g.mutable_values(0)->mutable_shape()->mutable_dims(1)->set_symbol("bs");
  g.mutable_values(1)->mutable_shape()->mutable_dims(0)->set_size(3);
  g.mutable_values(1)->mutable_shape()->mutable_dims(1)->set_symbol("bs");
  // A symbolic inner dim: the same, its GM stride a run-time arg.
  r = Compile(g, "host", {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->binary.execute_graph().templates(0).space(1).symbol(), "bs");
}

TEST(CompileTest, RejectsBadInputBeforeCompiling) {
  pto::v1::Graph g = ExpAddGraph();
  g.mutable_ops(1)->set_inputs(1, 17);
  absl::StatusOr<CompileResult> r = Compile(g, "host", {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("dangling value id 17"));
  EXPECT_EQ(Compile(ExpAddGraph(), "cuda", {}).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(Compile(ExpAddGraph(), "host", {{"opt_level", "x"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace pto::compiler
