// Kernels with a symbolic (DYNAMIC) outermost dim: compiled
// once, run for several sizes (1, sizes below, at and above the tile, not
// multiples of it), each checked against the reference evaluator on the
// static graph of that size.
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/pipeline.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/executor.h"
#include "runtime/kernel.h"
#include "runtime/template_plans.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using ::testing::HasSubstr;
using pto::v1::DT_FP16;
using pto::v1::DT_FP32;

// Graphs are built at a size; the symbolic graph is the one built at
// kSymbolic with that dim renamed to the symbol "bs".
constexpr int64_t kSymbolic = 999983;

using GraphAt = std::function<pto::v1::Graph(int64_t rows)>;

pto::v1::Graph Symbolic(const GraphAt& make) {
  return WithSymbols(make(kSymbolic), {{kSymbolic, "bs"}});
}

// Compiles the symbolic graph once and checks every size against the
// reference (within `tolerance`; null: the default); returns the kernel for
// more checks.
std::unique_ptr<runtime::Kernel> CompileOnceRunSizes(
    const GraphAt& make, const std::vector<int64_t>& sizes,
    const ptoc::Tolerance* tolerance = nullptr) {
  std::unique_ptr<runtime::Kernel> kernel = CompileAndLoad(Symbolic(make));
  if (kernel == nullptr) return nullptr;
  for (int64_t n : sizes) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(n);
    options.tolerance = tolerance;
    RunAndExpectMatch(make(n), *kernel, options, absl::StrCat("rows ", n));
  }
  return kernel;
}

pto::v1::Graph ExpAdd(int64_t rows) {
  GraphBuilder b("dyn_exp_add");
  uint32_t x = b.Input("x", DT_FP32, {rows, 40});
  uint32_t y = b.Input("y", DT_FP32, {rows, 40});
  b.Output("out", b.Op("add", {b.Op("exp", {x}, {4, 16}), y}, {4, 16}));
  return b.graph();
}

TEST(DynamicTest, ElementwiseCompiledOnceRunsEverySize) {
  const std::vector<int64_t> sizes = {1, 3, 4, 7, 64, 1001};
  // exp(x) + y cancels where y is near -exp(x): the reference's error bound
  // scales with the terms, not with the result.
  auto kernel = CompileOnceRunSizes(ExpAdd, sizes);
  ASSERT_NE(kernel, nullptr);
  // One plan per distinct size; a repeated size reuses its plan.
  EXPECT_EQ(kernel->plans_expanded(), static_cast<int64_t>(sizes.size()));
  ptoc::CheckOptions options;
  auto again = ptoc::RunAndCheck(ExpAdd(7), *kernel, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->pass());
  EXPECT_EQ(kernel->plans_expanded(), static_cast<int64_t>(sizes.size()));
}

TEST(DynamicTest, BroadcastRowAndFp16) {
  CompileOnceRunSizes(
      [](int64_t rows) {
        GraphBuilder b("dyn_bias");
        uint32_t x = b.Input("x", DT_FP16, {rows, 24});
        uint32_t bias = b.Input("bias", DT_FP16, {24});
        b.Output("out", b.Op("mul", {b.Op("add", {x, bias}, {8, 8}), x}, {8, 8}));
        return b.graph();
      },
      {1, 5, 8, 33});
}

// Softmax over the last dim with tiles spanning it (row fusion: one group).
pto::v1::Graph Softmax(int64_t rows) {
  GraphBuilder b("dyn_softmax");
  uint32_t x = b.Input("x", DT_FP32, {rows, 64});
  uint32_t m = b.Op("amax", {x}, {2, 64}, -1, true);
  uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {2, 64})}, {2, 64});
  uint32_t s = b.Op("sum", {e}, {2, 64}, -1, true);
  b.Output("out", b.Op("div", {e, s}, {2, 64}));
  return b.graph();
}

TEST(DynamicTest, SoftmaxOverADynamicBatch) {
  CompileOnceRunSizes(Softmax, {1, 7, 64, 1000});
}

