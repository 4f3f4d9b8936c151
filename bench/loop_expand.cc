// How long the runtime takes to expand a loop kernel's
// program into tasks (ExpandTemplates: template groups per iteration, then
// dependencies by region overlap) as the trip count grows. Two kernels,
// compiled once: a softmax-like loop whose iterations are independent
// (body [1, 40, 16], tile [1, 1, 16]: 40 tasks per iteration) and a running
// sum whose iterations all touch one region (a chain), and the loop
// softmax (8 tasks per iteration after row widening). Near-linear growth
// is the goal: 4096 iterations x 40 tasks in milliseconds.
//
//   bazel run //bench:loop_expand [-- bs...]    (default 256 1024 4096)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compiler/compile.h"
#include "compiler/testing/graph_builder.h"
#include "runtime/template_plans.h"

namespace {

using pto::compiler::SymExpr;
using pto::compiler::testing::GraphBuilder;
using Ids = std::vector<uint32_t>;

pto::v1::Graph Independent() {
  GraphBuilder b("rows");
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol("i");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {bs, 40, 16});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {bs, 40, 16}, "out");
  const std::vector<int64_t> tile = {1, 1, 16};
  Ids outs = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
    const uint32_t x = b.View(in, {i, 0, 0}, {1, 40, 16}, tile);
    const uint32_t y = b.Op("exp", {b.Op("sub", {x, b.Op("amax", {x}, tile)}, tile)}, tile);
    return Ids{b.Assemble(y, args[0], {i, 0, 0}, tile)};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

// The loop softmax: (32, 1, 256) rows per index with the example's tile
// [1, 4, 1, 64], which row widening lowers as one group of 8 tasks per
// iteration (few tasks per group: the per-group costs show).
pto::v1::Graph IssueSoftmax() {
  GraphBuilder b("issue_softmax");
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol("i");
  const uint32_t in = b.SymInput("in", pto::v1::DT_FP32, {bs, 32, 1, 256});
  const uint32_t out = b.SymValue(pto::v1::DT_FP32, {bs, 32, 1, 256}, "out");
  const std::vector<int64_t> tile = {1, 4, 1, 64};
  Ids outs = b.Loop("i", 0, bs, 1, {out}, [&](const Ids& args) {
    const uint32_t x = b.View(in, {i, 0, 0, 0}, {1, 32, 1, 256}, tile);
    const uint32_t e = b.Op("exp", {b.Op("sub", {x, b.Op("amax", {x}, tile)}, tile)}, tile);
    const uint32_t y = b.Op("div", {e, b.Op("sum", {e}, tile)}, tile);
    return Ids{b.Assemble(y, args[0], {i, 0, 0, 0}, tile)};
  });
  b.InOut("out", out, outs[0]);
  return b.Build();
}

pto::v1::Graph Chain() {
  GraphBuilder b("chain");
  const SymExpr bs = SymExpr::Symbol("bs"), i = SymExpr::Symbol("i");
  const uint32_t x = b.SymInput("x", pto::v1::DT_FP32, {bs, 16});
  const uint32_t acc = b.SymValue(pto::v1::DT_FP32, {1, 16}, "acc");
  Ids outs = b.Loop("i", 0, bs, 1, {acc}, [&](const Ids& args) {
    const uint32_t row = b.View(x, {i, 0}, {1, 16}, {1, 16});
    return Ids{b.Assemble(b.Op("add", {args[0], row}, {1, 16}), args[0], {0, 0}, {1, 16})};
  });
  b.InOut("acc", acc, outs[0]);
  return b.Build();
}

void Measure(const char* name, const pto::v1::Graph& graph,
             const std::vector<int64_t>& sizes) {
  auto compiled = pto::compiler::Compile(graph, "host", {});
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, std::string(compiled.status().message()).c_str());
    std::exit(1);
  }
  for (int64_t bs : sizes) {
    const auto start = std::chrono::steady_clock::now();
    auto g = pto::runtime::ExpandTemplates(compiled->binary, {{"bs", bs}});
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start).count();
    if (!g.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, std::string(g.status().message()).c_str());
      std::exit(1);
    }
    int64_t deps = 0;
    for (const auto& t : g->graph.tasks()) deps += t.deps_size();
    std::printf("%-12s bs=%-6lld tasks=%-8d deps=%-8lld expand %.2f ms\n", name,
                static_cast<long long>(bs), g->graph.tasks_size(),
                static_cast<long long>(deps), ms);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {256, 1024, 4096};
  Measure("independent", Independent(), sizes);
  Measure("chain", Chain(), sizes);
  Measure("issue", IssueSoftmax(), sizes);
  return 0;
}
