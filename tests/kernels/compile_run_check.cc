#include "tests/kernels/compile_run_check.h"

#include <map>
#include <optional>
#include <utility>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/compile.h"
#include "compiler/targets/ascend/testing/pto_isa_for_tests.h"
#include "gtest/gtest.h"

namespace pto::testing {
namespace {

// PTO_KERNEL_TEST_TARGET (e.g. ascend-a2a3): the target that kernels
// compiled for "host" are compiled for instead; unset or empty: "host".
std::string TargetFor(const std::string& target) {
  const char* env = std::getenv("PTO_KERNEL_TEST_TARGET");
  if (target != "host" || env == nullptr || *env == '\0') return target;
  // An Ascend CPU-simulation build needs the PTO-ISA headers; without them
  // its compile says which variable to set.
  compiler::testing::UsePtoIsaForTests("examples/graphs/add_exp.pbtxt");
  return env;
}

}  // namespace

std::unique_ptr<runtime::Kernel> CompileAndLoad(const pto::v1::Graph& graph,
                                                const std::string& target) {
  const std::string chosen = TargetFor(target);
  auto compiled = compiler::Compile(graph, chosen, {});
  if (chosen != target && absl::IsUnimplemented(compiled.status())) {
    // The other target lacks an instruction this kernel needs: skipped, named.
    [&] { GTEST_SKIP() << graph.name() << " on " << chosen << ": " << compiled.status().message(); }();
    return nullptr;
  }
  EXPECT_TRUE(compiled.ok()) << graph.name() << ": " << compiled.status();
  if (!compiled.ok()) return nullptr;
  auto kernel = runtime::Kernel::Load(compiled->binary);
  EXPECT_TRUE(kernel.ok()) << graph.name() << ": " << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

std::optional<ptoc::CheckReport> RunAndExpectMatch(const pto::v1::Graph& graph,
                                                   const runtime::Kernel& kernel,
                                                   const ptoc::CheckOptions& options,
                                                   const std::string& label) {
  auto report = ptoc::RunAndCheck(graph, kernel, options);
  EXPECT_TRUE(report.ok()) << label << ": " << report.status();
  if (!report.ok()) return std::nullopt;
  EXPECT_TRUE(report->pass()) << label << "\n" << report->Summary();
  // A check that leaves most of an output undetermined checks little.
  for (const ptoc::Comparison& c : report->outputs) {
    EXPECT_LE(2 * c.unchecked, c.count) << label << ": " << c.name << " mostly unchecked\n"
                                        << report->Summary();
  }
  return *std::move(report);
}

void CompileRunAndCheck(const pto::v1::Graph& graph, const RunChecks& checks) {
  auto kernel = CompileAndLoad(graph, checks.target);
  if (kernel == nullptr && ::testing::Test::IsSkipped()) return;
  ASSERT_NE(kernel, nullptr);
  for (int seed = 1; seed <= checks.seeds; ++seed) {
    ptoc::CheckOptions options = checks.inputs;
    options.seed = static_cast<uint64_t>(seed);
    const std::string label = absl::StrCat(graph.name(), " seed ", seed);
    auto report = RunAndExpectMatch(graph, *kernel, options, label);
    if (!report) return;
    if (checks.outputs >= 0) {
      ASSERT_EQ(static_cast<int>(report->outputs.size()), checks.outputs) << label;
      for (const ptoc::Comparison& c : report->outputs) EXPECT_GT(c.count, 0) << c.name;
    }
  }
  if (checks.edges) {
    ptoc::CheckOptions options = EdgeInputs();
    options.seed = 1;
    RunAndExpectMatch(graph, *kernel, options, absl::StrCat(graph.name(), " edge inputs"));
  }
}

void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance, const std::string& target) {
  RunChecks checks;
  checks.seeds = seeds;
  checks.inputs.low = -4;
  checks.inputs.high = 4;
  checks.inputs.tolerance = tolerance;
  checks.target = target;
  checks.edges = tolerance == nullptr;
  CompileRunAndCheck(graph, checks);
}

ptoc::CheckOptions EdgeInputs() {
  ptoc::CheckOptions options;
  options.draw = ptoc::InputDraw::kMixedScales;
  options.low = -100;
  options.high = 100;
  options.min_magnitude = 1e-6;
  return options;
}

void ExpectFp32MatchesReference(const pto::v1::Graph& graph,
                                const std::vector<std::vector<float>>& before,
                                const std::vector<std::vector<float>>& after,
                                const std::string& label) {
  ASSERT_EQ(before.size(), static_cast<size_t>(graph.params_size())) << label;
  ASSERT_EQ(after.size(), before.size()) << label;
  std::map<uint32_t, const pto::v1::Value*> declared;
  for (const pto::v1::Value& v : graph.values()) declared[v.id()] = &v;
  std::vector<reference::RefTensor> inputs;
  std::vector<std::vector<int64_t>> shapes;
  for (int p = 0; p < graph.params_size(); ++p) {
    auto shape = reference::StaticShape(declared.at(graph.params(p).value_id())->shape());
    ASSERT_TRUE(shape.ok()) << label << ": " << shape.status();
    shapes.push_back(*shape);
    inputs.push_back(reference::RefTensor{pto::v1::DT_FP32, *shape,
                                     std::vector<double>(before[p].begin(), before[p].end()), {}});
  }
  auto reference = reference::EvaluateReference(graph, inputs);
  ASSERT_TRUE(reference.ok()) << label << ": " << reference.status();
  for (int p = 0; p < graph.params_size(); ++p) {
    if (graph.params(p).role() == pto::v1::PARAM_ROLE_IN) continue;
    auto got = ptoc::HostTensor::Create(pto::v1::DT_FP32, shapes[p]);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(after[p].size(), static_cast<size_t>(got->size())) << label;
    for (int64_t i = 0; i < got->size(); ++i) got->Set(i, after[p][i]);
    const ptoc::Comparison c = ptoc::Compare(graph.params(p).name(), *got, (*reference)[p]);
    EXPECT_TRUE(c.ok()) << label << ": " << graph.params(p).name() << ": " << c.mismatches
                        << " mismatches, first " << c.first_mismatch;
  }
}

pto::v1::Graph WithSymbols(pto::v1::Graph graph,
                           const std::map<int64_t, std::string>& symbols) {
  for (pto::v1::Value& v : *graph.mutable_values()) {
    for (pto::v1::Dim& d : *v.mutable_shape()->mutable_dims()) {
      if (d.kind_case() != pto::v1::Dim::kSize) continue;
      auto it = symbols.find(d.size());
      if (it != symbols.end()) d.set_symbol(it->second);
    }
  }
  return graph;
}

std::unique_ptr<runtime::Kernel> CompileOverBs(const GraphOf& make) {
  return CompileAndLoad(make(kBs));
}

void RunSizes(const GraphOf& make, const runtime::Kernel& kernel,
              const std::vector<int64_t>& sizes) {
  for (int64_t n : sizes) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(n);
    if (!RunAndExpectMatch(make(compiler::SymExpr(n)), kernel, options,
                           absl::StrCat("bs ", n))) {
      return;
    }
  }
}

void CompileAndRunSizes(const GraphOf& make, const std::vector<int64_t>& sizes) {
  auto kernel = CompileOverBs(make);
  if (kernel == nullptr && ::testing::Test::IsSkipped()) return;
  ASSERT_NE(kernel, nullptr);
  RunSizes(make, *kernel, sizes);
}

void ExpectIterationsChain(const pto::v1::ExecuteGraph& g, int n) {
  ASSERT_EQ(g.tasks_size() % n, 0);
  const int per = g.tasks_size() / n;
  std::vector<bool> waits(n, false);
  for (int t = 0; t < g.tasks_size(); ++t) {
    for (uint32_t d : g.tasks(t).deps()) {
      if (IterationOf(t, per) - IterationOf(static_cast<int>(d), per) == 1) {
        waits[IterationOf(t, per)] = true;
      }
    }
  }
  for (int it = 1; it < n; ++it) EXPECT_TRUE(waits[it]) << "iteration " << it;
}

}  // namespace pto::testing