// A last-dim sum whose tiles do not span the row, too long to widen
// (3 x 4000 > kMaxWidenedTileElements): partial results in a workspace of
// [bs, 125] slots, sized at launch, then combined.
TEST(DynamicTest, PartialAndCombineWithAWorkspaceSizedAtLaunch) {
  CompileOnceRunSizes(
      [](int64_t rows) {
        GraphBuilder b("dyn_rowsum");
        uint32_t x = b.Input("x", DT_FP32, {rows, 4000});
        b.Output("out", b.Op("sum", {x}, {3, 32}, -1, true));
        return b.graph();
      },
      {1, 2, 3, 10, 101});
}

// Runs from several threads at once over more sizes than the plan cache
// keeps: plans are expanded, shared and evicted concurrently.
TEST(DynamicTest, ConcurrentRunsOverMoreSizesThanThePlanCacheKeeps) {
  auto compiled = compiler::Compile(Symbolic(ExpAdd), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto loaded = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const runtime::Kernel& kernel = **loaded;
  constexpr int kSizes = runtime::Kernel::kMaxCachedPlans + 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (int k = 0; k < kSizes; ++k) {
          const int64_t rows = 1 + (k * 7 + t * 5 + round) % kSizes;
          std::vector<float> x(rows * 40), y(rows * 40), out(rows * 40, -1);
          for (size_t i = 0; i < x.size(); ++i) {
            x[i] = static_cast<float>((i * 13 + t) % 17) / 8.0f - 1.0f;
            y[i] = static_cast<float>(i % 5);
          }
          absl::Status s = kernel.Run({{x.data(), DT_FP32, {rows, 40}},
                                       {y.data(), DT_FP32, {rows, 40}},
                                       {out.data(), DT_FP32, {rows, 40}}});
          bool ok = s.ok();
          for (size_t i = 0; ok && i < x.size(); ++i) {
            const float want = std::exp(x[i]) + y[i];
            ok = std::fabs(out[i] - want) <= 1e-5f * std::fabs(want) + 1e-6f;
          }
          if (!ok) failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(kernel.plans_expanded(), kSizes);
}

// Runs ExpAdd at `rows` on `kernel`: "hit" or "miss" (whether the plan was
// cached), or the error.
std::string RunExpAdd(const runtime::Kernel& kernel, int64_t rows) {
  std::vector<float> x(rows * 40, 0.5f), y(rows * 40, 1.0f), out(rows * 40, -1);
  runtime::LaunchProfile profile;
  runtime::RunOptions options;
  options.profile = &profile;
  absl::Status s = kernel.Run({{x.data(), DT_FP32, {rows, 40}},
                               {y.data(), DT_FP32, {rows, 40}},
                               {out.data(), DT_FP32, {rows, 40}}},
                              nullptr, options);
  if (!s.ok()) return std::string(s.message());
  for (float v : out) {
    if (std::fabs(v - (std::exp(0.5f) + 1.0f)) > 1e-5f) {
      return "wrong value " + std::to_string(v);
    }
  }
  return profile.plan_cached ? "hit" : "miss";
}

// The plan cache: a repeated size hits, a new one misses; the least recently
// used plan goes beyond kMaxCachedPlans, and beyond the byte bound (the
// newest always stays).
TEST(DynamicTest, PlanCacheHitsMissesAndEvicts) {
  auto compiled = compiler::Compile(Symbolic(ExpAdd), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto loaded = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const runtime::Kernel& kernel = **loaded;
  EXPECT_EQ(RunExpAdd(kernel, 5), "miss");  // miss
  EXPECT_EQ(RunExpAdd(kernel, 5), "hit");   // hit
  EXPECT_EQ(kernel.plans_expanded(), 1);
  constexpr int kMax = runtime::Kernel::kMaxCachedPlans;
  for (int64_t rows = 6; rows < 6 + kMax; ++rows) {
    ASSERT_EQ(RunExpAdd(kernel, rows), "miss");
  }
  EXPECT_EQ(kernel.cached_plans(), kMax);
  // 5 was the least recently used: gone; the newest is still there.
  EXPECT_EQ(RunExpAdd(kernel, 5), "miss");
  EXPECT_EQ(RunExpAdd(kernel, 5 + kMax), "hit");
  EXPECT_EQ(kernel.plans_expanded(), kMax + 2);

  // A byte bound below one plan: only the newest plan stays.
  kernel.set_max_cached_plan_bytes(0);
  EXPECT_EQ(kernel.cached_plans(), 1);
  EXPECT_EQ(RunExpAdd(kernel, 5 + kMax), "hit");
  EXPECT_EQ(RunExpAdd(kernel, 3), "miss");
  EXPECT_EQ(RunExpAdd(kernel, 3), "hit");
  EXPECT_EQ(RunExpAdd(kernel, 5 + kMax), "miss");
  EXPECT_EQ(kernel.cached_plans(), 1);
  // A bound that fits them all again.
  kernel.set_max_cached_plan_bytes(runtime::Kernel::kMaxCachedPlanBytes);
  EXPECT_EQ(RunExpAdd(kernel, 3), "miss");
  EXPECT_EQ(RunExpAdd(kernel, 5 + kMax), "hit");
  EXPECT_EQ(kernel.cached_plans(), 2);
  // Errors are still raised on both paths: a binding conflict on a cached
  // size, and a bad dtype.
  std::vector<float> a(3 * 40), b(4 * 40), c(3 * 40);
  absl::Status conflict = kernel.Run({{a.data(), DT_FP32, {3, 40}},
                                      {b.data(), DT_FP32, {4, 40}},
                                      {c.data(), DT_FP32, {3, 40}}});
  EXPECT_THAT(conflict.message(), HasSubstr("symbol bs"));
  absl::Status dtype = kernel.Run({{a.data(), DT_FP16, {3, 40}},
                                   {a.data(), DT_FP32, {3, 40}},
                                   {c.data(), DT_FP32, {3, 40}}});
  EXPECT_THAT(dtype.message(), HasSubstr("expected dtype DT_FP32"));
}

TEST(DynamicTest, BindingErrorsNameBothArguments) {
  auto compiled = compiler::Compile(Symbolic(ExpAdd), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> x(6 * 41), y(6 * 41), out(6 * 41);
  auto run = [&](int64_t xr, int64_t xc, int64_t yr, int64_t orows) {
    return (*kernel)->Run({{x.data(), DT_FP32, {xr, xc}},
                           {y.data(), DT_FP32, {yr, 40}},
                           {out.data(), DT_FP32, {orows, 40}}});
  };
  EXPECT_TRUE(run(5, 40, 5, 5).ok());
  absl::Status s = run(5, 40, 6, 5);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 1 'y': dim 0 is 6, but symbol bs "
                                     "is 5 from argument 0 'x' dim 0"));
  s = run(5, 40, 4, 5);  // smaller than the bound size: a read past y
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 1 'y': dim 0 is 4, but symbol bs "
                                     "is 5 from argument 0 'x' dim 0"));
  s = run(5, 41, 5, 5);
  EXPECT_THAT(s.message(),
              HasSubstr("argument 0 'x': expected shape [bs,40] = [5,40], got [5,41]"));
  s = run(0, 40, 0, 0);
  EXPECT_THAT(s.message(), HasSubstr("symbol bs) is 0; sizes must be positive"));
}

