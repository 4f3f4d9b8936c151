// Untrusted input: random mutations of valid graphs must be accepted or
// rejected with a clear status, never crash, hang or trip a sanitizer-style
// assumption in a later pass. Runs every stage up to code generation (no
// native compiler, so it stays fast).
#include <random>

#include "compiler/pipeline.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"

namespace pto::compiler {
namespace {

using testing::GraphBuilder;

pto::v1::Graph Seed() {
  GraphBuilder b("fuzz");
  uint32_t a = b.Input("a", pto::v1::DT_FP32, {6, 10});
  uint32_t c = b.Input("c", pto::v1::DT_FP32, {6, 10});
  uint32_t x = b.Op("muls", {a}, {4, 4}, 2.0);
  uint32_t y = b.Op("exp", {x}, {4, 4});
  uint32_t z = b.Op("sub", {y, c}, {3, 8});
  b.Output("o", z);
  b.InOut("c2", b.Value(pto::v1::DT_FP32, {6, 10}),
          b.Op("abs", {a}, {6, 10}));
  return b.Build();
}

absl::Status Lower(const pto::v1::Graph& g) {
  LoweringState state;
  state.graph = &g;
  state.target = "host-x86_64";
  state.settings.keep_dumps = true;
  std::map<std::string, std::string> dumps;
  return RunPipeline(&state, nullptr, &dumps, "codegen");
}

void ExpectCleanStatus(const absl::Status& s, const std::string& bytes) {
  if (s.ok()) return;
  EXPECT_TRUE(s.code() == absl::StatusCode::kInvalidArgument ||
              s.code() == absl::StatusCode::kUnimplemented)
      << s << " for input of " << bytes.size() << " bytes";
  EXPECT_FALSE(s.message().empty());
}

// `iters` copies of `seed` with 1 to 4 random bytes overwritten (rng
// seeded with `rng_seed`): each that still parses lowers to OK or a clean
// status, and more than 100 parse.
void ExpectByteMutationsLowerCleanly(const pto::v1::Graph& seed, uint32_t rng_seed,
                                     int iters) {
  const std::string serialized = seed.SerializeAsString();
  std::mt19937 rng(rng_seed);
  int parsed = 0;
  for (int iter = 0; iter < iters; ++iter) {
    std::string bytes = serialized;
    const int flips = 1 + rng() % 4;
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    pto::v1::Graph g;
    if (!g.ParseFromString(bytes)) continue;
    ++parsed;
    ExpectCleanStatus(Lower(g), bytes);
  }
  EXPECT_GT(parsed, 100);
}

TEST(FuzzTest, SeedIsValid) {
  absl::Status s = Lower(Seed());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzTest, ByteMutationsNeverCrash) {
  ExpectByteMutationsLowerCleanly(Seed(), 1234, 3000);
}

// Loops and branches: a loop over a dynamic batch with a
// tail view, an if on the index inside it, a carried new value.
pto::v1::Graph RegionSeed() {
  GraphBuilder b("fuzz_loop");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, 8}, "out");
  auto outs = b.Loop("i", 0, n, 2, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {SymExpr::Min(2, n - i), 8}, {2, 8});
    return b.If(testing::CompareExpr(pto::v1::DIM_OP_EQ, SymExpr::Mod(i, 4), 0), args,
                [&](const std::vector<uint32_t>& a) {
                  return std::vector<uint32_t>{
                      b.Assemble(b.Op("exp", {v}, {2, 8}), a[0], {i, 0}, {2, 8})};
                },
                [&](const std::vector<uint32_t>& a) { return a; });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(FuzzTest, RegionSeedIsValid) {
  absl::Status s = Lower(RegionSeed());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzTest, ByteMutationsOfRegionsNeverCrash) {
  ExpectByteMutationsLowerCleanly(RegionSeed(), 4321, 2000);
}

// Matmul in a loop body: row blocks with an M tail, a K tail from an inner
// loop, the product accumulated into the carried output.
pto::v1::Graph MatmulRegionSeed() {
  GraphBuilder b("fuzz_loop_matmul");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i"), k = SymExpr::Symbol("k");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 40});
  uint32_t w = b.Input("w", pto::v1::DT_FP32, {40, 12});
  uint32_t out = b.SymValue(pto::v1::DT_FP32, {n, 12}, "out");
  auto outs = b.Loop("i", 0, n, 4, {out}, [&](const std::vector<uint32_t>& outer) {
    const SymExpr rows = SymExpr::Min(4, n - i);
    return b.Loop("k", 0, 40, 16, {outer[0]}, [&](const std::vector<uint32_t>& inner) {
      const SymExpr depth = SymExpr::Min(16, 40 - k);
      const uint32_t xk = b.View(x, {i, k}, {rows, depth}, {4, 16});
      const uint32_t wk = b.View(w, {k, 0}, {depth, 12}, {16, 12});
      const uint32_t p = b.Matmul(xk, wk, {4, 12}, pto::v1::DT_FP32, false, false, {16, 32},
                                  {16, 64}, {32, 64});
      b.SetShape(p, {rows, 12});
      const uint32_t acc = b.View(inner[0], {i, 0}, {rows, 12}, {4, 12});
      return std::vector<uint32_t>{
          b.Assemble(b.Op("add", {acc, p}, {4, 12}), inner[0], {i, 0}, {4, 12})};
    });
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

TEST(FuzzTest, MatmulRegionSeedIsValid) {
  absl::Status s = Lower(MatmulRegionSeed());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzTest, ByteMutationsOfLoopMatmulsNeverCrash) {
  ExpectByteMutationsLowerCleanly(MatmulRegionSeed(), 8765, 2000);
}

// Scalar operands over symbols: outside a loop x * n and clip to
// [-n, n + 1]; in a loop body muls by the index and divs by n - i.
pto::v1::Graph ScalarSeed() {
  GraphBuilder b("fuzz_scalars");
  const SymExpr n = SymExpr::Symbol("n"), i = SymExpr::Symbol("i");
  uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {n, 8});
  uint32_t y = b.ScalarOp("muls", {x}, {4, 8}, {{"scalar", n}});
  uint32_t out = b.ScalarOp("clip", {y}, {4, 8}, {{"min", -n}, {"max", n + 1}});
  auto outs = b.Loop("i", 0, n, 1, {out}, [&](const std::vector<uint32_t>& args) {
    const uint32_t v = b.View(x, {i, 0}, {1, 8}, {1, 8});
    const uint32_t s = b.ScalarOp("muls", {v}, {1, 8}, {{"scalar", i}});
    const uint32_t d = b.ScalarOp("divs", {s}, {1, 8}, {{"scalar", n - i}});
    return std::vector<uint32_t>{b.Assemble(d, args[0], {i, 0}, {1, 8})};
  });
  b.Output("out", outs[0]);
  return b.Build();
}

TEST(FuzzTest, ScalarSeedIsValid) {
  absl::Status s = Lower(ScalarSeed());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzTest, ByteMutationsOfScalarOperandsNeverCrash) {
  ExpectByteMutationsLowerCleanly(ScalarSeed(), 5678, 2000);
}

TEST(FuzzTest, FieldMutationsNeverCrash) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 3000; ++iter) {
    pto::v1::Graph g = Seed();
    const int edits = 1 + rng() % 3;
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 9) {
        case 0:
          g.mutable_ops(rng() % g.ops_size())->set_inputs(0, rng() % 12);
          break;
        case 1:
          g.mutable_ops(rng() % g.ops_size())->set_outputs(0, rng() % 12);
          break;
        case 2: {
          auto* dims = g.mutable_ops(rng() % g.ops_size())->mutable_vec_tile();
          dims->set_dims(rng() % dims->dims_size(),
                         static_cast<int64_t>(rng() % 20) - 3);
          break;
        }
        case 3: {
          auto* v = g.mutable_values(rng() % g.values_size());
          v->mutable_shape()->mutable_dims(rng() % 2)->set_size(
              static_cast<int64_t>(rng() % 12) - 1);
          break;
        }
        case 4:
          g.mutable_values(rng() % g.values_size())
              ->set_dtype(static_cast<pto::v1::DataType>(rng() % 12));
          break;
        case 5:
          g.mutable_params(rng() % g.params_size())
              ->set_role(static_cast<pto::v1::ParamRole>(rng() % 5));
          break;
        case 6:
          g.mutable_params(rng() % g.params_size())->set_value_id(rng() % 12);
          break;
        case 7: {
          static const char* kinds[] = {"add", "exp", "adds", "copy", "x", ""};
          g.mutable_ops(rng() % g.ops_size())->set_kind(kinds[rng() % 6]);
          break;
        }
        case 8:
          g.mutable_ops()->SwapElements(rng() % g.ops_size(),
                                        rng() % g.ops_size());
          break;
      }
    }
    ExpectCleanStatus(Lower(g), g.ShortDebugString());
  }
}

}  // namespace
}  // namespace pto::compiler
