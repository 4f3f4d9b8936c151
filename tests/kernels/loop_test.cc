// Loops: kernels with loop regions compiled once and run
// for several sizes, each checked against the reference evaluator (which
// writes the loops out) on the graph built at that size.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "runtime/template_plans.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using ::testing::HasSubstr;
using compiler::SymExpr;
using compiler::SymShape;
using compiler::testing::GraphBuilder;
using pto::v1::DT_FP32;
using Ids = std::vector<uint32_t>;

// The loop indices most graphs here use.
const SymExpr kI = SymExpr::Symbol("i"), kJ = SymExpr::Symbol("j");

// The frame most graphs here share: graph `name` with an FP32 IN tensor
// `in_name` and an FP32 INOUT "out", both of `shape`; `fill(b, in, out)`
// adds the ops (usually a loop carrying out) and returns out's new value.
using FillFn = std::function<uint32_t(GraphBuilder& b, uint32_t in, uint32_t out)>;
pto::v1::Graph InToOut(const std::string& name, const std::string& in_name,
                       const SymShape& shape, const FillFn& fill) {
  GraphBuilder b(name);
  const uint32_t in = b.SymInput(in_name, DT_FP32, shape);
  const uint32_t out = b.SymValue(DT_FP32, shape, "out");
  b.InOut("out", out, fill(b, in, out));
  return b.Build();
}

// for idx in loop(0, bs): out[idx] = softmax(inp[idx]) over the last dim of
// [bs, 4, cols], tile [1, 4, tile_cols]; out is carried (INOUT).
pto::v1::Graph SoftmaxRows(const std::string& name, const SymExpr& bs, int64_t cols,
                           int64_t tile_cols) {
  return InToOut(name, "inp", {bs, 4, cols}, [&](GraphBuilder& b, uint32_t inp,
                                                 uint32_t out) {
    const SymExpr i = SymExpr::Symbol("idx");
    const std::vector<int64_t> tile = {1, 4, tile_cols};
    return b.Loop("idx", 0, bs, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(inp, {i, 0, 0}, {1, 4, cols}, tile);
      const uint32_t m = b.Op("amax", {x}, tile);
      const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
      const uint32_t y = b.Op("div", {e, b.Op("sum", {e}, tile)}, tile);
      return Ids{b.Assemble(y, args[0], {i, 0, 0}, tile)};
    })[0];
  });
}

// The loop softmax: for idx in loop(0, bs): out[idx:idx+1] =
// softmax(inp[idx:idx+1]) over the last dim; out is carried (INOUT).
pto::v1::Graph SoftmaxLoop(const SymExpr& bs) {
  return SoftmaxRows("softmax_loop", bs, 16, 16);
}

TEST(LoopTest, SoftmaxLoopCompiledOnceRunsEveryBatch) {
  auto kernel = CompileOverBs(SoftmaxLoop);
  ASSERT_NE(kernel, nullptr);
  RunSizes(SoftmaxLoop, *kernel, {1, 7, 64, 1000});
  // Plans are expanded once per binding: a repeated size reuses its plan.
  EXPECT_EQ(kernel->plans_expanded(), 4);
  RunSizes(SoftmaxLoop, *kernel, {7, 64});
  EXPECT_EQ(kernel->plans_expanded(), 4);
}

