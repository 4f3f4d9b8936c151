// FP16/BF16 row groups as pypto writes softmax and rms_norm for them: the
// input cast to FP32, the FP32 expansion, one cast back (client/python/pypto/
// ops.py). Host codegen runs such a group one row at a time (PerRow takes
// the casts; FoldCasts folds them into the row's load and store, and the
// softmax row is one TSoftmaxRow). Its results are the FP32 row code's, rounded once: the same
// graph on FP32 tensors (x widened exactly) gives the same bits once its
// output is rounded to FP16/BF16, and so does the whole-tile form (the same
// graph with x both read and written, an INOUT parameter, keeps that form;
// softmax's exp there is the row form's, TEXPSOFTMAX: pto_tile.h
// Exp16Softmax at x86-64-v4). Each matches the reference evaluator too.
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/ptoc/check.h"
#include "compiler/reference/fp16.h"
#include "compiler/testing/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"
#include "tests/kernels/compile_run_check.h"

namespace pto::testing {
namespace {

using compiler::testing::GraphBuilder;
using compiler::testing::RmsNormOps;
using pto::v1::DataType;
using pto::v1::DT_BF16;
using pto::v1::DT_FP16;
using pto::v1::DT_FP32;

// pypto.softmax on x (already FP32): e * (1 / sum(e)), e = exp(x - max(x)).
uint32_t Softmax(GraphBuilder& b, uint32_t x, const std::vector<int64_t>& t) {
  const uint32_t m = b.Op("amax", {x}, t, -1, true);
  const uint32_t e = b.Op("exp", {b.Op("sub", {x, m}, t)}, t);
  return b.Op("mul", {e, b.Op("reciprocal", {b.Op("sum", {e}, t, -1, true)}, t)}, t);
}

// `kind` ("softmax" or "rms_norm") of an x of `dt`: for FP16/BF16, cast in,
// the FP32 expansion, cast out; for FP32, the expansion alone. inout: the
// result written back into x (the whole-tile form); else into a parameter
// "out" (per row). Parameters: x, [gamma,] [out].
pto::v1::Graph Graph(const std::string& kind, DataType dt, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& tile, bool inout) {
  GraphBuilder b(absl::StrCat(kind, "_", absl::StrJoin(shape, "x"), inout ? "_inout" : ""));
  const uint32_t x = inout ? b.InOut("x", dt, shape) : b.Input("x", dt, shape);
  auto widened = [&](uint32_t v, const std::vector<int64_t>& t) {
    return dt == DT_FP32 ? v : b.Cast(v, DT_FP32, t);
  };
  uint32_t y = 0;
  if (kind == "softmax") {
    y = Softmax(b, widened(x, tile), tile);
  } else {
    const uint32_t gamma = b.Input("gamma", dt, {shape.back()});
    y = RmsNormOps(b, widened(x, tile), widened(gamma, {tile.back()}), shape.back(), tile);
  }
  const uint32_t out = dt == DT_FP32 ? y : b.Cast(y, dt, tile);
  if (inout) {
    b.Output("x", out);
  } else {
    b.Output("out", out);
  }
  return b.graph();
}

float FromBits(DataType dt, uint16_t h) {
  if (dt == DT_FP16) return reference::HalfToFloat(h);
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

// v rounded to nearest even (a NaN to a NaN).
uint16_t ToBits(DataType dt, float v) {
  if (dt == DT_FP16) return reference::DoubleToHalf(v);
  uint32_t w;
  std::memcpy(&w, &v, sizeof w);
  if (v != v) return static_cast<uint16_t>((w >> 16) | 0x40);
  return static_cast<uint16_t>((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}

bool IsNan(DataType dt, uint16_t h) {
  const float v = FromBits(dt, h);
  return v != v;
}

// Random values in [-8, 8], and in a few rows a NaN, an
// infinity, a row of -inf and signed zeros.
std::vector<uint16_t> Values(DataType dt, int64_t count, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  std::vector<uint16_t> v(count);
  for (uint16_t& x : v) x = ToBits(dt, dist(rng));
  const float inf = __builtin_inff();
  v[1] = ToBits(dt, __builtin_nanf(""));
  v[cols + 2] = ToBits(dt, inf);
  for (int64_t k = 0; k < cols && 3 * cols <= count; ++k) v[2 * cols + k] = ToBits(dt, -inf);
  v[count - 1] = ToBits(dt, -0.0f);
  v[count - 2] = ToBits(dt, 0.0f);
  return v;
}

struct Case {
  std::vector<int64_t> shape, tile;
};
// Tiles of several rows (per row), with a tail; rank 3 with rows not
// adjacent in GM.
const Case kCases[] = {{{9, 96}, {4, 96}}, {{3, 5, 40}, {2, 2, 40}}, {{6, 256}, {3, 256}}};

// Runs `kernel` on x (and gamma for rms_norm) of `dt`, `shape`: its output
// (for inout, x's new contents).
std::vector<uint16_t> RunHalf(const runtime::Kernel& kernel, const std::string& kind, DataType dt,
                              const std::vector<int64_t>& shape, std::vector<uint16_t> x,
                              std::vector<uint16_t> gamma, bool inout) {
  std::vector<uint16_t> out(x.size(), 0x1234);
  std::vector<runtime::TensorArg> args = {{x.data(), dt, shape}};
  if (kind == "rms_norm") args.push_back({gamma.data(), dt, {shape.back()}});
  if (!inout) args.push_back({out.data(), dt, shape});
  EXPECT_TRUE(kernel.Run(args).ok());
  return inout ? x : out;
}

// The same through the FP32 graph: x and gamma widened, the output rounded.
std::vector<uint16_t> RunFp32(const runtime::Kernel& kernel, const std::string& kind, DataType dt,
                              const std::vector<int64_t>& shape, const std::vector<uint16_t>& x,
                              const std::vector<uint16_t>& gamma) {
  std::vector<float> x32(x.size()), gamma32(gamma.size()), out(x.size(), -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x32[i] = FromBits(dt, x[i]);
  for (size_t i = 0; i < gamma.size(); ++i) gamma32[i] = FromBits(dt, gamma[i]);
  std::vector<runtime::TensorArg> args = {{x32.data(), DT_FP32, shape}};
  if (kind == "rms_norm") args.push_back({gamma32.data(), DT_FP32, {shape.back()}});
  args.push_back({out.data(), DT_FP32, shape});
  EXPECT_TRUE(kernel.Run(args).ok());
  std::vector<uint16_t> rounded(out.size());
  for (size_t i = 0; i < out.size(); ++i) rounded[i] = ToBits(dt, out[i]);
  return rounded;
}

// How many values differ (bits, or NaN against a number; NaNs agree).
int Differ(DataType dt, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    n += IsNan(dt, a[i]) || IsNan(dt, b[i]) ? IsNan(dt, a[i]) != IsNan(dt, b[i]) : a[i] != b[i];
  }
  return n;
}

TEST(HalfRowsTest, PerRowCastsGiveTheFp32RowsBitsRoundedOnce) {
  for (const char* kind : {"softmax", "rms_norm"}) {
    for (const Case& c : kCases) {
      std::unique_ptr<runtime::Kernel> fp32 = CompileAndLoad(Graph(kind, DT_FP32, c.shape, c.tile, false));
      ASSERT_NE(fp32, nullptr);
      for (DataType dt : {DT_FP16, DT_BF16}) {
        const pto::v1::Graph rows = Graph(kind, dt, c.shape, c.tile, false);
        SCOPED_TRACE(::testing::Message() << rows.name() << (dt == DT_FP16 ? " fp16" : " bf16"));
        std::unique_ptr<runtime::Kernel> per_row = CompileAndLoad(rows);
        if (per_row == nullptr && IsSkipped()) continue;  // a target that does not map this dtype
        ASSERT_NE(per_row, nullptr);
        int64_t count = 1;
        for (int64_t e : c.shape) count *= e;
        const int64_t cols = c.shape.back();
        const std::vector<uint16_t> x = Values(dt, count, cols, static_cast<uint32_t>(count));
        std::vector<uint16_t> gamma = Values(dt, cols, cols, 7);
        gamma[1] = ToBits(dt, 1.5f);  // (no NaN in gamma: every row would be NaN)
        const std::vector<uint16_t> got = RunHalf(*per_row, kind, dt, c.shape, x, gamma, false);
        EXPECT_EQ(Differ(dt, got, RunFp32(*fp32, kind, dt, c.shape, x, gamma)), 0);
        std::unique_ptr<runtime::Kernel> whole = CompileAndLoad(Graph(kind, dt, c.shape, c.tile, true));
        ASSERT_NE(whole, nullptr);
        EXPECT_EQ(Differ(dt, got, RunHalf(*whole, kind, dt, c.shape, x, gamma, true)), 0);
        CompileRunAndCheck(rows, 1);
        // Near the type's limits: magnitudes from FP16's subnormals to
        // 6e4 (BF16: 1e-30 to 1e18, x * x within FP32), mixed.
        RunChecks limits;
        limits.inputs.draw = ptoc::InputDraw::kMixedScales;
        limits.inputs.low = dt == DT_FP16 ? -6e4 : -1e18;
        limits.inputs.high = -limits.inputs.low;
        limits.inputs.min_magnitude = dt == DT_FP16 ? 1e-7 : 1e-30;
        limits.seeds = 2;
        CompileRunAndCheck(rows, limits);
      }
    }
  }
}

}  // namespace
}  // namespace pto::testing