// The Execute Graph of `graph` (no native compile), as a binary with its
// parameters counted (what ExpandTemplates reads).
pto::v1::KernelBinary Lowered(const pto::v1::Graph& graph) {
  compiler::LoweringState state;
  state.graph = &graph;
  state.target = "host-x86_64";
  absl::Status s = compiler::RunPipeline(&state, nullptr, nullptr, "block_to_execute");
  EXPECT_TRUE(s.ok()) << s;
  pto::v1::KernelBinary binary;
  for (size_t p = 0; p < state.tensor.params.size(); ++p) binary.add_params();
  *binary.mutable_execute_graph() = state.execute;
  return binary;
}

// For a static size, the template expands to exactly the tasks, functions
// and dependencies the static compile makes.
TEST(DynamicTest, ExpansionEqualsTheStaticAnalysis) {
  for (const GraphAt& make : std::vector<GraphAt>{ExpAdd, Softmax}) {
    const pto::v1::KernelBinary dynamic = Lowered(Symbolic(make));
    for (int64_t n : {1, 6, 9}) {
      const pto::v1::KernelBinary fixed = Lowered(make(n));
      auto expanded = runtime::ExpandTemplates(dynamic, {{"bs", n}});
      ASSERT_TRUE(expanded.ok()) << expanded.status();
      const pto::v1::ExecuteGraph& want = fixed.execute_graph();
      const pto::v1::ExecuteGraph& got = expanded->graph;
      ASSERT_EQ(got.tasks_size(), want.tasks_size()) << "rows " << n;
      for (int t = 0; t < want.tasks_size(); ++t) {
        SCOPED_TRACE(::testing::Message() << "rows " << n << " task " << t);
        // Full tiles (and static tails) run the static compile's function;
        // tails along bs the generic one (name + "_n"), which gets the
        // extents the static compile's function is named after.
        const std::string& got_fn = got.functions(got.tasks(t).function()).name();
        const std::string& want_fn = want.functions(want.tasks(t).function()).name();
        const int rank = want.tasks(t).args_size();
        const std::vector<int64_t> got_args(got.tasks(t).args().begin(),
                                            got.tasks(t).args().end());
        ASSERT_GE(got_args.size(), static_cast<size_t>(rank));
        EXPECT_THAT(std::vector<int64_t>(got_args.begin(), got_args.begin() + rank),
                    ::testing::ElementsAreArray(want.tasks(t).args()));
        const std::string want_extent = want_fn.substr(want_fn.rfind('_') + 1);
        if (got_args.size() > static_cast<size_t>(rank)) {  // extents as args
          EXPECT_EQ(absl::StrJoin(got_args.begin() + rank, got_args.end(), "x"), want_extent);
        }
        if (absl::EndsWith(got_fn, "_n")) {
          EXPECT_EQ(got_fn.substr(0, got_fn.rfind('_', got_fn.size() - 3)),
                    want_fn.substr(0, want_fn.rfind('_')));
        } else {
          EXPECT_EQ(got_fn, want_fn);
        }
        EXPECT_THAT(got.tasks(t).deps(), ::testing::ElementsAreArray(want.tasks(t).deps()));
      }
    }
  }
}