TEST(LoopTest, IndependentIterationsHaveNoDependencies) {
  auto compiled = compiler::Compile(SoftmaxLoop(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", 5}});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->graph.tasks_size(), 5);  // one fused task per iteration
  for (const pto::v1::Task& t : g->graph.tasks()) {
    EXPECT_EQ(t.deps_size(), 0);
    ASSERT_EQ(t.args_size(), 4);  // 3 tile offsets, then the dynamic offset idx
  }
  EXPECT_EQ(g->graph.tasks(3).args(3), 3);
}

// A softmax with the loop softmax's [1,4,64] tile over rows of 4096: a whole-row
// tile ([1,4,4096]) is above kMaxWidenedTileElements, so max and sum reduce
// over 64 tiles through partial/combine workspaces written in the body.
// (Over the loop softmax's rows of 256, row widening leaves no workspace:
// golden_test SoftmaxLoopIssueTile.)
pto::v1::Graph SoftmaxLoopPartial(const SymExpr& bs) {
  return SoftmaxRows("softmax_loop_partial", bs, 4096, 64);
}

// Row widening in a loop body: the loop softmax's [1,4,64] tile over rows of 256
// (4 tiles), and tiles of 16 over rows of 200 (13, a tail), are lowered
// over whole rows: one fused task per iteration, no body workspace (so
// nothing to privatize), vs reference at bs 1/7/40.
TEST(LoopTest, WidenedRowsInABodyRunOneTaskPerIteration) {
  for (int64_t cols : {256, 200}) {
    const GraphOf make = [cols](const SymExpr& bs) {
      return SoftmaxRows("softmax_loop_widened", bs, cols, cols == 256 ? 64 : 16);
    };
    CompileAndRunSizes(make, {1, 7, 40});
    auto compiled = compiler::Compile(make(kBs), "host", {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", 10}}, 4);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(g->buffer_sets.empty()) << "cols " << cols;
    EXPECT_EQ(g->graph.tasks_size(), 10) << "cols " << cols;
  }
}

TEST(LoopTest, BodyWorkspacesArePerIterationSoIterationsRunConcurrently) {
  auto kernel = CompileOverBs(SoftmaxLoopPartial);
  ASSERT_NE(kernel, nullptr);
  RunSizes(SoftmaxLoopPartial, *kernel, {1, 7, 40});
  auto compiled = compiler::Compile(SoftmaxLoopPartial(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const int bs = 10, k = 4;
  // A ring of k instances: iteration n waits only for iteration n - k (its
  // instance's previous use), never for n - 1.
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", bs}}, k);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_FALSE(g->buffer_sets.empty()) << "no workspace was privatized";
  ASSERT_EQ(g->graph.tasks_size() % bs, 0);
  const int per = g->graph.tasks_size() / bs;
  ASSERT_GT(per, 1);  // partial, combine and the rest: more than one group
  int ring_waits = 0;
  for (int t = 0; t < g->graph.tasks_size(); ++t) {
    for (uint32_t d : g->graph.tasks(t).deps()) {
      const int it = IterationOf(t, per), id = IterationOf(static_cast<int>(d), per);
      EXPECT_TRUE(it == id || (it - id) % k == 0)
          << "task " << t << " (iteration " << it << ") waits for task " << d
          << " (iteration " << id << ")";
      ring_waits += it != id;
    }
  }
  EXPECT_GT(ring_waits, 0);  // iteration 4 reuses iteration 0's instance
  // One instance (the shared buffer, as before): consecutive iterations wait.
  auto shared = runtime::ExpandTemplates(compiled->binary, {{"bs", bs}}, 1);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_TRUE(shared->buffer_sets.empty());
  int adjacent = 0;
  for (int t = 0; t < shared->graph.tasks_size(); ++t) {
    for (uint32_t d : shared->graph.tasks(t).deps()) {
      adjacent += IterationOf(t, per) - IterationOf(static_cast<int>(d), per) == 1;
    }
  }
  EXPECT_GT(adjacent, 0);
}

// acc += sum(x[i]) over rows of 16384 in tiles of 64 (too long to widen):
// the sum's partials are private to each iteration, acc is carried, so the
// iterations still chain.
pto::v1::Graph RowSumLoop(const SymExpr& n) {
  GraphBuilder b("row_sum_loop");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, 16384});
  const uint32_t acc = b.SymValue(DT_FP32, {1, 1}, "acc");
  Ids outs = b.Loop("i", 0, n, 1, {acc}, [&](const Ids& args) {
    const uint32_t row = b.View(x, {i, 0}, {1, 16384}, {1, 64});
    const uint32_t s = b.Op("sum", {row}, {1, 64});
    const uint32_t sum = b.Op("add", {args[0], s}, {1, 1});
    return Ids{b.Assemble(sum, args[0], {0, 0}, {1, 1})};
  });
  b.InOut("acc", acc, outs[0]);
  return b.Build();
}

TEST(LoopTest, CarriedValueThroughPrivateWorkspacesStillChains) {
  auto kernel = CompileOverBs(RowSumLoop);
  ASSERT_NE(kernel, nullptr);
  RunSizes(RowSumLoop, *kernel, {1, 5, 33});
  auto compiled = compiler::Compile(RowSumLoop(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const int n = 6;
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", n}}, 4);
  ASSERT_TRUE(g.ok()) << g.status();
  // Every iteration after the first waits for the one before (through acc).
  ExpectIterationsChain(g->graph, n);
}

// acc[0:1] += x[i] for every row i: each iteration reads and writes the
// same region, so the iterations form a chain.
pto::v1::Graph RunningSum(const SymExpr& n) {
  GraphBuilder b("running_sum");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, 16});
  const uint32_t acc = b.SymValue(DT_FP32, {1, 16}, "acc");
  Ids outs = b.Loop("i", 0, n, 1, {acc}, [&](const Ids& args) {
    const uint32_t row = b.View(x, {i, 0}, {1, 16}, {1, 16});
    const uint32_t sum = b.Op("add", {args[0], row}, {1, 16});
    return Ids{b.Assemble(sum, args[0], {0, 0}, {1, 16})};
  });
  b.InOut("acc", acc, outs[0]);
  return b.Build();
}

TEST(LoopTest, RunningSumStaysSequentialAndCorrect) {
  auto kernel = CompileOverBs(RunningSum);
  ASSERT_NE(kernel, nullptr);
  RunSizes(RunningSum, *kernel, {1, 5, 300});
  auto compiled = compiler::Compile(RunningSum(kBs), "host", {});
  ASSERT_TRUE(compiled.ok());
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", 6}});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->graph.tasks_size(), 6);
  EXPECT_EQ(g->graph.tasks(0).deps_size(), 0);
  for (int t = 1; t < 6; ++t) {
    EXPECT_THAT(g->graph.tasks(t).deps(), ::testing::Contains(t - 1)) << "task " << t;
  }
}

// The same sum as pypto writes it: acc = acc + x[i], a new value each
// iteration (not assembled into the arg), from zeros made before the loop;
// the compiler stores it into the carried buffer.
pto::v1::Graph FreshSum(const SymExpr& n) {
  GraphBuilder b("fresh_sum");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, 16});
  const uint32_t zeros = b.Value(DT_FP32, {1, 16}, "zeros");
  pto::v1::Op* full = b.graph().add_ops();
  full->set_kind("full");
  full->add_outputs(zeros);
  for (int64_t d : {1, 16}) {
    (*full->mutable_attrs())["shape"].mutable_ints()->add_values(d);
    full->mutable_vec_tile()->add_dims(d);
  }
  (*full->mutable_attrs())["dtype"].set_dtype(DT_FP32);
  (*full->mutable_attrs())["value"].set_f(0.0);
  Ids outs = b.Loop("i", 0, n, 1, {zeros}, [&](const Ids& args) {
    const uint32_t row = b.View(x, {i, 0}, {1, 16}, {1, 16});
    return Ids{b.Op("add", {args[0], row}, {1, 16})};
  });
  b.Output("out", outs[0]);
  return b.Build();
}

TEST(LoopTest, CarriedNewValueIsStoredIntoTheCarriedBuffer) {
  CompileAndRunSizes(FreshSum, {1, 9, 40});
}

// out[i] = exp(in[i]) for i in 0..bs-4: no iteration when bs <= 4, and
// rows past bs-4 keep the caller's data.
pto::v1::Graph ShortLoop(const SymExpr& bs) {
  return InToOut("short_loop", "in", {bs, 8}, [&](GraphBuilder& b, uint32_t in,
                                                  uint32_t out) {
    return b.Loop("i", 0, bs - 4, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(in, {kI, 0}, {1, 8}, {1, 8});
      return Ids{b.Assemble(b.Op("exp", {x}, {1, 8}), args[0], {kI, 0}, {1, 8})};
    })[0];
  });
}

TEST(LoopTest, ZeroTripCountKeepsTheCallersData) {
  CompileAndRunSizes(ShortLoop, {1, 4, 5, 9});
}

// for i in 0..bs, j in 0..4: out[i, j*16:(j+1)*16] = exp(x[i, j*16:...]) + j
// as a nested loop (inner bound static).
pto::v1::Graph Nested(const SymExpr& bs) {
  return InToOut("nested", "x", {bs, 64}, [&](GraphBuilder& b, uint32_t x, uint32_t out) {
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& outer) {
      return b.Loop("j", 0, 4, 1, {outer[0]}, [&](const Ids& inner) {
        const uint32_t v = b.View(x, {kI, kJ * 16}, {1, 16}, {1, 16});
        const uint32_t y = b.Op("exp", {v}, {1, 16});
        return Ids{b.Assemble(y, inner[0], {kI, kJ * 16}, {1, 16})};
      });
    })[0];
  });
}

