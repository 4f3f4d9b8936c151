// Matmul inside loop bodies: the cube group of a body's
// matmul is lowered once, its loop-dependent GM offsets (x[i], out[i*8:])
// are dynamic args like a vector group's, and the runtime expands it per
// iteration. Each kernel is compiled once over the symbol "bs" and run for
// several sizes against the reference evaluator on the graph built at that
// size.
#include <functional>
#include <string>
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
using pto::v1::DT_FP16;
using pto::v1::DT_FP32;
using Ids = std::vector<uint32_t>;

// The cube tile every case uses: m [16,32], k [16,64], n [32,64].
uint32_t Mm(GraphBuilder& b, uint32_t x, uint32_t y, const std::vector<int64_t>& shape,
            bool b_trans = false, pto::v1::DataType dtype = DT_FP32) {
  return b.Matmul(x, y, shape, dtype, false, b_trans, {16, 32}, {16, 64}, {32, 64});
}

// Runs `make` for each size with one compile (the kernel expands a plan per
// size, never recompiles).
void CompileOnceAndRun(const GraphOf& make, const std::vector<int64_t>& sizes) {
  auto kernel = CompileOverBs(make);
  ASSERT_NE(kernel, nullptr);
  RunSizes(make, *kernel, sizes);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(kernel->plans_expanded(), static_cast<int>(sizes.size()));
}