// A templated binary whose graph does not check out is refused at load,
// naming what is wrong (binaries may come from a cache or the network).
TEST(DynamicTest, MalformedTemplatesAreRefusedAtLoad) {
  auto compiled = compiler::Compile(Symbolic(ExpAdd), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const pto::v1::KernelBinary good = compiled->binary;
  auto refused = [&](const std::function<void(pto::v1::ExecuteGraph*)>& edit,
                     const std::string& what) {
    pto::v1::KernelBinary bad = good;
    edit(bad.mutable_execute_graph());
    auto kernel = runtime::Kernel::Load(bad);
    ASSERT_FALSE(kernel.ok()) << what;
    EXPECT_THAT(kernel.status().message(), HasSubstr(what));
  };
  refused([](pto::v1::ExecuteGraph* g) { g->mutable_symbols(0)->set_dim(1); },
          "symbol 0 'bs': param 0 dim 1 is not that symbol");
  refused([](pto::v1::ExecuteGraph* g) {
            g->mutable_templates(0)->mutable_functions(0)->set_function(999);
          },
          "a function entry does not match");
  refused([](pto::v1::ExecuteGraph* g) {
            g->mutable_templates(0)->mutable_accesses(0)->set_buffer(99);
          },
          "an access names a buffer out of range");
  refused([](pto::v1::ExecuteGraph* g) {
            g->mutable_templates(0)->mutable_accesses(0)->mutable_index(0)->set_space_dim(7);
          },
          "an access index is out of range");
  refused([](pto::v1::ExecuteGraph* g) { g->mutable_templates(0)->set_tile(0, 0); },
          "tile dims must be positive");
  refused([](pto::v1::ExecuteGraph* g) { g->add_tasks(); }, "lists tasks too");
  EXPECT_TRUE(runtime::Kernel::Load(good).ok());
}

// Reductions over a symbolic dim: the accumulating form (init the
// slot, fold each tile along the dim into it one after another, finish).
TEST(DynamicTest, ReductionsOverASymbolicDimCompiledOnce) {
  for (const char* op : {"sum", "amax", "amin", "prod"}) {
    SCOPED_TRACE(op);
    // Over the outermost dim, keepdim.
    CompileOnceRunSizes(
        [op](int64_t rows) {
          GraphBuilder b("dyn_colred");
          uint32_t x = b.Input("x", DT_FP32, {rows, 6});
          b.Output("out", b.Op(op, {x}, {4, 8}, 0, true));
          return b.graph();
        },
        {1, 3, 4, 17});
    if (std::string(op) == "prod") continue;  // (a product of 300 values overflows)
    // Over the last dim, without keepdim, sizes far above the tile.
    CompileOnceRunSizes(
        [op](int64_t cols) {
          GraphBuilder b("dyn_rowred");
          uint32_t x = b.Input("x", DT_FP32, {5, cols});
          b.Output("out", b.Op(op, {x}, {2, 16}, -1, false));
          return b.graph();
        },
        {1, 15, 16, 33, 300});
  }
}

TEST(DynamicTest, Fp16SumAndSoftmaxOverASymbolicLastDim) {
  CompileOnceRunSizes(
      [](int64_t cols) {
        GraphBuilder b("dyn_sum16");
        uint32_t x = b.Input("x", DT_FP16, {3, cols});
        b.Output("out", b.Op("sum", {x}, {2, 32}, -1, true));
        return b.graph();
      },
      {1, 31, 64, 200});
  // Softmax: no fused row group over a symbolic row (the tile cannot span
  // it), so max, exp and sum are groups of their own.
  CompileOnceRunSizes(
      [](int64_t cols) {
        GraphBuilder b("dyn_softmax_cols");
        uint32_t x = b.Input("x", DT_FP32, {3, cols});
        uint32_t m = b.Op("amax", {x}, {2, 16}, -1, true);
        uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, {2, 16})}, {2, 16});
        uint32_t s = b.Op("sum", {e}, {2, 16}, -1, true);
        b.Output("out", b.Op("div", {e, s}, {2, 16}));
        return b.graph();
      },
      {1, 7, 16, 100});
}

