// Row groups over a symbolic (DYNAMIC) last dim: softmax, layer
// norm and rms norm over [rows, n] compile once; a row of n <= the cap
// (SymbolicRowCap of the tile: 1024 for the tiles of 4 rows here with an AI
// core's 192 KiB UB) runs as
// one fused row group (one task per tile of rows, the row code with n from
// the task's args), a longer row the accumulating form, picked at launch.
// Each size is checked against the reference evaluator; at the same n the
// dynamic kernel's results are the static kernel's bits.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/pipeline.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "runtime/template_plans.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using pto::v1::DT_FP32;

// Graphs are built at a row length; the symbolic graph is the one built at
// kSymbolic with that dim renamed to the symbol "n".
constexpr int64_t kSymbolic = 999983;
constexpr int64_t kRows = 5;  // a full tile of 4 rows and a tail of 1
const std::vector<int64_t> kTile = {4, 256};

using GraphAt = std::function<pto::v1::Graph(int64_t cols)>;

pto::v1::Graph Symbolic(const GraphAt& make) {
  return WithSymbols(make(kSymbolic), {{kSymbolic, "n"}});
}

// A softmax over rows of `cols`: e = exp(x - max(x)), s = sum(e), and
// `normalise` writes e / s its way.
pto::v1::Graph SoftmaxBy(const char* name, int64_t cols,
                         const std::function<uint32_t(GraphBuilder&, uint32_t e, uint32_t s)>& normalise) {
  GraphBuilder b(name);
  uint32_t x = b.Input("x", DT_FP32, {kRows, cols});
  uint32_t m = b.Op("amax", {x}, kTile, -1, true);
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, kTile)}, kTile);
  uint32_t s = b.Op("sum", {e}, kTile, -1, true);
  b.Output("out", normalise(b, e, s));
  return b.graph();
}

pto::v1::Graph Softmax(int64_t cols) {
  return SoftmaxBy("rows_softmax", cols, [](GraphBuilder& b, uint32_t e, uint32_t s) {
    return b.Op("div", {e, s}, kTile);
  });
}

// pypto's FP32 softmax: the reciprocal of the sum, then a multiply (one
// TSoftmaxRow call per row in the static kernel; in registers at n = 256
// with AVX-512F).
pto::v1::Graph SoftmaxRecip(int64_t cols) {
  return SoftmaxBy("rows_softmax_recip", cols, [](GraphBuilder& b, uint32_t e, uint32_t s) {
    return b.Op("mul", {e, b.Op("reciprocal", {s}, {4, 1})}, kTile);
  });
}

// 1/n as a number would make the graph depend on n (a symbol-valued scalar
// is other work), so the scale is an input here: exp(k) > 0.
uint32_t Scale(GraphBuilder& b) {
  return b.Op("exp", {b.Input("k", DT_FP32, {1})}, {1});
}

pto::v1::Graph LayerNorm(int64_t cols) {
  GraphBuilder b("rows_layer_norm");
  uint32_t x = b.Input("x", DT_FP32, {kRows, cols});
  uint32_t gamma = b.Input("gamma", DT_FP32, {cols});
  uint32_t beta = b.Input("beta", DT_FP32, {cols});
  uint32_t inv_n = Scale(b);
  uint32_t mean = b.Op("mul", {b.Op("sum", {x}, kTile, -1, true), inv_n}, {4, 1});
  uint32_t d = b.Op("sub", {x, mean}, kTile);
  uint32_t var = b.Op("mul", {b.Op("sum", {b.Op("mul", {d, d}, kTile)}, kTile, -1, true), inv_n},
                      {4, 1});
  uint32_t rstd = b.Op("rsqrt", {b.Op("adds", {var}, {4, 1}, {{"scalar", 1e-5}})}, {4, 1});
  uint32_t y = b.Op("mul", {b.Op("mul", {d, rstd}, kTile), gamma}, kTile);
  b.Output("out", b.Op("add", {y, beta}, kTile));
  return b.graph();
}

