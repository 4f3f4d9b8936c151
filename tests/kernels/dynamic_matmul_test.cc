// Matmul with symbolic M, N and K: compiled once, run for several
// sizes of each (1, a tail, larger than a tile) against the reference
// evaluator on the static graph of that size. M and N tails run the
// generic cube function (run-time m, n), K is a dynamic arg
// (CubeLoop::k_dynamic), and a buffer with a symbolic inner dim passes its
// leading dimension (and batch stride) as a dynamic arg.
#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using ::testing::HasSubstr;
using pto::v1::DT_BF16;
using pto::v1::DT_FP16;
using pto::v1::DT_FP32;

// One size per dim name; a graph is built at sizes and made symbolic by
// building it at sentinel sizes and renaming those dims.
using Sizes = std::map<std::string, int64_t>;
using GraphAt = std::function<pto::v1::Graph(const Sizes&)>;

const Sizes kSentinels = {{"m", 999983}, {"n", 999979}, {"k", 999961}, {"b", 999959}};

// `make` at the sentinels with the dims named in `symbolic` renamed to
// their symbols (the others at `fixed`).
pto::v1::Graph Symbolic(const GraphAt& make, const std::vector<std::string>& symbolic,
                        Sizes fixed) {
  std::map<int64_t, std::string> symbols;
  for (const std::string& s : symbolic) {
    fixed[s] = kSentinels.at(s);
    symbols[kSentinels.at(s)] = s;
  }
  return WithSymbols(make(fixed), symbols);
}

// Compiles once with `symbolic` dims and checks each of `runs` (sizes of
// every dim) against the reference; one plan per run, no recompile.
std::unique_ptr<runtime::Kernel> CompileOnceRun(const GraphAt& make,
                                                const std::vector<std::string>& symbolic,
                                                const std::vector<Sizes>& runs) {
  std::unique_ptr<runtime::Kernel> kernel =
      CompileAndLoad(Symbolic(make, symbolic, runs.front()));
  if (kernel == nullptr) return nullptr;
  for (const Sizes& s : runs) {
    std::string label;
    for (const auto& [name, v] : s) label += name + "=" + std::to_string(v) + " ";
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(s.at("m") * 7 + s.at("n") * 13 + s.at("k"));
    RunAndExpectMatch(make(s), *kernel, options, label);
  }
  EXPECT_EQ(kernel->plans_expanded(), static_cast<int>(runs.size()));
  return kernel;
}

// The cube tile of every case: m 16, k L0 8 / L1 16, n 16 (so 37 rows,
// 45 columns and 50 of K have full tiles and a tail).
const std::vector<int64_t> kCube = {16, 16, 8, 16, 16, 16};

// out[m, n] = x[m, k] @ w[k, n] (w transposed in memory: w_t[n, k]).
GraphAt Plain(pto::v1::DataType dtype, bool b_trans = false) {
  return [=](const Sizes& s) {
    GraphBuilder b("dyn_mm");
    const uint32_t x = b.Input("x", dtype, {s.at("m"), s.at("k")});
    const uint32_t w = b_trans ? b.Input("w", dtype, {s.at("n"), s.at("k")})
                               : b.Input("w", dtype, {s.at("k"), s.at("n")});
    b.Output("out", b.Matmul(x, w, pto::v1::DT_UNSPECIFIED, false, b_trans, kCube));
    return b.graph();
  };
}

std::vector<Sizes> Runs(const std::vector<std::array<int64_t, 3>>& mnk) {
  std::vector<Sizes> out;
  for (const auto& [m, n, k] : mnk) out.push_back({{"m", m}, {"n", n}, {"k", k}, {"b", 1}});
  return out;
}

TEST(DynamicMatmulTest, DynamicM) {
  CompileOnceRun(Plain(DT_FP32), {"m"}, Runs({{1, 24, 40}, {5, 24, 40}, {16, 24, 40}, {37, 24, 40}}));
}

TEST(DynamicMatmulTest, DynamicN) {
  CompileOnceRun(Plain(DT_FP32), {"n"}, Runs({{12, 1, 40}, {12, 7, 40}, {12, 16, 40}, {12, 45, 40}}));
}

TEST(DynamicMatmulTest, DynamicK) {
  CompileOnceRun(Plain(DT_FP32), {"k"}, Runs({{12, 24, 1}, {12, 24, 9}, {12, 24, 16}, {12, 24, 50}}));
}

TEST(DynamicMatmulTest, DynamicMNK) {
  const std::vector<Sizes> runs =
      Runs({{1, 1, 1}, {5, 7, 9}, {16, 16, 16}, {37, 45, 50}, {3, 33, 2}});
  CompileOnceRun(Plain(DT_FP32), {"m", "n", "k"}, runs);
  // B stored transposed: its leading dimension is K, a dynamic arg.
  CompileOnceRun(Plain(DT_FP32, /*b_trans=*/true), {"m", "n", "k"}, runs);
}

// FP16 (the cube converts its L1 tiles) and BF16 (on a machine with AMX,
// the AMX targets keep the FMA kernel for a run-time K or leading
// dimension: its tile kernel takes them as constants).
TEST(DynamicMatmulTest, HalfAndBf16) {
  const std::vector<Sizes> runs = Runs({{1, 1, 1}, {5, 7, 9}, {37, 45, 50}});
  CompileOnceRun(Plain(DT_FP16), {"m", "n", "k"}, runs);
  CompileOnceRun(Plain(DT_BF16), {"m", "n", "k"}, runs);
  // M alone: static K and leading dimensions, the AMX kernel where present.
  CompileOnceRun(Plain(DT_BF16), {"m"}, Runs({{1, 24, 40}, {20, 24, 40}, {37, 24, 40}}));
}