// The accumulating form's tasks: init, the tiles along bs one after another
// (each depends on the one before), then finish after the last.
TEST(DynamicTest, AccumulatingTilesRunInOrder) {
  const pto::v1::KernelBinary binary = Lowered(Symbolic([](int64_t rows) {
    GraphBuilder b("dyn_colsum");
    uint32_t x = b.Input("x", DT_FP32, {rows, 6});
    b.Output("out", b.Op("sum", {x}, {4, 8}, 0, true));
    return b.graph();
  }));
  const pto::v1::ExecuteGraph& e = binary.execute_graph();
  ASSERT_EQ(e.templates_size(), 3);
  EXPECT_EQ(e.templates(0).serial_dim(), 0u);
  EXPECT_EQ(e.templates(1).serial_dim(), 1u);  // dim 0
  EXPECT_EQ(e.templates(2).serial_dim(), 0u);
  auto expanded = runtime::ExpandTemplates(binary, {{"bs", 10}});
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  const pto::v1::ExecuteGraph& got = expanded->graph;
  ASSERT_EQ(got.tasks_size(), 5);  // init, 3 tiles of 4 rows (4, 4, 2), finish
  EXPECT_THAT(got.tasks(1).deps(), ::testing::ElementsAre(0));
  EXPECT_THAT(got.tasks(2).deps(), ::testing::Contains(1));
  EXPECT_THAT(got.tasks(3).deps(), ::testing::Contains(2));
  EXPECT_THAT(got.tasks(4).deps(), ::testing::Contains(3));
}

// argmax/argmin over a symbolic dim: the slot carries the index too; a tile
// replaces it where its value is better (or NaN where the slot's is not),
// so ties keep the first index, as torch does.
TEST(DynamicTest, ArgReductionsOverASymbolicDim) {
  for (const char* op : {"argmax", "argmin"}) {
    SCOPED_TRACE(op);
    CompileOnceRunSizes(
        [op](int64_t rows) {
          GraphBuilder b("dyn_colarg");
          uint32_t x = b.Input("x", DT_FP32, {rows, 6});
          b.Output("out", b.Op(op, {x}, {4, 8}, 0, true));
          return b.graph();
        },
        {1, 3, 4, 17});
    CompileOnceRunSizes(
        [op](int64_t cols) {
          GraphBuilder b("dyn_rowarg");
          uint32_t x = b.Input("x", DT_FP16, {5, cols});
          b.Output("out", b.Op(op, {x}, {2, 16}, -1, false));
          return b.graph();
        },
        {1, 15, 16, 33, 300});
  }
}

