// End to end: matmul through the cube path (TLOAD GM->L1, TMOV L1->L0A/L0B,
// TMATMUL/TMATMUL_ACC, TSTORE L0C->GM) on cube tasks, checked against the
// double-precision reference within rtol 1e-5 of the sum of magnitudes
// (FP16/BF16 results within one unit in the last place): tails in M, N and
// K, transposes, FP16/BF16 inputs, batch dims (equal and broadcast), and
// matmuls feeding and fed by vector ops in the same kernel.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor.h"
#include "runtime/host_target.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using pto::v1::DataType;
using ::testing::HasSubstr;
using ::testing::Not;

using Builder = compiler::testing::GraphBuilder;
constexpr int kSeeds = 2;

// Stored shapes of a and b for out [batch..., m, n] with K = k.
std::vector<int64_t> Stored(std::vector<int64_t> batch, int64_t rows,
                            int64_t cols, bool trans) {
  batch.push_back(trans ? cols : rows);
  batch.push_back(trans ? rows : cols);
  return batch;
}

struct Case {
  std::vector<int64_t> a_batch, b_batch;
  int64_t m, k, n;
  std::vector<int64_t> cube;  // mL0, mL1, kL0, kL1, nL0, nL1
};

std::string Name(const Case& c, const char* what) {
  return absl::StrCat("mm_", what, "_", absl::StrJoin(c.a_batch, "x"), "_",
                      absl::StrJoin(c.b_batch, "x"), "_", c.m, "x", c.k, "x", c.n);
}

void RunCase(const Case& c, DataType in, DataType out, bool a_trans,
             bool b_trans, const std::string& target = "host") {
  Builder b(Name(c, a_trans ? (b_trans ? "tt" : "tn") : (b_trans ? "nt" : "nn")));
  const uint32_t x = b.Input("a", in, Stored(c.a_batch, c.m, c.k, a_trans));
  const uint32_t y = b.Input("b", in, Stored(c.b_batch, c.k, c.n, b_trans));
  b.Output("out", b.Matmul(x, y, out, a_trans, b_trans, c.cube));
  SCOPED_TRACE(absl::StrCat(b.graph().name(), " on ", target));
  testing::CompileRunAndCheck(b.graph(), kSeeds, nullptr, target);
}