pto::v1::Graph RmsNorm(int64_t cols) {
  GraphBuilder b("rows_rms_norm");
  uint32_t x = b.Input("x", DT_FP32, {kRows, cols});
  uint32_t gamma = b.Input("gamma", DT_FP32, {cols});
  uint32_t inv_n = Scale(b);
  uint32_t ms = b.Op("mul", {b.Op("sum", {b.Op("mul", {x, x}, kTile)}, kTile, -1, true), inv_n},
                     {4, 1});
  uint32_t r = b.Op("rsqrt", {b.Op("adds", {ms}, {4, 1}, {{"scalar", 1e-6}})}, {4, 1});
  b.Output("out", b.Op("mul", {b.Op("mul", {x, r}, kTile), gamma}, kTile));
  return b.graph();
}

const std::vector<int64_t> kSizes = {1, 7, 64, 1000, 1024, 5000};  // 1024: the cap; 5000: past it

// Each size twice: inputs in [-2, 2], and at the edges: softmax rows over
// [-60, 60] (x - max down to -120: exp's subnormal results and zeros), the
// norms' inputs of mixed scales (magnitudes 1e-4 to 8 side by side). Every
// output element within the reference's error bound (client/ptoc/check.h).
TEST(DynamicRowsTest, SoftmaxLayerNormRmsNormCompiledOnceMatchTheReference) {
  for (const GraphAt& make : std::vector<GraphAt>{Softmax, SoftmaxRecip, LayerNorm, RmsNorm}) {
    const pto::v1::Graph symbolic = Symbolic(make);
    SCOPED_TRACE(symbolic.name());
    std::unique_ptr<runtime::Kernel> kernel = CompileAndLoad(symbolic);
    ASSERT_NE(kernel, nullptr);
    const bool softmax = symbolic.name().rfind("rows_softmax", 0) == 0;
    for (int64_t n : kSizes) {
      ptoc::CheckOptions options;
      options.seed = static_cast<uint64_t>(n);
      ASSERT_TRUE(RunAndExpectMatch(make(n), *kernel, options, absl::StrCat("n ", n)));
      ptoc::CheckOptions edges = options;
      if (softmax) {
        edges.low = -60;
        edges.high = 60;
      } else {
        edges.draw = ptoc::InputDraw::kMixedScales;
        edges.low = -8;
        edges.high = 8;
        edges.min_magnitude = 1e-4;
      }
      ASSERT_TRUE(RunAndExpectMatch(make(n), *kernel, edges, absl::StrCat("n ", n, " edges")));
    }
    EXPECT_EQ(kernel->plans_expanded(), static_cast<int64_t>(kSizes.size()));
  }
}

// The program picks the row groups by the row length at launch: rows within
// the cap run one task per tile of rows (2 for 5 rows), longer ones the
// accumulating form (init, accumulate, finish per reduction, and the rest).
TEST(DynamicRowsTest, RowsWithinTheCapRunOneTaskPerTileOfRows) {
  compiler::LoweringState state;
  const pto::v1::Graph graph = Symbolic(Softmax);
  state.graph = &graph;
  state.target = "host-x86_64";
  ASSERT_TRUE(compiler::RunPipeline(&state, nullptr, nullptr, "block_to_execute").ok());
  pto::v1::KernelBinary binary;
  binary.add_params();
  binary.add_params();
  *binary.mutable_execute_graph() = state.execute;
  const pto::v1::ExecuteGraph& e = binary.execute_graph();
  ASSERT_EQ(e.program_size(), 1);
  ASSERT_TRUE(e.program(0).has_if_node());
  EXPECT_EQ(e.program(0).if_node().then_body_size(), 1);  // the one row group
  for (int64_t n : {1, 100, 1024}) {
    auto expanded = runtime::ExpandTemplates(binary, {{"n", n}});
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    EXPECT_EQ(expanded->graph.tasks_size(), 2) << "n " << n;
  }
  auto longer = runtime::ExpandTemplates(binary, {{"n", 1025}});
  ASSERT_TRUE(longer.ok()) << longer.status();
  EXPECT_GT(longer->graph.tasks_size(), 2);
}