TEST(LoopTest, NestedLoops) {
  CompileAndRunSizes(Nested, {1, 3, 17});
}

// A view one row ahead leaves the tensor in the last iteration: an error
// at launch naming the view and the values, not an out-of-bounds read.
pto::v1::Graph AheadByOne(const SymExpr& bs) {
  return InToOut("ahead", "in", {bs, 8}, [&](GraphBuilder& b, uint32_t in, uint32_t out) {
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(in, {kI + 1, 0}, {1, 8}, {1, 8});
      return Ids{b.Assemble(b.Op("neg", {x}, {1, 8}), args[0], {kI, 0}, {1, 8})};
    })[0];
  });
}

TEST(LoopTest, ViewOutOfRangeIsAnErrorAtLaunch) {
  auto kernel = CompileOverBs(AheadByOne);
  ASSERT_NE(kernel, nullptr);
  auto in = ptoc::HostTensor::Create(DT_FP32, {3, 8});
  auto out = ptoc::HostTensor::Create(DT_FP32, {3, 8});
  ASSERT_TRUE(in.ok() && out.ok());
  const std::vector<runtime::TensorArg> args = {in->AsArg(), out->AsArg()};
  absl::Status s = kernel->Run(args);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(),
              ::testing::AllOf(HasSubstr("op #0 body op #0 \"view\""),
                               HasSubstr("offsets [3,0]"),
                               HasSubstr("tensor of shape [3,8]"),
                               HasSubstr("bs=3, i=2")));
}

