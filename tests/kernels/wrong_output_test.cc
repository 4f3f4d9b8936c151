// The comparison rejects wrong outputs: softmax, layer norm, rms norm, row
// sums, a matmul and an elementwise chain are compiled and run (their
// outputs must pass the reference's error bound, client/ptoc/check.h), then
// the outputs are deliberately broken (small values zeroed, everything
// scaled by 1.25 or 0.5, the last group of each row zeroed, each row
// rotated by one) and every broken output must fail. Differences of nearly
// equal terms ((a + b).exp() * 2 - a) pass: their bound comes from the
// terms' magnitudes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/ptoc/check.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using pto::v1::DT_FP32;

// ---- Graphs.

pto::v1::Graph Softmax(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("softmax_", rows, "x", cols));
  const std::vector<int64_t> tile = {4, cols};
  const uint32_t x = b.Input("x", DT_FP32, {rows, cols});
  const uint32_t m = b.Op("amax", {x}, tile);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
  const uint32_t r = b.Op("reciprocal", {b.Op("sum", {e}, tile)}, tile);
  b.Output("out", b.Op("mul", {e, r}, tile));
  return b.graph();
}

pto::v1::Graph LayerNorm(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("layer_norm_", rows, "x", cols));
  const std::vector<int64_t> tile = {4, cols}, col = {4, 1};
  const uint32_t x = b.Input("x", DT_FP32, {rows, cols});
  const uint32_t gamma = b.Input("gamma", DT_FP32, {cols});
  const uint32_t beta = b.Input("beta", DT_FP32, {cols});
  const double inv_n = 1.0 / static_cast<double>(cols);
  const uint32_t mean = b.Op("muls", {b.Op("sum", {x}, tile)}, col, inv_n);
  const uint32_t d = b.Op("sub", {x, mean}, tile);
  const uint32_t var = b.Op("muls", {b.Op("sum", {b.Op("mul", {d, d}, tile)}, tile)}, col, inv_n);
  const uint32_t rstd = b.Op("rsqrt", {b.Op("adds", {var}, col, 1e-5)}, col);
  const uint32_t y = b.Op("mul", {b.Op("mul", {d, rstd}, tile), gamma}, tile);
  b.Output("out", b.Op("add", {y, beta}, tile));
  return b.graph();
}

pto::v1::Graph RmsNorm(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("rms_norm_", rows, "x", cols));
  const std::vector<int64_t> tile = {4, cols}, col = {4, 1};
  const uint32_t x = b.Input("x", DT_FP32, {rows, cols});
  const uint32_t gamma = b.Input("gamma", DT_FP32, {cols});
  const double inv_n = 1.0 / static_cast<double>(cols);
  const uint32_t ms = b.Op("muls", {b.Op("sum", {b.Op("mul", {x, x}, tile)}, tile)}, col, inv_n);
  const uint32_t r = b.Op("rsqrt", {b.Op("adds", {ms}, col, 1e-6)}, col);
  b.Output("out", b.Op("mul", {b.Op("mul", {x, r}, tile), gamma}, tile));
  return b.graph();
}

pto::v1::Graph RowSums(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("sum_", rows, "x", cols));
  const uint32_t x = b.Input("x", DT_FP32, {rows, cols});
  b.Output("out", b.Op("sum", {x}, {4, cols}));
  return b.graph();
}

pto::v1::Graph Matmul(int64_t m, int64_t k, int64_t n) {
  GraphBuilder b(absl::StrCat("matmul_", m, "x", k, "x", n));
  const uint32_t x = b.Input("a", DT_FP32, {m, k});
  const uint32_t y = b.Input("b", DT_FP32, {k, n});
  b.Output("out", b.Matmul(x, y, pto::v1::DT_UNSPECIFIED, false, false,
                           {16, 32, 16, 32, 16, 32}));
  return b.graph();
}

// (a + b).exp() * 2 - a: where exp(a + b) * 2 is near a, the result is a
// difference of nearly equal terms.
pto::v1::Graph Cancellation(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("cancellation_", rows, "x", cols));
  const std::vector<int64_t> tile = {8, 64};
  const uint32_t a = b.Input("a", DT_FP32, {rows, cols});
  const uint32_t c = b.Input("b", DT_FP32, {rows, cols});
  const uint32_t e = b.Op("exp", {b.Op("add", {a, c}, tile)}, tile);
  b.Output("out", b.Op("sub", {b.Op("muls", {e}, tile, 2.0), a}, tile));
  return b.graph();
}