// Integer amax/amin/argmax/argmin over a symbolic last dim: the int64
// accumulator starts from INT64_MIN/INT64_MAX (the latter not a double, so
// built in the init task). Rows of the dtype's extremes only (every value
// equals the identity of one of max and min), extremes mixed with ties, and
// small values with ties; sizes 1, a tail below the tile, and above it.
template <typename T>
void IntReductionsOverASymbolicLastDim(pto::v1::DataType dtype) {
  constexpr T kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  constexpr int64_t kRows = 4;
  for (const char* op : {"amax", "amin", "argmax", "argmin"}) {
    SCOPED_TRACE(op);
    const bool arg = op[0] == 'a' && op[1] == 'r';
    const bool max = std::string(op).find("max") != std::string::npos;
    const pto::v1::DataType out_dtype = arg ? pto::v1::DT_INT64 : dtype;
    auto compiled = compiler::Compile(Symbolic([&](int64_t cols) {
                                        GraphBuilder b("dyn_int_red");
                                        uint32_t x = b.Input("x", dtype, {kRows, cols});
                                        b.Output("out", b.Op(op, {x}, {2, 16}, -1, false));
                                        return b.graph();
                                      }),
                                      "host", {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    auto kernel = runtime::Kernel::Load(compiled->binary);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    for (int64_t cols : {1, 5, 40}) {
      SCOPED_TRACE(cols);
      std::vector<T> x(kRows * cols);
      for (int64_t j = 0; j < cols; ++j) {
        x[0 * cols + j] = kHi;
        x[1 * cols + j] = kLo;
        x[2 * cols + j] = j % 3 == 0 ? kLo : j % 3 == 1 ? kHi : T{0};
        x[3 * cols + j] = static_cast<T>((j * 7) % 5) - 2;
      }
      std::vector<int64_t> out(kRows, 12345);  // int64 for arg*, else T
      std::vector<T> out_t(kRows, T{42});
      void* out_data = arg ? static_cast<void*>(out.data()) : static_cast<void*>(out_t.data());
      absl::Status s = (*kernel)->Run(
          {{x.data(), dtype, {kRows, cols}}, {out_data, out_dtype, {kRows}}});
      ASSERT_TRUE(s.ok()) << s;
      for (int64_t r = 0; r < kRows; ++r) {
        int64_t best = 0;  // the first index of the best value
        for (int64_t j = 1; j < cols; ++j) {
          const T v = x[r * cols + j], b = x[r * cols + best];
          if (max ? v > b : v < b) best = j;
        }
        if (arg) {
          EXPECT_EQ(out[r], best) << "row " << r;
        } else {
          EXPECT_EQ(out_t[r], x[r * cols + best]) << "row " << r;
        }
      }
    }
    EXPECT_EQ((*kernel)->plans_expanded(), 3);  // one compile, three sizes
  }
}

TEST(DynamicTest, Int32ExtremaOverASymbolicLastDim) {
  IntReductionsOverASymbolicLastDim<int32_t>(pto::v1::DT_INT32);
}

TEST(DynamicTest, Int64ExtremaOverASymbolicLastDim) {
  IntReductionsOverASymbolicLastDim<int64_t>(pto::v1::DT_INT64);
}

// Symbolic inner dims: GM strides are run-time args, tails along
// any symbolic dim run the generic function (extents from the args).
TEST(DynamicTest, SymbolicInnerDimsCompiledOnce) {
  auto make = [](int64_t rows, int64_t cols) {
    GraphBuilder b("dyn_inner");
    uint32_t x = b.Input("x", DT_FP32, {rows, cols});
    uint32_t y = b.Input("y", DT_FP32, {rows, cols});
    b.Output("out", b.Op("mul", {b.Op("add", {x, y}, {4, 8}), x}, {4, 8}));
    return b.graph();
  };
  for (bool rows_symbolic : {false, true}) {
    std::unique_ptr<runtime::Kernel> kernel = CompileAndLoad(WithSymbols(
        make(rows_symbolic ? 999979 : 4, 999983), {{999983, "cols"}, {999979, "rows"}}));
    ASSERT_NE(kernel, nullptr);
    for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {4, 1}, {4, 8}, {4, 13}, {4, 300}, {1, 1}, {5, 9}, {33, 70}}) {
      if (!rows_symbolic && rows != 4) continue;
      ptoc::CheckOptions options;
      options.seed = static_cast<uint64_t>(rows * 1000 + cols);
      ASSERT_TRUE(RunAndExpectMatch(make(rows, cols), *kernel, options,
                                    absl::StrCat(rows, "x", cols)));
    }
  }
}