// Tails in M, N and K (K: a short last L1 block and L0 step).
TEST(MatmulTest, Fp32WithTails) {
  RunCase({{}, {}, 37, 45, 53, {16, 32, 8, 16, 32, 32}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
  RunCase({{}, {}, 64, 64, 64, {32, 32, 16, 32, 32, 32}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
  RunCase({{}, {}, 1, 1, 1, {16, 16, 16, 16, 16, 16}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
  RunCase({{}, {}, 5, 300, 3, {4, 8, 32, 128, 16, 16}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
  RunCase({{}, {}, 130, 70, 200, {64, 64, 16, 64, 128, 128}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
  // One row (B read from L1 rows, no L0B), N past 64 with an edge.
  RunCase({{}, {}, 1, 200, 150, {16, 16, 16, 64, 128, 128}}, pto::v1::DT_FP32,
          pto::v1::DT_FP32, false, false);
}

TEST(MatmulTest, Transposes) {
  for (bool a_trans : {false, true}) {
    for (bool b_trans : {false, true}) {
      RunCase({{}, {}, 37, 45, 53, {16, 32, 8, 16, 32, 32}}, pto::v1::DT_FP32,
              pto::v1::DT_FP32, a_trans, b_trans);
    }
  }
}

// FP16/BF16 inputs accumulate in FP32; the result is FP32 or rounded once.
TEST(MatmulTest, HalfInputs) {
  for (DataType in : {pto::v1::DT_FP16, pto::v1::DT_BF16}) {
    for (DataType out : {pto::v1::DT_FP32, in}) {
      RunCase({{}, {}, 21, 40, 35, {16, 32, 16, 32, 32, 32}}, in, out, false, true);
      RunCase({{}, {}, 21, 40, 35, {16, 32, 16, 32, 32, 32}}, in, out, true, false);
      RunCase({{}, {}, 3, 70, 45, {16, 32, 16, 32, 32, 32}}, in, out, true, false);  // small M
    }
    // L1 tiles of 512 KiB of f32 (kL1 1024): on the heap, not the stack.
    RunCase({{}, {}, 130, 1100, 40, {128, 128, 64, 1024, 32, 128}}, in,
            pto::v1::DT_FP32, false, false);
  }
}

// Batch dims: equal, broadcast (size 1 and missing), 3-D and 4-D.
TEST(MatmulTest, Batched) {
  const std::vector<int64_t> cube = {8, 16, 8, 16, 16, 16};
  RunCase({{3}, {3}, 9, 10, 17, cube}, pto::v1::DT_FP32, pto::v1::DT_FP32, false, false);
  RunCase({{3}, {}, 9, 10, 17, cube}, pto::v1::DT_FP32, pto::v1::DT_FP32, false, true);
  RunCase({{1}, {4}, 9, 10, 17, cube}, pto::v1::DT_FP32, pto::v1::DT_FP32, true, false);
  RunCase({{2, 3}, {2, 3}, 9, 10, 17, cube}, pto::v1::DT_FP32, pto::v1::DT_FP32, false, false);
  RunCase({{2, 1}, {1, 3}, 9, 10, 17, cube}, pto::v1::DT_BF16, pto::v1::DT_FP32, true, true);
  RunCase({{}, {2, 3}, 9, 10, 17, cube}, pto::v1::DT_FP16, pto::v1::DT_FP16, false, false);
}

// BF16 on AMX tiles (host-x86_64-v3-amx, pto_amx.h; "host" is
// host-x86_64-v4-amx on an AVX-512 CPU with AMX, so the BF16 cases of the
// other tests run there), against the same
// reference and tolerances: tails in M, N and K (K odd, 16-row and
// 16-column edge tiles, a short last K block), both transposes, BF16 and
// FP32 results, batch dims, scratch tiles on the heap.
TEST(MatmulTest, AmxBf16) {
  if (!runtime::CanRunHostTarget(runtime::kHostAmxTarget)) {
    GTEST_SKIP() << "skipped: no AMX (" << runtime::HostTargetNeeds(runtime::kHostAmxTarget)
                 << ")";
  }
  const std::string amx = runtime::kHostAmxTarget;
  const DataType bf16 = pto::v1::DT_BF16, fp32 = pto::v1::DT_FP32;
  for (DataType out : {bf16, fp32}) {
    for (bool a_trans : {false, true}) {
      for (bool b_trans : {false, true}) {
        RunCase({{}, {}, 37, 45, 53, {16, 32, 16, 32, 32, 32}}, bf16, out, a_trans, b_trans,
                amx);
      }
    }
  }
  RunCase({{}, {}, 1, 1, 1, {16, 16, 16, 16, 16, 16}}, bf16, bf16, false, false, amx);
  RunCase({{}, {}, 3, 70, 45, {16, 32, 16, 32, 32, 32}}, bf16, bf16, true, false, amx);
  RunCase({{}, {}, 50, 301, 70, {64, 64, 32, 64, 64, 64}}, bf16, fp32, false, false, amx);
  // kL1 1024: l0a (transposed A, 128 x 1024) on the heap.
  RunCase({{}, {}, 130, 1100, 40, {128, 128, 64, 1024, 32, 128}}, bf16, fp32, true, false,
          amx);
  const std::vector<int64_t> cube = {8, 16, 8, 16, 16, 16};
  RunCase({{2, 1}, {1, 3}, 9, 10, 17, cube}, bf16, fp32, true, true, amx);
  RunCase({{3}, {3}, 19, 40, 17, cube}, bf16, bf16, false, false, amx);
}

// Code generation, on any CPU: the AMX targets' BF16 cube functions call
// pto_amx.h; other targets, FP32 on the AMX target and BF16 functions of at
// most 4 rows (the rows path) keep the FMA path (the same source as
// host-x86_64-v3).
TEST(MatmulTest, AmxTargetGeneratesTileCode) {
  compiler::CompileSettings settings;
  settings.keep_dumps = true;
  auto cpp = [&](DataType in, const std::string& target, int64_t m = 37) {
    Builder b("mm_amx_codegen");
    const uint32_t x = b.Input("a", in, {m, 45});
    const uint32_t y = b.Input("b", in, {45, 53});
    b.Output("out", b.Matmul(x, y, in, false, false, {16, 32, 16, 32, 32, 32}));
    auto r = compiler::Compile(b.graph(), target, {}, settings);
    EXPECT_TRUE(r.ok()) << target << ": " << r.status();
    return r.ok() ? r->dumps["cpp"] : std::string();
  };
  const std::string amx_bf16 = cpp(pto::v1::DT_BF16, runtime::kHostAmxTarget);
  EXPECT_THAT(amx_bf16, HasSubstr("pto_amx::AmxBegin();"));
  EXPECT_THAT(amx_bf16, HasSubstr("pto_amx::AmxMovL0B(l0b, b + k * 53, 53, false, kb, 32);"));
  EXPECT_THAT(amx_bf16, HasSubstr("pto_amx::AmxMatmul<true>(l0c, a + k, 45, l0b, 16, kb, 32);"));
  EXPECT_THAT(amx_bf16, HasSubstr("pto_amx::AmxEnd();"));
  EXPECT_THAT(amx_bf16, Not(HasSubstr("pto_cube::CubeMatmul")));
  EXPECT_THAT(cpp(pto::v1::DT_BF16, "host-x86_64-v3"), Not(HasSubstr("pto_amx::")));
  // v4-amx generates the same source (only its -march differs); v4 none.
  EXPECT_EQ(cpp(pto::v1::DT_BF16, runtime::kHostV4AmxTarget), amx_bf16);
  EXPECT_THAT(cpp(pto::v1::DT_BF16, runtime::kHostV4Target), Not(HasSubstr("pto_amx::")));
  EXPECT_EQ(cpp(pto::v1::DT_FP32, runtime::kHostAmxTarget),
            cpp(pto::v1::DT_FP32, "host-x86_64-v3"));
  // A few rows (pto_cube's rows path) stay on the FMA kernel.
  EXPECT_EQ(cpp(pto::v1::DT_BF16, runtime::kHostAmxTarget, 3),
            cpp(pto::v1::DT_BF16, "host-x86_64-v3", 3));
}

// relu(matmul(exp(a) * 0.5, b) + bias): vector ops before and after the cube
// group, GM between them, dependencies per tile.
TEST(MatmulTest, FeedsAndIsFedByVectorOps) {
  Builder b("mm_vector_chain");
  const uint32_t a = b.Input("a", pto::v1::DT_FP32, {37, 45});
  const uint32_t w = b.Input("w", pto::v1::DT_FP32, {45, 53});
  const uint32_t bias = b.Input("bias", pto::v1::DT_FP32, {53});
  const uint32_t x = b.Op("muls", {b.Op("exp", {a}, {8, 16})}, {8, 16}, {{"scalar", 0.5}});
  const uint32_t y = b.Matmul(x, w, pto::v1::DT_UNSPECIFIED, false, false,
                              {16, 32, 8, 16, 16, 32});
  b.Output("out", b.Op("relu", {b.Op("add", {y, bias}, {4, 32})}, {4, 32}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);

  compiler::CompileSettings settings;
  settings.keep_dumps = true;
  auto r = compiler::Compile(b.graph(), "host", {}, settings);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->dumps["execute"], HasSubstr("cube"));
  EXPECT_THAT(r->dumps["tile"], HasSubstr("TMATMUL_ACC"));
}

// The runtime runs the cube functions' tasks on its cube pool (or the
// calling thread, which helps), the vector ones on the vector pool.
TEST(MatmulTest, CubeTasksRunOnTheCubePool) {
  Builder b("mm_pools");
  const uint32_t a = b.Input("a", pto::v1::DT_FP32, {64, 32});
  const uint32_t w = b.Input("w", pto::v1::DT_FP32, {32, 48});
  const uint32_t y = b.Matmul(a, w, pto::v1::DT_UNSPECIFIED, false, false,
                              {16, 16, 16, 32, 16, 16});
  b.Output("out", b.Op("relu", {y}, {8, 48}));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> av(64 * 32, 1.0f), wv(32 * 48, 0.5f), out(64 * 48);
  std::vector<runtime::TensorArg> args = {
      {av.data(), pto::v1::DT_FP32, {64, 32}},
      {wv.data(), pto::v1::DT_FP32, {32, 48}},
      {out.data(), pto::v1::DT_FP32, {64, 48}}};
  std::vector<runtime::TaskEvent> trace;
  runtime::RunOptions options;
  options.trace = &trace;
  runtime::Executor& ex = runtime::Executor::Default();
  ASSERT_TRUE((*kernel)->Run(args, &ex, options).ok());
  for (float v : out) ASSERT_EQ(v, 16.0f);
  const pto::v1::ExecuteGraph& graph = compiled->binary.execute_graph();
  int cube_tasks = 0;
  ASSERT_EQ(trace.size(), static_cast<size_t>(graph.tasks_size()));
  for (const runtime::TaskEvent& e : trace) {
    const bool cube = graph.functions(graph.tasks(e.task).function()).core_type() ==
                      pto::v1::CORE_TYPE_CUBE;
    cube_tasks += cube;
    EXPECT_EQ(e.core, cube ? runtime::CoreKind::kCube : runtime::CoreKind::kVector);
    const std::string worker = ex.WorkerName(e.worker);
    EXPECT_TRUE(worker == "caller" || worker.rfind(cube ? "cube/" : "vector/", 0) == 0)
        << "task " << e.task << " ran on " << worker;
  }
  EXPECT_EQ(cube_tasks, 4 * 3);  // [64 x 48] in [16 x 16] tiles
}

// Two matmuls in a row: the second reads the first's GM result.
TEST(MatmulTest, Chained) {
  Builder b("mm_chain");
  const uint32_t a = b.Input("a", pto::v1::DT_FP32, {20, 30});
  const uint32_t w1 = b.Input("w1", pto::v1::DT_FP32, {30, 40});
  const uint32_t w2 = b.Input("w2", pto::v1::DT_FP32, {50, 40});
  const uint32_t h = b.Matmul(a, w1, pto::v1::DT_UNSPECIFIED, false, false,
                              {8, 16, 16, 32, 16, 16});
  b.Output("out", b.Matmul(h, w2, pto::v1::DT_UNSPECIFIED, false, true,
                           {16, 16, 8, 16, 32, 32}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// x.T @ w and a @ y.transpose(-1, -2) (batched): a transpose of the last two
// dims is read in place with the opposite a_trans/b_trans.
TEST(MatmulTest, TransposedOperandsAreReadInPlace) {
  const std::vector<int64_t> cube = {16, 32, 8, 16, 32, 32};
  {
    Builder b("mm_xT_w");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {45, 37});
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {45, 53});
    const uint32_t t = b.Layout("transpose", {x}, {8, 8}, {}, {{"dim0", 0}, {"dim1", 1}});
    b.Output("out", b.Matmul(t, w, pto::v1::DT_UNSPECIFIED, false, false, cube));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    Builder b("mm_a_yT_batched");
    const uint32_t a = b.Input("a", pto::v1::DT_FP32, {2, 21, 40});
    const uint32_t y = b.Input("y", pto::v1::DT_FP32, {2, 40, 35});
    const uint32_t t = b.Layout("transpose", {y}, {1, 8, 8}, {}, {{"dim0", -1}, {"dim1", -2}});
    // a @ (y^T)^T with b_trans: y itself.
    b.Output("out", b.Matmul(a, t, pto::v1::DT_UNSPECIFIED, false, true, cube));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

// Views, permutes, unsqueezes and reshapes of GM tensors as operands are
// read in place through their index (offsets and strides in the cube's
// TLOADs), in FP32 and FP16, with tails: the per-head attention pattern
// q[:, h*D:(h+1)*D] @ k[:, h*D:(h+1)*D].T, a [B, S, H, D] permute to
// [B, H, S, D], one row as an unsqueezed vector, one batch by a fixed
// index, and a contiguous [B, S, D] -> [B*S, D] reshape.
TEST(MatmulTest, AliasOperandsAreReadInPlace) {
  const std::vector<int64_t> cube = {16, 32, 8, 16, 32, 32};
  for (DataType t : {pto::v1::DT_FP32, pto::v1::DT_FP16}) {
    const char* suffix = t == pto::v1::DT_FP32 ? "_f32" : "_f16";
    for (int64_t h : {0, 2}) {
      Builder b(absl::StrCat("mm_heads_", h, suffix));
      const uint32_t q = b.Input("q", t, {37, 3 * 24});
      const uint32_t k = b.Input("k", t, {41, 3 * 24});
      const uint32_t qh = b.Layout("view", {q}, {8, 8}, {{"shape", {37, 24}}, {"offsets", {0, h * 24}}});
      const uint32_t kh = b.Layout("view", {k}, {8, 8}, {{"shape", {41, 24}}, {"offsets", {0, h * 24}}});
      const uint32_t kt = b.Layout("transpose", {kh}, {8, 8}, {}, {{"dim0", 0}, {"dim1", 1}});
      b.Output("out", b.Matmul(qh, kt, pto::v1::DT_FP32, false, false, cube));
      SCOPED_TRACE(b.graph().name());
      testing::CompileRunAndCheck(b.graph(), kSeeds);
      if (h != 2) continue;
      // One cube group, no copies: both TLOADs read q and k at column 48.
      compiler::CompileSettings settings;
      settings.keep_dumps = true;
      auto r = compiler::Compile(b.graph(), "host", {}, settings);
      ASSERT_TRUE(r.ok()) << r.status();
      const std::string& tile = r->dumps["tile"];
      EXPECT_THAT(tile, HasSubstr("gm[a0, k+48]"));
      EXPECT_THAT(tile, HasSubstr("gm[a1, k+48]"));
      EXPECT_THAT(tile, ::testing::Not(HasSubstr("group #1")));
    }
    {
      // [B, S, H, D] -> [B, H, S, D]: S strided by H*D, D contiguous; the
      // keys' transpose makes them read with b_trans.
      Builder b(absl::StrCat("mm_permute", suffix));
      const uint32_t q = b.Input("q", t, {2, 19, 3, 16});
      const uint32_t k = b.Input("k", t, {2, 23, 3, 16});
      const uint32_t qp = b.Layout("permute", {q}, {1, 1, 8, 8}, {{"dims", {0, 2, 1, 3}}});
      const uint32_t kp = b.Layout("permute", {k}, {1, 1, 8, 8}, {{"dims", {0, 2, 3, 1}}});
      b.Output("out", b.Matmul(qp, kp, pto::v1::DT_FP32, false, false, cube));
      SCOPED_TRACE(b.graph().name());
      testing::CompileRunAndCheck(b.graph(), kSeeds);
    }
  }
  {
    // x[3] of [5, 40] unsqueezed to [1, 40] @ w, where w = w3[2] of
    // [4, 40, 33] (a fixed batch index); and x3 [2, 9, 40] as [18, 40] @ w.
    Builder b("mm_row_batch_reshape");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {5, 40});
    const uint32_t w3 = b.Input("w3", pto::v1::DT_FP32, {4, 40, 33});
    const uint32_t x3 = b.Input("x3", pto::v1::DT_FP32, {2, 9, 40});
    const uint32_t x3row = b.Layout("view", {x}, {1, 8}, {{"shape", {1, 40}}, {"offsets", {3, 0}}});
    const uint32_t vec = b.Layout("reshape", {x3row}, {8}, {{"shape", {40}}});
    const uint32_t row = b.Layout("unsqueeze", {vec}, {1, 8}, {}, {{"dim", 0}});
    const uint32_t wv = b.Layout("view", {w3}, {1, 8, 8}, {{"shape", {1, 40, 33}}, {"offsets", {2, 0, 0}}});
    const uint32_t w = b.Layout("reshape", {wv}, {8, 8}, {{"shape", {40, 33}}});
    const uint32_t flat = b.Layout("reshape", {x3}, {8, 8}, {{"shape", {18, 40}}});
    b.Output("one", b.Matmul(row, w, pto::v1::DT_UNSPECIFIED, false, false, cube));
    b.Output("many", b.Matmul(flat, w, pto::v1::DT_UNSPECIFIED, false, false, cube));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
  {
    // x[:, :, 1] of [20, 16, 3]: neither the rows nor the columns are
    // contiguous: refused, naming the op and the operand.
    Builder b("mm_strided");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {20, 16, 3});
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {16, 4});
    const uint32_t v = b.Layout("view", {x}, {4, 4, 1}, {{"shape", {20, 16, 1}}, {"offsets", {0, 0, 1}}});
    const uint32_t s = b.Layout("reshape", {v}, {4, 4}, {{"shape", {20, 16}}});
    b.Output("out", b.Matmul(s, w, pto::v1::DT_UNSPECIFIED, false, false, cube));
    auto r = compiler::Compile(b.graph(), "host", {});
    EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
    EXPECT_THAT(r.status().message(),
                HasSubstr("op #2 \"matmul\": input 0 ([20,16]) is a view or permute whose rows "
                          "and columns are both strided"));
  }
}

// A matmul's result read only by an assemble or a concat is stored by the
// cube group straight into its region (no workspace, no copy group): out[:,
// 32:85] = a @ w into an inout parameter, concat([x @ w1, exp(y), x @ w2])
// along dim 1. Not where the region's buffer is an operand's (out[:, 0:16]
// = out[:, 16:32] @ w) or the dst is computed after the matmul: those copy,
// and every result matches the reference.
TEST(MatmulTest, ResultStoredIntoAssembleAndConcatRegions) {
  const std::vector<int64_t> cube = {16, 32, 8, 16, 32, 32};
  auto tile_dump = [](const pto::v1::Graph& g) {
    compiler::CompileSettings settings;
    settings.keep_dumps = true;
    auto r = compiler::Compile(g, "host", {}, settings);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->dumps["tile"] : std::string();
  };
  {
    Builder b("mm_into_assemble");
    const uint32_t a = b.Input("a", pto::v1::DT_FP32, {37, 45});
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {45, 53});
    const uint32_t out = b.InOut("out", pto::v1::DT_FP32, {37, 100});
    const uint32_t y = b.Matmul(a, w, pto::v1::DT_UNSPECIFIED, false, false, cube);
    b.Output("out", b.Layout("assemble", {y, out}, {8, 8}, {{"offsets", {0, 32}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    const std::string tile = tile_dump(b.graph());
    EXPECT_THAT(tile, HasSubstr("group #0 ops=[0,1]"));
    EXPECT_THAT(tile, HasSubstr("gm[a0, a1+32]"));
    EXPECT_THAT(tile, ::testing::Not(HasSubstr("group #1")));
  }
  {
    Builder b("mm_into_concat");
    const uint32_t x = b.Input("x", pto::v1::DT_FP32, {21, 40});
    const uint32_t w1 = b.Input("w1", pto::v1::DT_FP32, {40, 30});
    const uint32_t w2 = b.Input("w2", pto::v1::DT_FP32, {40, 17});
    const uint32_t y = b.Input("y", pto::v1::DT_FP32, {21, 9});
    const uint32_t m1 = b.Matmul(x, w1, pto::v1::DT_UNSPECIFIED, false, false, cube);
    const uint32_t e = b.Op("exp", {y}, {8, 8});
    const uint32_t m2 = b.Matmul(x, w2, pto::v1::DT_UNSPECIFIED, false, false, cube);
    b.Output("out", b.Layout("concat", {m1, e, m2}, {8, 8}, {}, {{"dim", 1}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    const std::string tile = tile_dump(b.graph());
    EXPECT_THAT(tile, HasSubstr("group #0 ops=[0,3]"));
    EXPECT_THAT(tile, HasSubstr("group #1 ops=[1,3]"));
    EXPECT_THAT(tile, HasSubstr("group #2 ops=[2,3]"));
    EXPECT_THAT(tile, HasSubstr("gm[a0, a1+39]"));
    EXPECT_THAT(tile, ::testing::Not(HasSubstr("group #3")));
  }
  {
    Builder b("mm_into_own_operand");
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {16, 16});
    const uint32_t out = b.InOut("out", pto::v1::DT_FP32, {20, 32});
    const uint32_t v = b.Layout("view", {out}, {8, 8}, {{"shape", {20, 16}}, {"offsets", {0, 16}}});
    const uint32_t y = b.Matmul(v, w, pto::v1::DT_UNSPECIFIED, false, false, cube);
    b.Output("out", b.Layout("assemble", {y, out}, {8, 8}, {{"offsets", {0, 0}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    EXPECT_THAT(tile_dump(b.graph()), HasSubstr("group #1"));  // copied
  }
  {
    Builder b("mm_into_later_dst");
    const uint32_t a = b.Input("a", pto::v1::DT_FP32, {20, 16});
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {16, 16});
    const uint32_t c = b.Input("c", pto::v1::DT_FP32, {20, 40});
    const uint32_t y = b.Matmul(a, w, pto::v1::DT_UNSPECIFIED, false, false, cube);
    const uint32_t z = b.Op("exp", {c}, {8, 8});
    b.Output("out", b.Layout("assemble", {y, z}, {8, 8}, {{"offsets", {0, 8}}}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
    EXPECT_THAT(tile_dump(b.graph()), HasSubstr("group #2"));  // copied
  }
}

// a = a @ w on an inout parameter would race (tasks read rows of a that
// others overwrite): refused, naming the op and operand.
TEST(MatmulTest, ResultIntoItsOperandsBufferIsRefused) {
  pto::v1::Graph g;
  {
    Builder b("mm_inout");
    const uint32_t a = b.Input("a", pto::v1::DT_FP32, {8, 8});
    const uint32_t w = b.Input("w", pto::v1::DT_FP32, {8, 8});
    const uint32_t y = b.Matmul(a, w, pto::v1::DT_UNSPECIFIED, false, false,
                                {4, 4, 4, 4, 4, 4});
    g = b.graph();
    g.mutable_params(0)->set_role(pto::v1::PARAM_ROLE_INOUT);
    g.mutable_params(0)->set_result_value_id(y);
  }
  auto r = compiler::Compile(g, "host", {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("op #0 \"matmul\": the result is written"));
}

}  // namespace
}  // namespace pto