// The row code with a run-time length gives the static row code's bits: the
// same input through the dynamic kernel and through the kernel compiled for
// that n (a static row group: its tile widened to the row).
TEST(DynamicRowsTest, RunTimeRowsAreTheStaticRowsBits) {
  for (const GraphAt& make : std::vector<GraphAt>{Softmax, SoftmaxRecip, LayerNorm, RmsNorm}) {
    std::unique_ptr<runtime::Kernel> dynamic = CompileAndLoad(Symbolic(make));
    ASSERT_NE(dynamic, nullptr);
    for (int64_t n : {1, 33, 256, 1000, 2048}) {
      SCOPED_TRACE(::testing::Message() << make(1).name() << " n " << n);
      std::unique_ptr<runtime::Kernel> fixed = CompileAndLoad(make(n));
      ASSERT_NE(fixed, nullptr);
      std::mt19937 rng(static_cast<uint32_t>(n));
      std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
      std::vector<float> x(kRows * n), gamma(n), beta(n), k = {-2.0f};
      for (float& v : x) v = dist(rng);
      for (float& v : gamma) v = dist(rng);
      for (float& v : beta) v = dist(rng);
      // Parameters in the builder's order (softmax: x; layer norm: x,
      // gamma, beta, k; rms norm: x, gamma, k), then out.
      const std::string name = make(1).name();
      std::vector<float> got(kRows * n, -1.0f), want(kRows * n, -2.0f);
      auto run = [&](const runtime::Kernel& kernel, std::vector<float>* out) {
        std::vector<runtime::TensorArg> args = {{x.data(), DT_FP32, {kRows, n}}};
        if (name.rfind("rows_softmax", 0) != 0) args.push_back({gamma.data(), DT_FP32, {n}});
        if (name == "rows_layer_norm") args.push_back({beta.data(), DT_FP32, {n}});
        if (name.rfind("rows_softmax", 0) != 0) args.push_back({k.data(), DT_FP32, {1}});
        args.push_back({out->data(), DT_FP32, {kRows, n}});
        return kernel.Run(args);
      };
      ASSERT_TRUE(run(*dynamic, &got).ok());
      ASSERT_TRUE(run(*fixed, &want).ok());
      int differ = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        differ += std::memcmp(&got[i], &want[i], sizeof(float)) != 0;
      }
      EXPECT_EQ(differ, 0) << "first: " << got[0] << " vs " << want[0];
    }
  }
}

// A row whose maximum is zero: which zero (-0 or +0) is the static row
// code's (ReduceRow reduces such a row again in order), at every length.
TEST(DynamicRowsTest, ARowMaximumOfZerosKeepsTheStaticSign) {
  auto make = [](int64_t cols) {
    GraphBuilder b("rows_amax");
    uint32_t x = b.Input("x", DT_FP32, {kRows, cols});
    b.Output("out", b.Op("amax", {x}, kTile, -1, true));
    return b.graph();
  };
  std::unique_ptr<runtime::Kernel> dynamic = CompileAndLoad(Symbolic(make));
  ASSERT_NE(dynamic, nullptr);
  for (int64_t n : {33, 1000}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    std::unique_ptr<runtime::Kernel> fixed = CompileAndLoad(make(n));
    ASSERT_NE(fixed, nullptr);
    std::vector<float> x(kRows * n);
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t k = 0; k < n; ++k) x[r * n + k] = -1.0f - static_cast<float>(k % 7);
      // Zeros of both signs, in different lanes and groups of 16 per row.
      x[r * n + (r % n)] = (r % 2 == 0) ? -0.0f : 0.0f;
      x[r * n + ((r * 37 + 1) % n)] = (r % 2 == 0) ? 0.0f : -0.0f;
    }
    std::vector<float> got(kRows, 1.0f), want(kRows, 2.0f);
    ASSERT_TRUE(dynamic->Run({{x.data(), DT_FP32, {kRows, n}},
                              {got.data(), DT_FP32, {kRows, 1}}}).ok());
    ASSERT_TRUE(fixed->Run({{x.data(), DT_FP32, {kRows, n}},
                            {want.data(), DT_FP32, {kRows, 1}}}).ok());
    for (int64_t r = 0; r < kRows; ++r) {
      EXPECT_EQ(std::signbit(got[r]), std::signbit(want[r])) << "row " << r;
      EXPECT_EQ(got[r], want[r]) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace pto::testing