// An elementwise chain through the library's math functions.
pto::v1::Graph Chain(int64_t rows, int64_t cols) {
  GraphBuilder b(absl::StrCat("chain_", rows, "x", cols));
  const std::vector<int64_t> tile = {8, 64};
  const uint32_t x = b.Input("x", DT_FP32, {rows, cols});
  const uint32_t y = b.Input("y", DT_FP32, {rows, cols});
  const uint32_t t = b.Op("mul", {b.Op("tanh", {x}, tile), b.Op("erf", {y}, tile)}, tile);
  const uint32_t s = b.Op("div", {b.Op("sigmoid", {t}, tile), b.Op("exp", {y}, tile)}, tile);
  b.Output("out", b.Op("add", {s, b.Op("log", {b.Op("abs", {x}, tile)}, tile)}, tile));
  return b.graph();
}

// ---- Wrong outputs.

using Breaker = std::function<void(ptoc::HostTensor&, const reference::RefTensor&)>;

// Rows: the last dim, or (a column of one value per row) the whole tensor.
int64_t RowLength(const ptoc::HostTensor& t) {
  const int64_t last = t.shape().empty() ? 1 : t.shape().back();
  return last > 1 ? last : t.size();
}

const std::vector<std::pair<std::string, Breaker>>& Breakers() {
  static const auto* breakers = new std::vector<std::pair<std::string, Breaker>>{
      {"small values zeroed",
       [](ptoc::HostTensor& t, const reference::RefTensor& want) {
         // The smallest quarter of the non-zero magnitudes.
         std::vector<double> m;
         for (double w : want.data) if (w != 0) m.push_back(std::fabs(w));
         std::sort(m.begin(), m.end());
         const double below = m[m.size() / 4];
         for (int64_t i = 0; i < t.size(); ++i) {
           if (std::fabs(want.data[i]) <= below) t.Set(i, 0.0);
         }
       }},
      {"scaled by 1.25",
       [](ptoc::HostTensor& t, const reference::RefTensor&) {
         for (int64_t i = 0; i < t.size(); ++i) t.Set(i, t.Get(i) * 1.25);
       }},
      {"scaled by 0.5",
       [](ptoc::HostTensor& t, const reference::RefTensor&) {
         for (int64_t i = 0; i < t.size(); ++i) t.Set(i, t.Get(i) * 0.5);
       }},
      {"last group of 16 of each row zeroed",
       [](ptoc::HostTensor& t, const reference::RefTensor&) {
         const int64_t row = RowLength(t), group = std::min<int64_t>(16, row);
         for (int64_t r = 0; r < t.size() / row; ++r) {
           for (int64_t k = row - group; k < row; ++k) t.Set(r * row + k, 0.0);
         }
       }},
      {"each row rotated by one",
       [](ptoc::HostTensor& t, const reference::RefTensor&) {
         const int64_t row = RowLength(t);
         for (int64_t r = 0; r < t.size() / row; ++r) {
           std::vector<double> v(row);
           for (int64_t k = 0; k < row; ++k) v[k] = t.Get(r * row + k);
           for (int64_t k = 0; k < row; ++k) t.Set(r * row + k, v[(k + 1) % row]);
         }
       }},
  };
  return *breakers;
}

// Compiles and runs `graph` on inputs drawn as `options` says; the real
// output must pass with every element checked, every broken one fail.
void ExpectWrongOutputsRejected(const pto::v1::Graph& graph, const ptoc::CheckOptions& options) {
  SCOPED_TRACE(graph.name());
  std::unique_ptr<runtime::Kernel> kernel = CompileAndLoad(graph);
  ASSERT_NE(kernel, nullptr);
  absl::StatusOr<ptoc::CheckRun> run = ptoc::RunWithReference(graph, *kernel, options);
  ASSERT_TRUE(run.ok()) << run.status();
  const int out = graph.params_size() - 1;  // the one output, last
  ASSERT_EQ(graph.params(out).role(), pto::v1::PARAM_ROLE_OUT);
  const reference::RefTensor& want = run->reference[out];
  const ptoc::Comparison real = ptoc::Compare("out", run->buffers[out], want);
  EXPECT_TRUE(real.ok()) << real.first_mismatch;
  EXPECT_EQ(real.unchecked, 0);
  for (const auto& [what, breaker] : Breakers()) {
    ptoc::HostTensor broken = run->buffers[out];
    breaker(broken, want);
    const ptoc::Comparison c = ptoc::Compare("out", broken, want);
    EXPECT_FALSE(c.ok()) << what << ": accepted, " << c.max_abs_error << " max abs error";
  }
}