// if bs > 2: out = exp(in) else out = neg(in): both branches compiled once,
// the runtime picks one per binding.
pto::v1::Graph PickByBatch(const SymExpr& bs) {
  return InToOut("pick", "in", {bs, 4}, [&](GraphBuilder& b, uint32_t in, uint32_t out) {
    return b.If(compiler::testing::CompareExpr(pto::v1::DIM_OP_GT, bs, 2), {out},
                [&](const Ids&) { return Ids{b.Op("exp", {in}, {1, 4})}; },
                [&](const Ids&) { return Ids{b.Op("neg", {in}, {1, 4})}; })[0];
  });
}

TEST(LoopTest, IfPicksOneOfTwoComputationsBySymbolicComparison) {
  CompileAndRunSizes(PickByBatch, {1, 2, 3, 9});
}

// for i: out[i] = exp(x[i]) when i is even, else neg(x[i]) (then writes
// its row; else passes a neg row through a fresh value of the row's type).
pto::v1::Graph EvenOdd(const SymExpr& bs) {
  return InToOut("even_odd", "x", {bs, 8}, [&](GraphBuilder& b, uint32_t x, uint32_t out) {
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
      const uint32_t row = b.View(x, {kI, 0}, {1, 8}, {1, 8});
      return b.If(
          compiler::testing::CompareExpr(pto::v1::DIM_OP_EQ, SymExpr::Mod(kI, 2), 0),
          {args[0]},
          [&](const Ids& a) {
            return Ids{b.Assemble(b.Op("exp", {row}, {1, 8}), a[0], {kI, 0}, {1, 8})};
          },
          [&](const Ids& a) {
            return Ids{b.Assemble(b.Op("neg", {row}, {1, 8}), a[0], {kI, 0}, {1, 8})};
          });
    })[0];
  });
}

TEST(LoopTest, IfOnTheLoopIndexIsResolvedPerIteration) {
  CompileAndRunSizes(EvenOdd, {1, 2, 7});
}

// Tails: for i in 0..n step 4, j in 0..20 step 8:
// out[i:min(i+4, n), j:min(j+8, 20)] = exp(x[...]) * 2 — extents that depend
// on loop indices in both dims (n dynamic, the row dim; the column dim
// static: two dynamic dims need run-time strides, not built yet). Full tiles
// run the static function, tails the generic one (extents from the args).
pto::v1::Graph Tails(const SymExpr& n) {
  return InToOut("tails", "x", {n, 20}, [&](GraphBuilder& b, uint32_t x, uint32_t out) {
    return b.Loop("i", 0, n, 4, {out}, [&](const Ids& outer) {
      return b.Loop("j", 0, 20, 8, {outer[0]}, [&](const Ids& inner) {
        const SymShape shape = {SymExpr::Min(SymExpr(4), n - kI),
                                SymExpr::Min(SymExpr(8), 20 - kJ)};
        const uint32_t v = b.View(x, {kI, kJ}, shape, {4, 8});
        const uint32_t y = b.Op("exp", {v}, {4, 8});
        const uint32_t z = b.Op("muls", {y}, {4, 8}, 2.0);
        return Ids{b.Assemble(z, inner[0], {kI, kJ}, {4, 8})};
      });
    })[0];
  });
}