// for i in 0..bs step 8: out[i:i+8] = x[i:i+8] @ w (bs a multiple of 8):
// 2-D, the cube stores into the assembled region.
pto::v1::Graph RowBlocks(const SymExpr& bs) {
  GraphBuilder b("row_blocks");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 16});
  const uint32_t w = b.Input("w", DT_FP32, {16, 12});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 12}, "out");
  Ids outs = b.Loop("i", 0, bs, 8, {out}, [&](const Ids& args) {
    const uint32_t xi = b.View(x, {i, 0}, {8, 16}, {8, 16});
    return Ids{b.Assemble(Mm(b, xi, w, {8, 12}), args[0], {i, 0}, {8, 12})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, PerIterationMatmulOverViewsCompiledOnce) {
  CompileOnceAndRun(RowBlocks, {8, 24, 320});
}

TEST(LoopMatmulTest, IterationsAreIndependentCubeTasks) {
  auto compiled = compiler::Compile(RowBlocks(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  // The cube code adds the dynamic arg times the row stride.
  EXPECT_THAT(compiled->binary.pto_text(), HasSubstr("d0"));
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", 40}});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->graph.tasks_size(), 5);  // one cube task per iteration
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(g->graph.tasks(t).deps_size(), 0) << "task " << t;
    ASSERT_EQ(g->graph.tasks(t).args_size(), 3);  // 2 tile offsets, then i
    EXPECT_EQ(g->graph.tasks(t).args(2), t * 8);
  }
}

// heads_loop's shape: for h in 0..4: s = q[:, h*16:] @ k[:, h*16:]^T (a
// body workspace), p = exp(s * 0.25), out[:, h*16:] = p @ v[:, h*16:]; q, k,
// v, out [8, 64] (static: the heads are the loop).
pto::v1::Graph Heads(const SymExpr&) {
  GraphBuilder b("heads");
  const SymExpr h = SymExpr::Symbol("h");
  const uint32_t q = b.Input("q", DT_FP32, {8, 64});
  const uint32_t k = b.Input("k", DT_FP32, {8, 64});
  const uint32_t v = b.Input("v", DT_FP32, {8, 64});
  const uint32_t out = b.SymValue(DT_FP32, {8, 64}, "out");
  Ids outs = b.Loop("h", 0, 4, 1, {out}, [&](const Ids& args) {
    const uint32_t qh = b.View(q, {0, h * 16}, {8, 16}, {8, 16});
    const uint32_t kh = b.View(k, {0, h * 16}, {8, 16}, {8, 16});
    const uint32_t vh = b.View(v, {0, h * 16}, {8, 16}, {8, 16});
    const uint32_t s = Mm(b, qh, kh, {8, 8}, /*b_trans=*/true);
    const uint32_t p = b.Op("exp", {b.Op("muls", {s}, {8, 8}, 0.25)}, {8, 8});
    return Ids{b.Assemble(Mm(b, p, vh, {8, 16}), args[0], {0, h * 16}, {8, 16})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, HeadsRunConcurrentlyThroughPerIterationWorkspaces) {
  CompileOnceAndRun(Heads, {1});
  auto compiled = compiler::Compile(Heads(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const int heads = 4;
  auto g = runtime::ExpandTemplates(compiled->binary, {}, /*workspace_instances=*/4);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_FALSE(g->buffer_sets.empty()) << "no workspace was privatized";
  ASSERT_EQ(g->graph.tasks_size() % heads, 0);
  const int per = g->graph.tasks_size() / heads;
  ASSERT_GE(per, 3);  // two cube tasks and the exp between them
  for (int t = 0; t < g->graph.tasks_size(); ++t) {
    for (uint32_t d : g->graph.tasks(t).deps()) {
      EXPECT_EQ(IterationOf(t, per), IterationOf(static_cast<int>(d), per))
          << "task " << t << " waits for task " << d << " of another head";
    }
  }
}

// Batched, both operands loop-dependent, the product feeding elementwise
// ops: out[i] = (a[i] @ b[i]^T) * 0.5 + 1 with a [bs,8,16], b [bs,12,16].
pto::v1::Graph BatchedThenElementwise(const SymExpr& bs) {
  GraphBuilder b("batched_elementwise");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t a = b.SymInput("a", DT_FP32, {bs, 8, 16});
  const uint32_t bb = b.SymInput("b", DT_FP32, {bs, 12, 16});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 8, 12}, "out");
  const std::vector<int64_t> tile = {1, 8, 12};
  Ids outs = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
    const uint32_t ai = b.View(a, {i, 0, 0}, {1, 8, 16}, {1, 8, 16});
    const uint32_t bi = b.View(bb, {i, 0, 0}, {1, 12, 16}, {1, 12, 16});
    const uint32_t p = Mm(b, ai, bi, {1, 8, 12}, /*b_trans=*/true);
    const uint32_t y = b.Op("adds", {b.Op("muls", {p}, tile, 0.5)}, tile, 1.0);
    return Ids{b.Assemble(y, args[0], {i, 0, 0}, tile)};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, BatchedMatmulFeedingElementwiseOps) {
  CompileOnceAndRun(BatchedThenElementwise, {1, 2, 9});
}

// The same in FP16 (the cube converts its L1 tiles): out[i] = a[i] @ w.
pto::v1::Graph HalfBlocks(const SymExpr& bs) {
  GraphBuilder b("half_blocks");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t a = b.SymInput("a", DT_FP16, {bs, 8, 16});
  const uint32_t w = b.Input("w", DT_FP16, {16, 24});
  const uint32_t out = b.SymValue(DT_FP16, {bs, 8, 24}, "out");
  Ids outs = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
    const uint32_t ai = b.View(a, {i, 0, 0}, {1, 8, 16}, {1, 8, 16});
    return Ids{b.Assemble(Mm(b, ai, w, {1, 8, 24}, false, DT_FP16), args[0], {i, 0, 0},
                          {1, 8, 24})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, HalfPrecisionOperands) { CompileOnceAndRun(HalfBlocks, {1, 6}); }

// acc = acc + a[i] @ b[i]: a new value each iteration from the carried
// accumulator (stored into its buffer), so the iterations chain.
pto::v1::Graph CarriedSum(const SymExpr& bs) {
  GraphBuilder b("carried_sum");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t a = b.SymInput("a", DT_FP32, {bs, 8, 16});
  const uint32_t bb = b.SymInput("b", DT_FP32, {bs, 16, 12});
  const uint32_t acc = b.SymValue(DT_FP32, {1, 8, 12}, "acc");
  Ids outs = b.Loop("i", 0, bs, 1, {acc}, [&](const Ids& args) {
    const uint32_t ai = b.View(a, {i, 0, 0}, {1, 8, 16}, {1, 8, 16});
    const uint32_t bi = b.View(bb, {i, 0, 0}, {1, 16, 12}, {1, 16, 12});
    return Ids{b.Op("add", {args[0], Mm(b, ai, bi, {1, 8, 12})}, {1, 8, 12})};
  });
  b.InOut("acc", acc, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, CarriedAccumulationChainsAndIsCorrect) {
  CompileOnceAndRun(CarriedSum, {1, 4, 9});
  auto compiled = compiler::Compile(CarriedSum(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const int n = 5;
  auto g = runtime::ExpandTemplates(compiled->binary, {{"bs", n}});
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectIterationsChain(g->graph, n);
}

// h = h @ w[i]: the matmul's result itself is carried (stored into h's
// buffer after the cube writes it elsewhere: it reads h).
pto::v1::Graph CarriedProduct(const SymExpr& bs) {
  GraphBuilder b("carried_product");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t w = b.SymInput("w", DT_FP32, {bs, 16, 16});
  const uint32_t h = b.SymValue(DT_FP32, {1, 8, 16}, "h");
  Ids outs = b.Loop("i", 0, bs, 1, {h}, [&](const Ids& args) {
    const uint32_t wi = b.View(w, {i, 0, 0}, {1, 16, 16}, {1, 16, 16});
    return Ids{Mm(b, args[0], wi, {1, 8, 16})};
  });
  b.InOut("h", h, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, CarriedMatmulResult) { CompileOnceAndRun(CarriedProduct, {1, 2, 4}); }

// out[i] = x[i] @ w for i in 0..bs-4: no iteration for bs <= 4.
pto::v1::Graph ShortLoop(const SymExpr& bs) {
  GraphBuilder b("short_loop");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 8, 16});
  const uint32_t w = b.Input("w", DT_FP32, {16, 12});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 8, 12}, "out");
  Ids outs = b.Loop("i", 0, bs - 4, 1, {out}, [&](const Ids& args) {
    const uint32_t xi = b.View(x, {i, 0, 0}, {1, 8, 16}, {1, 8, 16});
    return Ids{b.Assemble(Mm(b, xi, w, {1, 8, 12}), args[0], {i, 0, 0}, {1, 8, 12})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, ZeroTripsKeepTheCallersData) { CompileOnceAndRun(ShortLoop, {1, 4, 6}); }

// In an if on the index: out[i] = x[i] @ w for even i, x[i] @ v^T for odd.
pto::v1::Graph EvenOdd(const SymExpr& bs) {
  GraphBuilder b("even_odd_matmul");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 8, 16});
  const uint32_t w = b.Input("w", DT_FP32, {16, 12});
  const uint32_t v = b.Input("v", DT_FP32, {12, 16});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 8, 12}, "out");
  const std::vector<int64_t> tile = {1, 8, 12};
  Ids outs = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
    const uint32_t xi = b.View(x, {i, 0, 0}, {1, 8, 16}, {1, 8, 16});
    return b.If(
        compiler::testing::CompareExpr(pto::v1::DIM_OP_EQ, SymExpr::Mod(i, 2), 0),
        {args[0]},
        [&](const Ids& r) {
          return Ids{b.Assemble(Mm(b, xi, w, {1, 8, 12}), r[0], {i, 0, 0}, tile)};
        },
        [&](const Ids& r) {
          return Ids{b.Assemble(Mm(b, xi, v, {1, 8, 12}, /*b_trans=*/true), r[0],
                                {i, 0, 0}, tile)};
        });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, MatmulInIfBranches) { CompileOnceAndRun(EvenOdd, {1, 2, 7}); }

// Tails: for i in 0..n step 4: out[i:min(i+4, n)] = x[i:min(i+4, n)] @ w:
// the last block's M is a run-time extent (the generic cube function).
pto::v1::Graph TailRows(const SymExpr& n) {
  GraphBuilder b("tail_rows");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, 16});
  const uint32_t w = b.Input("w", DT_FP32, {16, 40});
  const uint32_t out = b.SymValue(DT_FP32, {n, 40}, "out");
  Ids outs = b.Loop("i", 0, n, 4, {out}, [&](const Ids& args) {
    const SymExpr rows = SymExpr::Min(SymExpr(4), n - i);
    const uint32_t xi = b.View(x, {i, 0}, {rows, 16}, {4, 16});
    const uint32_t y = Mm(b, xi, w, {4, 40});
    b.SetShape(y, {rows, 40});
    return Ids{b.Assemble(y, args[0], {i, 0}, {4, 40})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, TailRowsAreRunTimeExtents) {
  auto compiled = compiler::Compile(TailRows(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_THAT(compiled->binary.pto_text(), HasSubstr("extents=args"));
  CompileOnceAndRun(TailRows, {1, 4, 5, 13});
}

// Tails in both M and N: for i in 0..n step 4, j in 0..40 step 16:
// out[i:min(i+4, n), j:min(j+16, 40)] = x[i:...] @ w[:, j:...] (the last
// column block is 8 wide, the last row block n % 4 tall).
// `dtype` for inputs and result (BF16: on an AMX target, the AMX
// function with run-time extents).
pto::v1::Graph TailRowsAndColumnsOf(const SymExpr& n, pto::v1::DataType dtype) {
  GraphBuilder b("tail_rows_cols");
  const SymExpr i = SymExpr::Symbol("i"), j = SymExpr::Symbol("j");
  const uint32_t x = b.SymInput("x", dtype, {n, 16});
  const uint32_t w = b.Input("w", dtype, {16, 40});
  const uint32_t out = b.SymValue(dtype, {n, 40}, "out");
  Ids outs = b.Loop("i", 0, n, 4, {out}, [&](const Ids& outer) {
    return b.Loop("j", 0, 40, 16, {outer[0]}, [&](const Ids& inner) {
      const SymExpr rows = SymExpr::Min(SymExpr(4), n - i);
      const SymExpr cols = SymExpr::Min(SymExpr(16), 40 - j);
      const uint32_t xi = b.View(x, {i, 0}, {rows, 16}, {4, 16});
      const uint32_t wj = b.View(w, {0, j}, {16, cols}, {16, 16});
      const uint32_t y = Mm(b, xi, wj, {4, 16}, false, dtype);
      b.SetShape(y, {rows, cols});
      return Ids{b.Assemble(y, inner[0], {i, j}, {4, 16})};
    });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

pto::v1::Graph TailRowsAndColumns(const SymExpr& n) { return TailRowsAndColumnsOf(n, DT_FP32); }

TEST(LoopMatmulTest, TailRowsAndColumns) {
  CompileOnceAndRun(TailRowsAndColumns, {1, 4, 6, 13});
  CompileOnceAndRun([](const SymExpr& n) { return TailRowsAndColumnsOf(n, pto::v1::DT_BF16); },
                    {1, 6, 13});
}

// Heads of row blocks: for i in 0..bs step 8: rows = x[i:i+8]; for h in
// 0..4: out[i:i+8, h*16:] = rows[:, h*32:(h+1)*32] @ w: the operand is a
// view at h of a view at i (one view of x at [i, h*32]).
pto::v1::Graph HeadsOfRowBlocks(const SymExpr& bs) {
  GraphBuilder b("heads_of_rows");
  const SymExpr i = SymExpr::Symbol("i"), h = SymExpr::Symbol("h");
  const uint32_t x = b.SymInput("x", DT_FP32, {bs, 128});
  const uint32_t w = b.Input("w", DT_FP32, {32, 16});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 64}, "out");
  Ids outs = b.Loop("i", 0, bs, 8, {out}, [&](const Ids& outer) {
    const uint32_t rows = b.View(x, {i, 0}, {8, 128}, {8, 128});
    return b.Loop("h", 0, 4, 1, {outer[0]}, [&](const Ids& inner) {
      const uint32_t q = b.View(rows, {0, h * 32}, {8, 32}, {8, 32});
      return Ids{b.Assemble(Mm(b, q, w, {8, 16}), inner[0], {i, h * 16}, {8, 16})};
    });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, OperandIsAViewOfAViewAtLoopOffsets) {
  CompileOnceAndRun(HeadsOfRowBlocks, {8, 24});
}

// Split K: acc = acc + x[:, k:k+16] @ w[k:k+16, :] for k in 0..64 step 16
// (the views' loop-dependent offsets are in the K dims; static shapes: a
// body's dims may not depend on parameter symbols yet).
pto::v1::Graph SplitK(const SymExpr&) {
  GraphBuilder b("split_k");
  const SymExpr k = SymExpr::Symbol("k");
  const uint32_t x = b.Input("x", DT_FP32, {12, 64});
  const uint32_t w = b.Input("w", DT_FP32, {64, 24});
  const uint32_t acc = b.Value(DT_FP32, {12, 24}, "acc");
  Ids outs = b.Loop("k", 0, 64, 16, {acc}, [&](const Ids& args) {
    const uint32_t xk = b.View(x, {0, k}, {12, 16}, {12, 16});
    const uint32_t wk = b.View(w, {k, 0}, {16, 24}, {16, 24});
    return Ids{b.Op("add", {args[0], Mm(b, xk, wk, {12, 24})}, {12, 24})};
  });
  b.InOut("acc", acc, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, SplitKAccumulation) { CompileOnceAndRun(SplitK, {1}); }

// A tail of K: acc = acc + x[:, k:min(k+16, 40)] @ w[k:min(k+16, 40), :]
// for k in 0..40 step 16 (the last block 8 deep): K is a dynamic arg of the
// cube function. Rows are bs (a loop over row blocks of 4 with a tail
// around it), so M tails and K tails meet.
// `in` is the operands' dtype (BF16: the FMA kernel even where the target
// has AMX, which takes a static K only); the product and out are FP32.
pto::v1::Graph TailKOf(const SymExpr& bs, pto::v1::DataType in) {
  GraphBuilder b("tail_k");
  const SymExpr i = SymExpr::Symbol("i"), k = SymExpr::Symbol("k");
  const uint32_t x = b.SymInput("x", in, {bs, 40});
  const uint32_t w = b.Input("w", in, {40, 12});
  const uint32_t out = b.SymValue(DT_FP32, {bs, 12}, "out");
  Ids outs = b.Loop("i", 0, bs, 4, {out}, [&](const Ids& outer) {
    const SymExpr rows = SymExpr::Min(SymExpr(4), bs - i);
    return b.Loop("k", 0, 40, 16, {outer[0]}, [&](const Ids& inner) {
      const SymExpr depth = SymExpr::Min(SymExpr(16), 40 - k);
      const uint32_t xk = b.View(x, {i, k}, {rows, depth}, {4, 16});
      const uint32_t wk = b.View(w, {k, 0}, {depth, 12}, {16, 12});
      const uint32_t p = Mm(b, xk, wk, {4, 12});
      b.SetShape(p, {rows, 12});
      const uint32_t acc = b.View(inner[0], {i, 0}, {rows, 12}, {4, 12});
      const uint32_t sum = b.Op("add", {acc, p}, {4, 12});
      return Ids{b.Assemble(sum, inner[0], {i, 0}, {4, 12})};
    });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

pto::v1::Graph TailK(const SymExpr& bs) { return TailKOf(bs, DT_FP32); }

TEST(LoopMatmulTest, TailOfKIsARunTimeArg) {
  auto compiled = compiler::Compile(TailK(kBs), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_THAT(compiled->binary.pto_text(), HasSubstr(".kloop k = 0, d"));
  CompileOnceAndRun(TailK, {1, 4, 6, 13});
  CompileOnceAndRun([](const SymExpr& n) { return TailKOf(n, pto::v1::DT_BF16); }, {1, 6});
}

// Run-time leading dimensions in a loop body: out[i:i+4, 0:12] = x[i:i+4] @ w
// with out [n, m] (the store's leading dimension is the run-time m), and
// out2[i:i+4] = x[i:i+4] @ w2 with w2 [16, m] (a symbolic N: B's leading
// dimension and the result's columns, tails on the generic cube function).
pto::v1::Graph DynamicLd(const SymExpr& n, const SymExpr& m) {
  GraphBuilder b("dynamic_ld");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, 16});
  const uint32_t w = b.Input("w", DT_FP32, {16, 12});
  const uint32_t w2 = b.SymInput("w2", DT_FP32, {16, m});
  const uint32_t out = b.SymValue(DT_FP32, {n, m}, "out");
  const uint32_t out2 = b.SymValue(DT_FP32, {n, m}, "out2");
  Ids outs = b.Loop("i", 0, n, 4, {out, out2}, [&](const Ids& args) {
    const uint32_t xi = b.View(x, {i, 0}, {4, 16}, {4, 16});
    const uint32_t p2 = Mm(b, xi, w2, {4, 1});
    b.SetShape(p2, {SymExpr(4), m});
    return Ids{b.Assemble(Mm(b, xi, w, {4, 12}), args[0], {i, 0}, {4, 12}),
               b.Assemble(p2, args[1], {i, 0}, {4, 12})};
  });
  b.InOut("out", out, outs[0]);
  b.InOut("out2", out2, outs[1]);
  return b.Build();
}

TEST(LoopMatmulTest, RunTimeLeadingDimensionsAndSymbolicN) {
  const SymExpr n = SymExpr::Symbol("n"), m = SymExpr::Symbol("m");
  auto kernel = CompileAndLoad(DynamicLd(n, m));
  ASSERT_NE(kernel, nullptr);
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {4, 12}, {8, 13}, {12, 45}, {4, 70}}) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(rows * 100 + cols);
    ASSERT_TRUE(RunAndExpectMatch(DynamicLd(SymExpr(rows), SymExpr(cols)), *kernel, options,
                                  absl::StrCat(rows, "x", cols)));
  }
}

// A symbolic K in a body: out[i:i+4] = x[i:i+4, :] @ w with x [n, k] and
// w [k, 12] (the view's shape [4, k] keeps the parameter's symbol; K is a
// dynamic arg, x's leading dimension a run-time stride).
pto::v1::Graph RowBlocksOverK(const SymExpr& n, const SymExpr& k) {
  GraphBuilder b("row_blocks_k");
  const SymExpr i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", DT_FP32, {n, k});
  const uint32_t w = b.SymInput("w", DT_FP32, {k, 12});
  const uint32_t out = b.SymValue(DT_FP32, {n, 12}, "out");
  Ids outs = b.Loop("i", 0, n, 4, {out}, [&](const Ids& args) {
    const uint32_t xi = b.View(x, {i, 0}, {SymExpr(4), k}, {4, 16});
    return Ids{b.Assemble(Mm(b, xi, w, {4, 12}), args[0], {i, 0}, {4, 12})};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(LoopMatmulTest, SymbolicKInABody) {
  auto kernel = CompileAndLoad(RowBlocksOverK(SymExpr::Symbol("n"), SymExpr::Symbol("k")));
  ASSERT_NE(kernel, nullptr);
  for (auto [rows, depth] : std::vector<std::pair<int64_t, int64_t>>{
           {4, 1}, {8, 9}, {12, 50}, {4, 16}}) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(rows * 100 + depth);
    ASSERT_TRUE(RunAndExpectMatch(RowBlocksOverK(SymExpr(rows), SymExpr(depth)), *kernel,
                                  options, absl::StrCat(rows, "x", depth)));
  }
}

}  // namespace
}  // namespace pto::testing