ptoc::CheckOptions Range(double low, double high) {
  ptoc::CheckOptions options;
  options.low = low;
  options.high = high;
  return options;
}

TEST(WrongOutputTest, SoftmaxRejectsEveryWrongOutput) {
  ExpectWrongOutputsRejected(Softmax(33, 100), Range(-4, 4));
  ExpectWrongOutputsRejected(Softmax(8, 1000), Range(-4, 4));
  ExpectWrongOutputsRejected(Softmax(6, 1000), Range(-60, 60));  // x - max down to -120
  ExpectWrongOutputsRejected(Softmax(9, 256), Range(-60, 60));  // rows in registers (AVX-512F)
}

TEST(WrongOutputTest, LayerNormRejectsEveryWrongOutput) {
  ExpectWrongOutputsRejected(LayerNorm(33, 100), Range(-4, 4));
  ExpectWrongOutputsRejected(LayerNorm(8, 1000), Range(-4, 4));
}

TEST(WrongOutputTest, RmsNormRejectsEveryWrongOutput) {
  ExpectWrongOutputsRejected(RmsNorm(33, 100), Range(-4, 4));
  ExpectWrongOutputsRejected(RmsNorm(8, 1000), Range(-4, 4));
}

TEST(WrongOutputTest, RowSumsRejectEveryWrongOutput) {
  ExpectWrongOutputsRejected(RowSums(40, 1000), Range(-4, 4));
  ptoc::CheckOptions positive = Range(0.125, 4);
  ExpectWrongOutputsRejected(RowSums(40, 1000), positive);
}

TEST(WrongOutputTest, MatmulRejectsEveryWrongOutput) {
  ExpectWrongOutputsRejected(Matmul(40, 300, 48), Range(-4, 4));
}

TEST(WrongOutputTest, ElementwiseChainRejectsEveryWrongOutput) {
  ExpectWrongOutputsRejected(Chain(16, 200), Range(-4, 4));
  ExpectWrongOutputsRejected(Cancellation(256, 256), Range(-2, 2));
}

// The differences of nearly equal terms pass on random inputs, at every
// seed, and a real error in one element still fails.
TEST(WrongOutputTest, CancellationPassesAndARealErrorFails) {
  const pto::v1::Graph graph = Cancellation(256, 256);
  std::unique_ptr<runtime::Kernel> kernel = CompileAndLoad(graph);
  ASSERT_NE(kernel, nullptr);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ptoc::CheckOptions options = Range(-2, 2);
    options.seed = seed;
    absl::StatusOr<ptoc::CheckRun> run = ptoc::RunWithReference(graph, *kernel, options);
    ASSERT_TRUE(run.ok()) << run.status();
    const reference::RefTensor& want = run->reference[2];
    ptoc::HostTensor& got = run->buffers[2];
    const ptoc::Comparison c = ptoc::Compare("out", got, want);
    EXPECT_TRUE(c.ok()) << "seed " << seed << ": " << c.first_mismatch;
    EXPECT_EQ(c.unchecked, 0);
    // The element nearest 0: 1e-4 of its terms off is outside the bound.
    int64_t at = 0;
    for (int64_t i = 0; i < got.size(); ++i) {
      if (std::fabs(want.data[i]) < std::fabs(want.data[at])) at = i;
    }
    const double term = std::fabs(run->buffers[0].Get(at)) + 2 * std::exp(run->buffers[0].Get(at) +
                                                                          run->buffers[1].Get(at));
    got.Set(at, want.data[at] + 1e-4 * term);
    EXPECT_FALSE(ptoc::Compare("out", got, want).ok()) << "seed " << seed;
  }
}

}  // namespace
}  // namespace pto::testing