TEST(LoopTest, TailsWhoseExtentsDependOnLoopIndices) {
  auto compiled = compiler::Compile(Tails(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // One static function for full tiles, one generic for every tail.
  EXPECT_THAT(compiled->binary.pto_text(), HasSubstr("extents=args"));
  EXPECT_THAT(compiled->binary.pto_text(), HasSubstr("TLOAD  %t0:ub.f32[4,8], %0[a0+d0, a1+d1]"));
  CompileAndRunSizes(Tails, {1, 4, 5, 13});
}

// Nested loops over two dynamic dims with tails,
// out[i:min(i+4, n), j:min(j+8, m)] = exp(x[...]) * 2 with x [n, m]: the
// row stride m is a run-time arg of the block functions.
pto::v1::Graph TwoDynamicDims(const SymExpr& n, const SymExpr& m) {
  return InToOut("two_dims", "x", {n, m}, [&](GraphBuilder& b, uint32_t x, uint32_t out) {
    return b.Loop("i", 0, n, 4, {out}, [&](const Ids& outer) {
      return b.Loop("j", 0, m, 8, {outer[0]}, [&](const Ids& inner) {
        const SymShape shape = {SymExpr::Min(SymExpr(4), n - kI),
                                SymExpr::Min(SymExpr(8), m - kJ)};
        const uint32_t v = b.View(x, {kI, kJ}, shape, {4, 8});
        const uint32_t z = b.Op("muls", {b.Op("exp", {v}, {4, 8})}, {4, 8}, 2.0);
        return Ids{b.Assemble(z, inner[0], {kI, kJ}, {4, 8})};
      });
    })[0];
  });
}

TEST(LoopTest, NestedLoopsOverTwoDynamicDimsWithTails) {
  auto kernel = CompileAndLoad(TwoDynamicDims(SymExpr::Symbol("n"), SymExpr::Symbol("m")));
  ASSERT_NE(kernel, nullptr);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {4, 8}, {5, 9}, {13, 20}, {3, 30}}) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(n * 100 + m);
    ASSERT_TRUE(RunAndExpectMatch(TwoDynamicDims(SymExpr(n), SymExpr(m)), *kernel, options,
                                  absl::StrCat(n, "x", m)));
  }
  EXPECT_EQ(kernel->plans_expanded(), 5);
}

// for i in 0..bs: row = x[i]; for j in 0..4: out[i, j*16:] = exp(row[:, j*16:])
// + 1: a view at j of a view at i is one view of x at [i, j*16].
pto::v1::Graph ViewOfAView(const SymExpr& bs) {
  return InToOut("view_of_view", "x", {bs, 64}, [&](GraphBuilder& b, uint32_t x,
                                                    uint32_t out) {
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& outer) {
      const uint32_t row = b.View(x, {kI, 0}, {1, 64}, {1, 64});
      return b.Loop("j", 0, 4, 1, {outer[0]}, [&](const Ids& inner) {
        const uint32_t v = b.View(row, {0, kJ * 16}, {1, 16}, {1, 16});
        const uint32_t y = b.Op("adds", {b.Op("exp", {v}, {1, 16})}, {1, 16}, 1.0);
        return Ids{b.Assemble(y, inner[0], {kI, kJ * 16}, {1, 16})};
      });
    })[0];
  });
}

TEST(LoopTest, ViewWithLoopOffsetsOfAnotherSuchView) {
  CompileAndRunSizes(ViewOfAView, {1, 3, 17});
}

// The inner view j*16 of a 64-wide row view runs past the row (j up to 4):
// an error at launch naming the view and the values.
TEST(LoopTest, ViewOutsideTheViewItTakesIsAnErrorAtLaunch) {
  const pto::v1::Graph graph = InToOut(
      "view_past_view", "x", {kBs, 128}, [](GraphBuilder& b, uint32_t x, uint32_t out) {
        return b.Loop("i", 0, kBs, 1, {out}, [&](const Ids& outer) {
          const uint32_t row = b.View(x, {kI, 0}, {1, 64}, {1, 64});
          return b.Loop("j", 0, 5, 1, {outer[0]}, [&](const Ids& inner) {
            const uint32_t v = b.View(row, {0, kJ * 16}, {1, 16}, {1, 16});
            return Ids{
                b.Assemble(b.Op("neg", {v}, {1, 16}), inner[0], {kI, kJ * 16}, {1, 16})};
          });
        })[0];
      });
  auto kernel = CompileAndLoad(graph);
  ASSERT_NE(kernel, nullptr);
  auto in = ptoc::HostTensor::Create(DT_FP32, {2, 128});
  auto o = ptoc::HostTensor::Create(DT_FP32, {2, 128});
  ASSERT_TRUE(in.ok() && o.ok());
  absl::Status s = kernel->Run({in->AsArg(), o->AsArg()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), ::testing::AllOf(HasSubstr("inside the view it takes"),
                                            HasSubstr("offsets [0,64]"), HasSubstr("j=4")));
}