// out[b, 6, 10] = x[b, 6, k] @ w[b, k, 10]: a dynamic batch and K (batch
// strides of x and w are run-time args).
TEST(DynamicMatmulTest, BatchedDynamicBatchAndK) {
  CompileOnceRun(
      [](const Sizes& s) {
        GraphBuilder b("dyn_bmm");
        const uint32_t x = b.Input("x", DT_FP32, {s.at("b"), 6, s.at("k")});
        const uint32_t w = b.Input("w", DT_FP32, {s.at("b"), s.at("k"), 10});
        b.Output("out", b.Matmul(x, w, pto::v1::DT_UNSPECIFIED, false, false, kCube));
        return b.graph();
      },
      {"b", "k"},
      {{{"b", 1}, {"k", 1}, {"m", 6}, {"n", 10}},
       {{"b", 3}, {"k", 9}, {"m", 6}, {"n", 10}},
       {{"b", 5}, {"k", 50}, {"m", 6}, {"n", 10}}});
}

// (x @ w) * y + y over the symbolic [m, n]: the vector group reads the cube's
// result through its run-time strides.
TEST(DynamicMatmulTest, MatmulFeedingElementwise) {
  CompileOnceRun(
      [](const Sizes& s) {
        GraphBuilder b("dyn_mm_exp");
        const uint32_t x = b.Input("x", DT_FP32, {s.at("m"), s.at("k")});
        const uint32_t w = b.Input("w", DT_FP32, {s.at("k"), s.at("n")});
        const uint32_t y = b.Input("y", DT_FP32, {s.at("m"), s.at("n")});
        const uint32_t mm = b.Matmul(x, w, pto::v1::DT_UNSPECIFIED, false, false, kCube);
        b.Output("out", b.Op("add", {b.Op("mul", {mm, y}, {4, 8}), y}, {4, 8}));
        return b.graph();
      },
      {"m", "n", "k"}, Runs({{1, 1, 1}, {5, 7, 9}, {37, 45, 50}}));
}

// On an AMX target (host-x86_64-v3-amx here), BF16 with a symbolic M alone (static K and
// leading dimensions) generates AMX tile code; with a symbolic K or N the
// cube functions take the FMA kernel (AMX's takes them as constants).
TEST(DynamicMatmulTest, AmxTargetKeepsTilesForAStaticKAndLeadingDimensions) {
  compiler::CompileSettings settings;
  settings.keep_dumps = true;
  auto cpp = [&](const std::vector<std::string>& symbolic) {
    auto r = compiler::Compile(Symbolic(Plain(DT_BF16), symbolic, Runs({{37, 45, 50}}).front()),
                               runtime::kHostAmxTarget, {}, settings);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->dumps["cpp"] : std::string();
  };
  EXPECT_THAT(cpp({"m"}), HasSubstr("pto_amx::AmxBegin();"));
  for (const std::vector<std::string>& symbolic :
       std::vector<std::vector<std::string>>{{"k"}, {"n"}, {"m", "n", "k"}}) {
    const std::string code = cpp(symbolic);
    EXPECT_THAT(code, ::testing::Not(HasSubstr("pto_amx::"))) << symbolic.back();
    EXPECT_THAT(code, HasSubstr("pto_cube::CubeMatmul")) << symbolic.back();
  }
}

// A binary whose run-time K passes the operands' end (a corrupt or crafted
// cache entry) is refused at launch, naming the template and the values,
// before any task reads past a buffer.
TEST(DynamicMatmulTest, RunTimeKPastTheOperandsIsRefused) {
  const Sizes run = Runs({{5, 7, 9}}).front();
  auto compiled = compiler::Compile(Symbolic(Plain(DT_FP32), {"k"}, run), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  pto::v1::KernelBinary bad = compiled->binary;
  pto::v1::ExecuteGraph* g = bad.mutable_execute_graph();
  int cube = -1;
  for (int t = 0; t < g->templates_size(); ++t) {
    if (g->templates(t).cube_k_arg() > 0) cube = t;
  }
  ASSERT_GE(cube, 0) << "no template takes K as a dynamic arg";
  const pto::v1::TaskTemplate& t = g->templates(cube);
  const uint32_t k = t.dynamic_args(static_cast<int>(t.cube_k_arg()) - 1);
  g->mutable_dynamic_offsets(static_cast<int>(k))->set_constant(1000);
  auto kernel = runtime::Kernel::Load(bad);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto report = ptoc::RunAndCheck(Plain(DT_FP32)(run), **kernel, {});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(),
              HasSubstr("a matmul reads K = 1000 elements of buffer "));
  EXPECT_THAT(report.status().message(), HasSubstr(t.label()));
  // A cube_k_arg naming no dynamic arg is refused at load.
  pto::v1::KernelBinary worse = compiled->binary;
  worse.mutable_execute_graph()->mutable_templates(cube)->set_cube_k_arg(99);
  auto refused = runtime::Kernel::Load(worse);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("cube_k_arg 99 out of range"));
}

}  // namespace
}  // namespace pto::testing
