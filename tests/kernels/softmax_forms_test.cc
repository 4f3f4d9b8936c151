// One softmax, every form host codegen gives it, the same bits: pypto's
// FP32 softmax y = e * (1 / sum(e)), e = exp(x - max(x)) over the last dim,
// compiled at tile shapes that run it one row at a time (TSoftmaxRow, or
// TSubExpSumRow<C, true> where e is an output too), a whole tile at a time
// (x both read and written: TRedMax, TSubRows, TExpSoftmax, ...), from
// per-tile partials of a row spanning several tiles (max and sum per tile,
// combined, then x - m and exp per tile), and over a symbolic row (within
// its cap the row code with a run-time length, past it the accumulating
// form). The lowering proves each exp's input is x - max(x) (TEXPSOFTMAX),
// so every form takes softmax's exp (pto_tile.h Exp16Softmax at
// x86-64-v4, on the tail of a row and on short rows too): e has the same
// bits in every form, and y in every form whose row sum runs in the same
// order (all but the partials, whose per-tile sums are combined). Checked
// at x86-64-v3 and, where the CPU has AVX-512, at x86-64-v4, with rows
// holding a NaN, +inf, -inf, only -inf and signed zeros, and rows spread
// over [-8, 8], [-60, 60] and [-120, 120] (x - max down to -240: exp's
// subnormal results and zeros). Every form's y and e are also compared with
// the double reference, within its error bound (client/ptoc/check.h).
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/host_target.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using pto::v1::DT_FP32;

// The softmax of x [rows, cols] in `tile`s: y into "out" (inout: back into
// x), and with `with_e` e as the output "e".
pto::v1::Graph Softmax(int64_t rows, int64_t cols, const std::vector<int64_t>& tile, bool inout,
                       bool with_e) {
  GraphBuilder b(absl::StrCat("softmax_", rows, "x", cols, "_", tile[0], "x", tile[1],
                              inout ? "_inout" : "", with_e ? "_e" : ""));
  const std::vector<int64_t> shape = {rows, cols};
  const uint32_t x = inout ? b.InOut("x", DT_FP32, shape) : b.Input("x", DT_FP32, shape);
  const uint32_t m = b.Op("amax", {x}, tile);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, tile)}, tile);
  const uint32_t r = b.Op("reciprocal", {b.Op("sum", {e}, tile)}, tile);
  const uint32_t y = b.Op("mul", {e, r}, tile);
  b.Output(inout ? "x" : "out", y);
  if (with_e) b.Output("e", e);
  return b.graph();
}

// Random values, row r in [-s, s] with s = 8, 60, 120 for r % 3 = 0, 1,
// 2; row 0 holds a NaN, row 1 +inf, row 2 only -inf and the last row a
// -inf and signed zeros.
std::vector<float> Values(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const float spread[] = {8.0f, 60.0f, 120.0f};
  std::vector<float> x(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) x[i] = spread[(i / cols) % 3] * dist(rng);
  const float inf = __builtin_inff();
  x[1] = __builtin_nanf("");
  x[cols + 2] = inf;
  for (int64_t k = 0; k < cols; ++k) x[2 * cols + k] = -inf;
  const int64_t last = (rows - 1) * cols;
  x[last + cols / 2] = -inf;
  x[last + cols - 1] = -0.0f;
  x[last + cols - 2] = 0.0f;
  return x;
}

// y and e (e empty without it) of `kernel` (built by Softmax) on x; the
// outputs start as `fill`, so a value left unwritten shows.
struct Result {
  std::vector<float> y, e;
};
Result RunSoftmax(const runtime::Kernel& kernel, const std::vector<float>& x, int64_t rows, int64_t cols,
           bool inout, bool with_e, float fill) {
  Result r;
  std::vector<float> in = x;
  r.y.assign(x.size(), fill);
  if (with_e) r.e.assign(x.size(), fill);
  std::vector<runtime::TensorArg> args = {{in.data(), DT_FP32, {rows, cols}}};
  if (!inout) args.push_back({r.y.data(), DT_FP32, {rows, cols}});
  if (with_e) args.push_back({r.e.data(), DT_FP32, {rows, cols}});
  const absl::Status s = kernel.Run(args);
  EXPECT_TRUE(s.ok()) << s;
  if (inout) r.y = in;
  return r;
}

// y and e of a kernel built by Softmax(rows, cols, ..., inout, with_e)
// against the double reference on x.
void ExpectReference(const pto::v1::Graph& graph, const std::vector<float>& x, const Result& r,
                     bool inout, bool with_e, const std::string& label) {
  std::vector<std::vector<float>> before = {x}, after = {inout ? r.y : x};
  if (!inout) {
    before.push_back(r.y);
    after.push_back(r.y);
  }
  if (with_e) {
    before.push_back(r.e);
    after.push_back(r.e);
  }
  ExpectFp32MatchesReference(graph, before, after, label);
}

// How many values differ (bits, or NaN against a number; NaNs agree).
int Differ(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return -1;
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool na = a[i] != a[i], nb = b[i] != b[i];
    n += na || nb ? na != nb : std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  }
  return n;
}