// 24 loops one after another, loop k: out[i_k, 4k:4k+4] = exp(x[i_k, ...]) + k:
// 24 distinct loop-dependent offsets (i_0 .. i_23), more than the 20 marker
// bits, which loops one after another share.
pto::v1::Graph SequentialLoops(const SymExpr& bs) {
  return InToOut("sequential_loops", "x", {bs, 96}, [&](GraphBuilder& b, uint32_t x,
                                                        uint32_t out) {
    uint32_t cur = out;
    for (int k = 0; k < 24; ++k) {
      const std::string name = absl::StrCat("i", k);
      const SymExpr i = SymExpr::Symbol(name);
      cur = b.Loop(name, 0, bs, 1, {cur}, [&](const Ids& args) {
        const uint32_t v = b.View(x, {i, 4 * k}, {1, 4}, {1, 4});
        const uint32_t y = b.Op("adds", {b.Op("exp", {v}, {1, 4})}, {1, 4}, k);
        return Ids{b.Assemble(y, args[0], {i, 4 * k}, {1, 4})};
      })[0];
    }
    return cur;
  });
}

TEST(LoopTest, LoopsOneAfterAnotherShareMarkerBits) {
  auto compiled = compiler::Compile(SequentialLoops(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->binary.execute_graph().dynamic_offsets_size(), 24);
  CompileAndRunSizes(SequentialLoops, {1, 5});
}

TEST(LoopTest, MoreThanTwentyOffsetsInOneNestAreUnimplemented) {
  const pto::v1::Graph graph = InToOut(
      "many_offsets", "x", {kBs, 4}, [](GraphBuilder& b, uint32_t x, uint32_t out) {
        return b.Loop("i", 0, kBs - 21, 1, {out}, [&](const Ids& args) {
          uint32_t acc = b.View(x, {kI, 0}, {1, 4}, {1, 4});
          for (int k = 1; k <= 21; ++k) {
            acc = b.Op("add", {acc, b.View(x, {kI + k, 0}, {1, 4}, {1, 4})}, {1, 4});
          }
          return Ids{b.Assemble(acc, args[0], {kI, 0}, {1, 4})};
        })[0];
      });
  auto compiled = compiler::Compile(graph, "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("more than 20 distinct loop-dependent offsets in one nest"));
}

// A softmax over each chunk of 6 columns of in[4, bs] (the last chunk a
// tail: min(6, bs - i)): reductions over a dim whose extent depends on the
// loop index take the accumulating form, the tail tile padded with the
// reduction's identity; tile `td` along the chunk (6: one tile, 4: a full
// tile and a tail folded in order).
pto::v1::Graph ChunkSoftmax(const SymExpr& bs, int64_t td) {
  return InToOut("chunk_softmax", "in", {4, bs}, [&](GraphBuilder& b, uint32_t in,
                                                     uint32_t out) {
    const std::vector<int64_t> tile = {4, td};
    return b.Loop("i", 0, bs, 6, {out}, [&](const Ids& args) {
      const SymShape shape = {SymExpr(4), SymExpr::Min(SymExpr(6), bs - kI)};
      const uint32_t x = b.View(in, {0, kI}, shape, tile);
      const uint32_t e = b.Op("exp", {b.Op("sub", {x, b.Op("amax", {x}, tile)}, tile)}, tile);
      const uint32_t y = b.Op("div", {e, b.Op("sum", {e}, tile)}, tile);
      return Ids{b.Assemble(y, args[0], {0, kI}, tile)};
    })[0];
  });
}

TEST(LoopTest, ReductionsOverALoopDependentTail) {
  for (int64_t td : {6, 4}) {
    SCOPED_TRACE(td);
    const GraphOf make = [td](const SymExpr& bs) { return ChunkSoftmax(bs, td); };
    CompileAndRunSizes(make, {1, 4, 6, 16, 41});
  }
}

// A full of a clipped view's static shape beside an op over the view's
// extent (pypto.fillpad of x * 2: the full, then an assemble of the
// product into it): the full fills all of its [4, 8], not just the rows the
// last view has (ops fuse only over one extent), so each chunk's column sum
// of the padded tensor counts 1 for every missing row.
pto::v1::Graph PaddedChunk(const SymExpr& bs) {
  pto::v1::Graph graph =
      InToOut("padded_chunk", "in", {bs, 8}, [&](GraphBuilder& b, uint32_t in, uint32_t out) {
        const std::vector<int64_t> tile = {4, 8};
        return b.Loop("i", 0, bs, 4, {out}, [&](const Ids& args) {
          const SymShape rows = {SymExpr::Min(SymExpr(4), bs - kI), SymExpr(8)};
          const uint32_t x = b.View(in, {kI, 0}, rows, tile);
          const uint32_t doubled = b.Op("muls", {x}, tile, 2.0);
          const uint32_t ones = b.Create("full", DT_FP32, {4, 8}, {{"value", 1.0}});
          const uint32_t padded = b.Assemble(doubled, ones, {0, 0}, tile);
          const uint32_t sums = b.Op("sum", {padded}, tile, 0, true);
          return Ids{b.Assemble(b.Op("add", {x, sums}, tile), args[0], {kI, 0}, tile)};
        })[0];
      });
  for (pto::v1::Op& loop : *graph.mutable_ops()) {
    for (pto::v1::Region& body : *loop.mutable_regions()) {
      for (pto::v1::Op& op : *body.mutable_ops()) {
        if (op.kind() != "full") continue;
        op.mutable_vec_tile()->clear_dims();
        op.mutable_vec_tile()->add_dims(4);
        op.mutable_vec_tile()->add_dims(8);
      }
    }
  }
  return graph;
}

TEST(LoopTest, AFullBesideAClippedViewFillsItsWholeShape) {
  CompileAndRunSizes(PaddedChunk, {1, 4, 6, 13});
}

// index_select over the chunks of in[bs, 8] (4 rows each, the last one
// min(4, bs - i)), along `dim`. Along dim 1 the clip is in another dim:
// the gather reads the view's rows at the loop's offset and its tail
// function moves only the rows the last chunk has. Along dim 0 the indexed
// extent itself depends on the loop index: refused naming the op (MGATHER
// addresses whole buffers; pypto's gather, index_select, scatter and
// index_add fill such operands out to their static shape first,
// client/python/pypto/indexing.py). Over a parameter's symbolic dims index
// ops compile once: compiler/testdata/sym_index_ops.*.
pto::v1::Graph TailIndexSelect(const SymExpr& bs, int64_t dim) {
  GraphBuilder b("tail_index_select");
  const uint32_t in = b.SymInput("in", DT_FP32, {bs, SymExpr(8)});
  // Indices 7, 4, 1 (in range of both dims; random index inputs are not).
  const uint32_t idx = b.Create("arange", pto::v1::DT_INT32, {3}, {{"start", 7}, {"step", -3}});
  const SymShape out_shape = dim == 1 ? SymShape{bs, SymExpr(3)} : SymShape{bs, SymExpr(8)};
  const uint32_t out = b.SymValue(DT_FP32, out_shape, "out");
  const std::vector<int64_t> tile = {4, 8};
  const uint32_t result = b.Loop("i", 0, bs, 4, {out}, [&](const Ids& args) {
    const SymShape rows = {SymExpr::Min(SymExpr(4), bs - kI), SymExpr(8)};
    const uint32_t x = b.View(in, {kI, 0}, rows, tile);
    const uint32_t y = b.Op("index_select", {x, idx}, tile, dim, false);
    return Ids{b.Assemble(y, args[0], {kI, 0}, tile)};
  })[0];
  b.InOut("out", out, result);
  pto::v1::Graph graph = b.Build();
  for (pto::v1::Op& loop : *graph.mutable_ops()) {
    for (pto::v1::Region& body : *loop.mutable_regions()) {
      for (pto::v1::Op& op : *body.mutable_ops()) op.mutable_attrs()->erase("keepdim");
    }
  }
  return graph;
}

TEST(LoopTest, AnIndexOpAcrossALoopDependentTailRunsAlongItRefusedByName) {
  CompileAndRunSizes([](const SymExpr& bs) { return TailIndexSelect(bs, 1); }, {1, 4, 6, 13});

  auto compiled = compiler::Compile(TailIndexSelect(kBs, 0), "host", {});
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(compiled.status().message(), HasSubstr("index_select"));
  EXPECT_THAT(compiled.status().message(),
              HasSubstr("a gather/sort along a dim whose extent depends on a loop index"));
}

// The loop index (and the batch size) as numbers: for i in
// 0..bs, out[i] = clip(in[i] * i - (bs - i), -i, 2i + 1) / (i + 1). Each
// scalar is a dynamic arg evaluated per iteration: one compile, and the
// reference evaluates the same expressions per index.
pto::v1::Graph IndexAsNumber(const SymExpr& bs) {
  return InToOut("index_as_number", "in", {bs, 8}, [&](GraphBuilder& b, uint32_t in,
                                                       uint32_t out) {
    const std::vector<int64_t> tile = {1, 8};
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(in, {kI, 0}, {1, 8}, tile);
      const uint32_t y = b.ScalarOp("muls", {x}, tile, {{"scalar", kI}});
      const uint32_t z = b.ScalarOp("subs", {y}, tile, {{"scalar", bs - kI}});
      const uint32_t w = b.ScalarOp("clip", {z}, tile, {{"min", -kI}, {"max", kI * 2 + 1}});
      const uint32_t q = b.ScalarOp("divs", {w}, tile, {{"scalar", kI + 1}});
      return Ids{b.Assemble(q, args[0], {kI, 0}, tile)};
    })[0];
  });
}

