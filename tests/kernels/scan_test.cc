// End to end: the scan instructions (TCUMSUM, TCUMPROD with TREDLAST's
// carry) through compiled kernels against the reference evaluator, which
// runs torch's loop over torch's accumulator: along the last dim and along
// dim 0, with tiles that split the scanned dim (each seeded by the one
// before) and tail tiles in both dims; FP32 (a DOUBLE running value), FP16
// (FP32), DOUBLE and INT64; and a dynamic batch and scanned dim, compiled
// once and run at several sizes.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/kernels/compile_run_check.h"

namespace pto {
namespace {

using Builder = compiler::testing::GraphBuilder;
constexpr int kSeeds = 2;

// `kind` of x along `dim` (the result inferred with the last dim; the same
// shape).
uint32_t Scan(Builder& b, const std::string& kind, uint32_t x, int64_t dim,
              const std::vector<int64_t>& tile) {
  const uint32_t out = b.Op(kind, {x}, tile);
  pto::v1::Graph& g = b.graph();
  (*g.mutable_ops(g.ops_size() - 1)->mutable_attrs())["dim"].set_i(dim);
  return out;
}

TEST(ScanTest, CumsumAndCumprodAlongEitherDimWithTails) {
  for (pto::v1::DataType t :
       {pto::v1::DT_FP32, pto::v1::DT_FP16, pto::v1::DT_DOUBLE, pto::v1::DT_INT64}) {
    Builder b(absl::StrCat("scan_", pto::v1::DataType_Name(t)));
    const uint32_t x = b.Input("x", t, {37, 300});
    b.Output("rows", Scan(b, "cumsum", x, -1, {8, 64}));
    b.Output("columns", Scan(b, "cumsum", x, 0, {8, 64}));
    b.Output("row_products", Scan(b, "cumprod", x, 1, {8, 64}));
    b.Output("column_products", Scan(b, "cumprod", x, 0, {16, 32}));
    testing::CompileRunAndCheck(b.graph(), kSeeds);
  }
}

TEST(ScanTest, OfATransposedInput) {
  Builder b("scan_transposed");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {40, 9});
  const uint32_t xt = b.Layout("transpose", {x}, {8, 16}, {}, {{"dim0", 0}, {"dim1", 1}});
  b.Output("sums", Scan(b, "cumsum", xt, -1, {8, 16}));
  testing::CompileRunAndCheck(b.graph(), kSeeds);
}

// The batch and the scanned dim symbolic ("bs", "n"): one compile, run at
// sizes with one tile, several tiles and tails along each.
constexpr int64_t kRows = 999983, kLength = 999979;

pto::v1::Graph Dynamic(int64_t rows, int64_t length) {
  Builder b("scan_dynamic");
  const uint32_t x = b.Input("x", pto::v1::DT_FP32, {rows, length});
  b.Output("rows", Scan(b, "cumsum", x, 1, {4, 32}));
  b.Output("columns", Scan(b, "cumprod", x, 0, {4, 32}));
  return b.graph();
}

TEST(ScanTest, DynamicBatchAndScannedDimCompileOnce) {
  std::unique_ptr<runtime::Kernel> kernel = testing::CompileAndLoad(
      testing::WithSymbols(Dynamic(kRows, kLength), {{kRows, "bs"}, {kLength, "n"}}));
  ASSERT_NE(kernel, nullptr);
  for (const auto& [rows, length] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 32}, {4, 33}, {9, 100}, {17, 257}}) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(rows * 1000 + length);
    testing::RunAndExpectMatch(Dynamic(rows, length), *kernel, options,
                               absl::StrCat("[", rows, ", ", length, "]"));
  }
}

}  // namespace
}  // namespace pto