struct Case {
  int64_t rows, cols;
  std::vector<int64_t> row_tile;   // spans the row: one row at a time, or a whole tile
  std::vector<int64_t> part_tile;  // narrower, not widened: partials ({} none)
};
// 62 groups of 16 and a tail of 8; a row shorter than two groups; 16
// groups (TSoftmaxRow's row in registers with AVX-512F); 256 groups, a row
// of partials of 1024.
const Case kCases[] = {{6, 1000, {4, 1000}, {8, 256}},
                       {3, 24, {2, 24}, {}},
                       {5, 256, {4, 256}, {}},
                       {4, 4096, {1, 4096}, {2, 1024}}};

TEST(SoftmaxFormsTest, EveryTileShapeGivesTheRowFormsBits) {
  int ran = 0;
  for (const char* target : {"host-x86_64-v3", runtime::kHostV4Target}) {
    if (!runtime::CanRunHostTarget(target)) continue;  // (v4: a CPU without AVX-512)
    ++ran;
    for (const Case& c : kCases) {
      SCOPED_TRACE(::testing::Message() << target << " " << c.rows << "x" << c.cols);
      const std::vector<float> x = Values(c.rows, c.cols, static_cast<uint32_t>(c.cols));
      // The row forms: TSubExpSumRow<C, true> (e an output), TSoftmaxRow.
      const pto::v1::Graph rows_graph = Softmax(c.rows, c.cols, c.row_tile, false, true);
      const pto::v1::Graph one_call_graph = Softmax(c.rows, c.cols, c.row_tile, false, false);
      const pto::v1::Graph whole_graph = Softmax(c.rows, c.cols, c.row_tile, true, true);
      std::unique_ptr<runtime::Kernel> rows = CompileAndLoad(rows_graph, target);
      std::unique_ptr<runtime::Kernel> one_call = CompileAndLoad(one_call_graph, target);
      std::unique_ptr<runtime::Kernel> whole = CompileAndLoad(whole_graph, target);
      ASSERT_TRUE(rows && one_call && whole);
      const Result want = RunSoftmax(*rows, x, c.rows, c.cols, false, true, 101.0f);
      ExpectReference(rows_graph, x, want, false, true, "one row at a time");
      const Result one = RunSoftmax(*one_call, x, c.rows, c.cols, false, false, 102.0f);
      EXPECT_EQ(Differ(one.y, want.y), 0) << "one TSoftmaxRow call per row";
      ExpectReference(one_call_graph, x, one, false, false, "one TSoftmaxRow call per row");
      const Result w = RunSoftmax(*whole, x, c.rows, c.cols, true, true, 103.0f);
      EXPECT_EQ(Differ(w.e, want.e), 0) << "a whole tile at a time: e";
      EXPECT_EQ(Differ(w.y, want.y), 0) << "a whole tile at a time: y";
      ExpectReference(whole_graph, x, w, true, true, "a whole tile at a time");
      if (!c.part_tile.empty()) {
        const pto::v1::Graph parts_graph = Softmax(c.rows, c.cols, c.part_tile, false, true);
        std::unique_ptr<runtime::Kernel> parts = CompileAndLoad(parts_graph, target);
        ASSERT_TRUE(parts);
        const Result p = RunSoftmax(*parts, x, c.rows, c.cols, false, true, 104.0f);
        EXPECT_EQ(Differ(p.e, want.e), 0) << "per-tile partials: e";
        ExpectReference(parts_graph, x, p, false, true, "per-tile partials");
      }
    }
    // A symbolic row: within the cap (1024 for tiles of 4 rows) the row
    // code with a run-time length, past it the accumulating form.
    constexpr int64_t kSymbolic = 999983;
    std::unique_ptr<runtime::Kernel> dynamic = CompileAndLoad(
        WithSymbols(Softmax(5, kSymbolic, {4, 256}, false, true), {{kSymbolic, "n"}}), target);
    ASSERT_TRUE(dynamic);
    for (int64_t n : {24, 1000, 5000}) {
      SCOPED_TRACE(::testing::Message() << target << " symbolic n " << n);
      const std::vector<float> x = Values(5, n, static_cast<uint32_t>(n) + 1);
      const pto::v1::Graph fixed_graph = Softmax(5, n, {n <= 1024 ? 4 : 1, n}, false, true);
      std::unique_ptr<runtime::Kernel> fixed = CompileAndLoad(fixed_graph, target);
      ASSERT_TRUE(fixed);
      const Result want = RunSoftmax(*fixed, x, 5, n, false, true, 105.0f);
      const Result got = RunSoftmax(*dynamic, x, 5, n, false, true, 106.0f);
      EXPECT_EQ(Differ(got.e, want.e), 0) << "e";
      if (n <= 1024) EXPECT_EQ(Differ(got.y, want.y), 0) << "y";
      // Past the cap the accumulating form sums in another order: y is
      // checked against the reference (as every form's is).
      ExpectReference(fixed_graph, x, want, false, true, "static row");
      ExpectReference(fixed_graph, x, got, false, true, "symbolic row");
    }
  }
  if (ran == 0) GTEST_SKIP() << "this CPU runs neither x86-64-v3 nor v4 code";
}

}  // namespace
}  // namespace pto::testing