// arange with a start over the index: out[i] = in[i] * arange(8i + 1,
// 8i + 9); the start is a dynamic arg of the body's group.
pto::v1::Graph IndexedArange(const SymExpr& bs) {
  return InToOut("indexed_arange", "in", {bs, 8}, [&](GraphBuilder& b, uint32_t in,
                                                      uint32_t out) {
    const std::vector<int64_t> tile = {1, 8};
    return b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
      const uint32_t x = b.View(in, {kI, 0}, {1, 8}, tile);
      const uint32_t r = b.Value(DT_FP32, {8});
      pto::v1::Op* op = b.graph().mutable_ops(0)->mutable_regions(0)->add_ops();
      op->set_kind("arange");
      op->add_outputs(r);
      op->mutable_vec_tile()->add_dims(8);
      (*op->mutable_attrs())["shape"].mutable_ints()->add_values(8);
      (*op->mutable_attrs())["dtype"].set_dtype(DT_FP32);
      (*op->mutable_attrs())["start"] = compiler::testing::FloatExprAttr(kI * 8 + 1);
      (*op->mutable_attrs())["step"].set_f(1);
      return Ids{b.Assemble(b.Op("mul", {x, r}, tile), args[0], {kI, 0}, tile)};
    })[0];
  });
}

TEST(LoopTest, ArangeFromTheLoopIndexCompiledOnce) {
  CompileAndRunSizes(IndexedArange, {1, 7, 40});
}

