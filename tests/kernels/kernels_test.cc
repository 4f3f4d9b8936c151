// End to end through the compiler and the runtime: every op kind of the first
// issue, FP32 and FP16, ranks 1 to 4 with tail tiles, checked element by
// element against the double-precision reference evaluator.
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using ::pto::compiler::testing::UniformGraphBuilder;
using ::testing::HasSubstr;

struct OpCase {
  const char* kind;
  int arity;                    // tensor inputs
  std::optional<double> scalar;  // for tensor-with-scalar kinds
};

// Every basic op kind. Scalars that are not exact in binary (0.1, 3)
// make sure the kernel rounds like the reference does.
const OpCase kOps[] = {
    {"add", 2, {}},     {"sub", 2, {}},      {"mul", 2, {}},
    {"div", 2, {}},     {"adds", 1, 0.1},    {"subs", 1, 1.25},
    {"muls", 1, -1.5},  {"divs", 1, 3.0},    {"rsubs", 1, 2.5},
    {"rdivs", 1, 1.5},  {"exp", 1, {}},      {"neg", 1, {}},
    {"abs", 1, {}},     {"copy", 1, {}},
};

struct ShapeCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> tile;
};

// Ranks 1 to 4; every one but the last has a tail tile in some dim.
const ShapeCase kShapes[] = {
    {{1000}, {128}},
    {{5}, {8}},  // smaller than one tile
    {{37, 70}, {16, 32}},
    {{3, 17, 45}, {2, 8, 16}},
    {{2, 3, 9, 33}, {1, 2, 4, 16}},
    {{64, 64}, {32, 32}},  // no tails
};

const char* DTypeName(pto::v1::DataType dtype) {
  return dtype == pto::v1::DT_FP16 ? "fp16" : "fp32";
}

std::string ShapeName(const std::vector<int64_t>& dims) {
  return absl::StrJoin(dims, "x");
}

// Two runs (seeds 1 and 2) on inputs in ptoc's default range, each
// comparing all `outputs` outputs of the graph, none of them empty.
testing::RunChecks Checks(int outputs) {
  testing::RunChecks checks;
  checks.seeds = 2;
  checks.outputs = outputs;
  return checks;
}

// One kernel per (dtype, shape) with one output per op kind.
class EveryOpTest : public ::testing::TestWithParam<
                        std::tuple<pto::v1::DataType, ShapeCase>> {};

TEST_P(EveryOpTest, MatchesReference) {
  const auto& [dtype, shape] = GetParam();
  UniformGraphBuilder b(absl::StrCat("every_op_", DTypeName(dtype), "_",
                                     ShapeName(shape.shape)),
                        dtype, shape.shape, shape.tile);
  const uint32_t x = b.Input("x");
  const uint32_t y = b.Input("y");
  for (const OpCase& op : kOps) {
    std::vector<uint32_t> inputs = {x};
    if (op.arity == 2) inputs.push_back(y);
    b.Output(absl::StrCat("out_", op.kind), b.Op(op.kind, inputs, op.scalar));
  }
  testing::CompileRunAndCheck(b.graph(), Checks(static_cast<int>(std::size(kOps))));
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, EveryOpTest,
    ::testing::Combine(::testing::Values(pto::v1::DT_FP32, pto::v1::DT_FP16),
                       ::testing::ValuesIn(kShapes)),
    [](const auto& info) {
      return absl::StrCat(DTypeName(std::get<0>(info.param)), "_",
                          ShapeName(std::get<1>(info.param).shape));
    });

// A chain of ops: intermediates are not parameters, so they live in
// workspaces (or stay in tiles) between blocks.
pto::v1::Graph Chain(pto::v1::DataType dtype) {
  UniformGraphBuilder b(absl::StrCat("chain_", DTypeName(dtype)), dtype,
                        {45, 77}, {16, 32});
  const uint32_t x = b.Input("x");
  const uint32_t y = b.Input("y");
  const uint32_t sum = b.Op("add", {x, y});
  const uint32_t half = b.Op("muls", {sum}, 0.5);
  const uint32_t e = b.Op("exp", {half});
  const uint32_t prod = b.Op("mul", {e, y});
  const uint32_t mag = b.Op("abs", {prod});
  b.Output("out", b.Op("divs", {mag}, 3.0));
  b.Output("neg_sum", b.Op("neg", {sum}));  // a second use of `sum`
  return b.graph();
}