// A binary whose run-time GM stride disagrees with the buffer it addresses
// (a corrupt or crafted cache entry) is refused at launch, naming the
// template, the access and both values, before any task runs; one that
// does not say which arg is a stride it needs is refused at load.
TEST(DynamicTest, RunTimeStridesAreCheckedAgainstTheBuffers) {
  auto make = [](int64_t cols) {
    GraphBuilder b("dyn_stride");
    uint32_t x = b.Input("x", DT_FP32, {4, cols});
    b.Output("out", b.Op("exp", {x}, {2, 8}));
    return b.graph();
  };
  const pto::v1::Graph g = WithSymbols(make(999983), {{999983, "cols"}});
  auto compiled = compiler::Compile(g, "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const pto::v1::KernelBinary good = compiled->binary;
  const pto::v1::TaskTemplate& t = good.execute_graph().templates(0);
  ASSERT_EQ(t.accesses_size(), 2);
  for (const pto::v1::TemplateAccess& a : t.accesses()) {
    // [4, cols]: dim 0's stride is cols, a dynamic arg; dim 1's is 1.
    ASSERT_EQ(a.stride_arg_size(), 2);
    EXPECT_GT(a.stride_arg(0), 0u);
    EXPECT_EQ(a.stride_arg(1), 0u);
  }
  const uint32_t offset = t.dynamic_args(static_cast<int>(t.accesses(0).stride_arg(0)) - 1);
  EXPECT_EQ(good.execute_graph().dynamic_offsets(static_cast<int>(offset)).symbol(), "cols");

  pto::v1::KernelBinary bad = good;
  bad.mutable_execute_graph()->mutable_dynamic_offsets(static_cast<int>(offset))->set_constant(1000);
  auto kernel = runtime::Kernel::Load(bad);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto report = ptoc::RunAndCheck(make(9), **kernel, {});
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(report.status().message(),
              ::testing::AllOf(HasSubstr(absl::StrCat("template ", t.label(), ": access #0")),
                               HasSubstr("shape [4,9]) addresses dim 0 with stride 1000"),
                               HasSubstr("row-major stride there is 9")));

  auto refused = [&](const std::function<void(pto::v1::TemplateAccess*)>& edit,
                     const std::string& what) {
    pto::v1::KernelBinary worse = good;
    edit(worse.mutable_execute_graph()->mutable_templates(0)->mutable_accesses(1));
    auto k = runtime::Kernel::Load(worse);
    ASSERT_FALSE(k.ok()) << what;
    EXPECT_THAT(k.status().message(), HasSubstr(what));
  };
  refused([](pto::v1::TemplateAccess* a) { a->clear_stride_arg(); },
          "an access to buffer 1 of shape [4,cols] names no dynamic arg for the stride of dim 0");
  refused([](pto::v1::TemplateAccess* a) { a->set_stride_arg(0, 99); },
          "takes the stride of dim 0 from dynamic arg 98 of 1");
  refused([](pto::v1::TemplateAccess* a) { a->add_stride_arg(0); }, "stride args for 3 of its 2 dims");
  EXPECT_TRUE(runtime::Kernel::Load(good).ok());
}

// A reduction over a static dim with a tail, in a group whose other dim is
// symbolic: a tile with tails in both dims runs the generic function, whose
// padding must not change a max or a min (it is the reduction's identity).
TEST(DynamicTest, GenericTailsPadReductionsWithTheirIdentity) {
  for (const char* op : {"amax", "amin", "sum"}) {
    SCOPED_TRACE(op);
    CompileOnceRunSizes(
        [op](int64_t rows) {
          GraphBuilder b("dyn_rowred");
          uint32_t x = b.Input("x", DT_FP32, {rows, 100});
          // All of one sign, so that a zero padding would show.
          uint32_t a = b.Op(std::string(op) == "amin" ? "exp" : "neg",
                            {b.Op("exp", {x}, {3, 32})}, {3, 32});
          b.Output("out", b.Op(op, {a}, {3, 32}, -1, true));
          return b.graph();
        },
        {1, 2, 4, 10});
  }
}

// Gives the op defining `out` the float attribute `name` = e: an f when e is
// constant (the reference's graph at a size), else an expr (the compiled
// graph's, over "bs").
void SetScalar(pto::v1::Graph* g, uint32_t out, const std::string& name,
               const compiler::SymExpr& e) {
  for (pto::v1::Op& op : *g->mutable_ops()) {
    if (op.outputs(0) != out) continue;
    pto::v1::Attribute& a = (*op.mutable_attrs())[name];
    if (std::optional<int64_t> c = e.AsConstant()) {
      a.set_f(static_cast<double>(*c));
    } else {
      *a.mutable_expr() = e.ToProto();
    }
  }
}

// The size at `rows`: the symbol "bs" in the compiled graph.
compiler::SymExpr Bs(int64_t rows) {
  return rows == kSymbolic ? compiler::SymExpr::Symbol("bs") : compiler::SymExpr(rows);
}

// A dynamic size used as a number: x * bs, / (2bs + 1), clip to
// [-(bs % 3), bs], + full(bs - 5), bs - that; each scalar a dynamic arg
// converted to the compute type (f32; double for DOUBLE), compiled once.
TEST(DynamicTest, ScalarOperandsOverASymbolCompiledOnce) {
  for (pto::v1::DataType dtype : {DT_FP32, DT_FP16, pto::v1::DT_DOUBLE}) {
    SCOPED_TRACE(pto::v1::DataType_Name(dtype));
    CompileOnceRunSizes(
        [dtype](int64_t rows) {
          const compiler::SymExpr bs = Bs(rows);
          GraphBuilder b("dyn_scalars");
          const std::vector<int64_t> tile = {4, 16};
          uint32_t x = b.Input("x", dtype, {rows, 40});
          uint32_t y = b.Op("muls", {x}, tile, {{"scalar", 0}});
          uint32_t z = b.Op("divs", {y}, tile, {{"scalar", 0}});
          uint32_t w = b.Op("clip", {z}, tile, {{"min", 0}, {"max", 0}});
          uint32_t f = b.Create("full", dtype, {40}, {{"value", 0}});
          uint32_t r = b.Op("rsubs", {b.Op("add", {w, f}, tile)}, tile, {{"scalar", 0}});
          b.Output("out", r);
          pto::v1::Graph g = b.graph();
          SetScalar(&g, y, "scalar", bs);
          SetScalar(&g, z, "scalar", bs * 2 + 1);
          SetScalar(&g, w, "min", -compiler::SymExpr::Mod(bs, 3));
          SetScalar(&g, w, "max", bs);
          SetScalar(&g, f, "value", bs - 5);
          SetScalar(&g, r, "scalar", bs);
          return g;
        },
        {1, 7, 64, 1000});
  }
}

// rms_norm's mean over a DYNAMIC last dim: sum(x * x) / n, n a dynamic arg,
// compiled once: rows up to the cap (4096 for tiles of 2 rows) in fused row
// groups (the run-time row function reads n), 5000 in the accumulating form.
TEST(DynamicTest, MeanOverASymbolicLastDimCompiledOnce) {
  CompileOnceRunSizes(
      [](int64_t cols) {
        GraphBuilder b("dyn_rms_norm");
        const std::vector<int64_t> tile = {2, 16};
        uint32_t x = b.Input("x", DT_FP32, {4, cols});
        uint32_t ss = b.Op("sum", {b.Op("mul", {x, x}, tile)}, tile, -1, true);
        uint32_t ms = b.Op("divs", {ss}, tile, {{"scalar", 0}});
        uint32_t r = b.Op("rsqrt", {b.Op("adds", {ms}, tile, {{"scalar", 1e-6}})}, tile);
        b.Output("out", b.Op("mul", {x, r}, tile));
        pto::v1::Graph g = b.graph();
        SetScalar(&g, ms, "scalar", Bs(cols));
        return g;
      },
      {1, 7, 64, 1000, 5000});
}

}  // namespace
}  // namespace pto::testing