TEST(LoopTest, LoopIndexAsANumberCompiledOnce) {
  CompileAndRunSizes(IndexAsNumber, {1, 7, 64, 1000});
}

// The loop index as a number with FP16/BF16 values: out[i] = in[i] * (i +
// k) - (i + k), k = 2045 (FP16) or 253 (BF16), so that i + k passes the
// integers the type holds and is rounded to it (2049 -> 2048 in FP16, 257
// -> 256 in BF16), in the kernel and the reference alike: the same bits.
TEST(LoopTest, LoopIndexMeetingHalfValuesIsRoundedToTheirType) {
  const std::pair<pto::v1::DataType, int64_t> cases[] = {{pto::v1::DT_FP16, 2045},
                                                         {pto::v1::DT_BF16, 253}};
  for (const auto& c : cases) {
    SCOPED_TRACE(pto::v1::DataType_Name(c.first));
    const GraphOf make = [dtype = c.first, k = c.second](const SymExpr& bs) {
      GraphBuilder b("index_meets_half");
      const uint32_t in = b.SymInput("in", dtype, {bs, 8});
      const uint32_t out = b.SymValue(dtype, {bs, 8}, "out");
      const std::vector<int64_t> tile = {1, 8};
      const uint32_t result = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
        const uint32_t x = b.View(in, {kI, 0}, {1, 8}, tile);
        const uint32_t y = b.ScalarOp("muls", {x}, tile, {{"scalar", kI + k}});
        const uint32_t z = b.ScalarOp("subs", {y}, tile, {{"scalar", kI + k}});
        return Ids{b.Assemble(z, args[0], {kI, 0}, tile)};
      })[0];
      b.InOut("out", out, result);
      return b.Build();
    };
    auto kernel = CompileOverBs(make);
    if (kernel == nullptr && IsSkipped()) continue;  // a target that does not map this dtype
    ASSERT_NE(kernel, nullptr);
    ptoc::Tolerance exact;
    exact.fp16_ulps = 0;
    ptoc::CheckOptions options;
    options.tolerance = &exact;
    for (int64_t n : {3, 8}) {
      options.seed = static_cast<uint64_t>(n);
      ASSERT_TRUE(RunAndExpectMatch(make(SymExpr(n)), *kernel, options, absl::StrCat("bs ", n)));
    }
  }
}

}  // namespace
}  // namespace pto::testing