TEST(ChainTest, Fp32) { testing::CompileRunAndCheck(Chain(pto::v1::DT_FP32), Checks(2)); }
TEST(ChainTest, Fp16) { testing::CompileRunAndCheck(Chain(pto::v1::DT_FP16), Checks(2)); }

// Ops with different tile shapes cannot share a block: the intermediate goes
// through a workspace buffer between two groups of tasks.
pto::v1::Graph TwoTilings(pto::v1::DataType dtype, const char* last) {
  UniformGraphBuilder b(absl::StrCat("two_tilings_", DTypeName(dtype)), dtype,
                        {40, 70}, {16, 32});
  const uint32_t x = b.Input("x");
  const uint32_t y = b.Input("y");
  const uint32_t scaled = b.Op("muls", {x}, 0.3);
  b.SetTile({8, 64});
  const uint32_t e = b.Op("exp", {scaled});
  b.Output("out", b.Op(last, {e, y}));
  return b.graph();
}

TEST(WorkspaceChainTest, Fp32) {
  const pto::v1::Graph graph = TwoTilings(pto::v1::DT_FP32, "mul");
  auto compiled = compiler::Compile(graph, "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto& buffers = compiled->binary.execute_graph().buffers();
  ASSERT_GT(buffers.size(), 3) << "expected a workspace for the intermediate";
  EXPECT_GT(buffers[3].workspace_bytes(), 0);
  testing::CompileRunAndCheck(graph, Checks(1));
}

// FP16 results are rounded per op, inside a block as through a workspace, so
// tile shapes never change results (PYPTO_API: they "change speed, never
// results"). `sub` cancels, which would show a difference of several ulps.
TEST(WorkspaceChainTest, Fp16) {
  testing::CompileRunAndCheck(TwoTilings(pto::v1::DT_FP16, "sub"), Checks(1));
}

// An INOUT parameter read and then written in place, rank 3 with tails.
TEST(InOutTest, UpdatesInPlace) {
  for (auto dtype : {pto::v1::DT_FP32, pto::v1::DT_FP16}) {
    UniformGraphBuilder b(absl::StrCat("inout_", DTypeName(dtype)), dtype,
                          {3, 20, 50}, {2, 8, 32});
    const uint32_t acc = b.InOut("acc");
    const uint32_t x = b.Input("x");
    b.Output("acc", b.Op("add", {b.Op("exp", {x}), b.Op("abs", {acc})}));
    testing::CompileRunAndCheck(b.graph(), Checks(1));
  }
}

// Thousands of tiles, run from several threads at once with their own data:
// the executor's pools are shared, every run must still be exact.
TEST(ManyTilesTest, ConcurrentRunsOfALargeKernel) {
  UniformGraphBuilder b("many_tiles", pto::v1::DT_FP32, {256, 500}, {8, 8});
  const uint32_t x = b.Input("x");
  const uint32_t y = b.Input("y");
  b.Output("out", b.Op("add", {b.Op("muls", {x}, 0.5), y}));
  auto compiled = compiler::Compile(b.graph(), "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_GE(compiled->binary.execute_graph().tasks_size(), 32 * 63);
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 3 && failures[t].empty(); ++iter) {
        ptoc::CheckOptions options;
        options.seed = 100 * t + iter;
        auto report = ptoc::RunAndCheck(b.graph(), **kernel, options);
        if (!report.ok()) {
          failures[t] = report.status().ToString();
        } else if (!report->pass()) {
          failures[t] = report->Summary();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) EXPECT_EQ(f, "");
}

TEST(TamperTest, RuntimeRefusesAFlippedPayloadByte) {
  const pto::v1::Graph graph = Chain(pto::v1::DT_FP32);
  auto compiled = compiler::Compile(graph, "host", {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(runtime::Kernel::Load(compiled->binary).ok());

  pto::v1::KernelBinary tampered = compiled->binary;
  std::string* payload = tampered.mutable_native_payload();
  ASSERT_FALSE(payload->empty());
  (*payload)[payload->size() / 3] ^= 0x10;
  auto refused = runtime::Kernel::Load(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("kernel binary refused: payload checksum mismatch"));

  tampered = compiled->binary;
  tampered.set_target("cuda-sm90");
  refused = runtime::Kernel::Load(tampered);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("target 'cuda-sm90'"));
}

}  // namespace
}  // namespace pto
