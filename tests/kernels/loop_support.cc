#include "tests/kernels/loop_support.h"

#include <utility>

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "gtest/gtest.h"

namespace pto::testing {

std::unique_ptr<runtime::Kernel> CompileOverBs(const GraphOf& make) {
  auto compiled = compiler::Compile(make(kBs), "host", {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return nullptr;
  auto kernel = runtime::Kernel::Load(compiled->binary);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? *std::move(kernel) : nullptr;
}

void RunSizes(const GraphOf& make, const runtime::Kernel& kernel,
              const std::vector<int64_t>& sizes) {
  for (int64_t n : sizes) {
    ptoc::CheckOptions options;
    options.seed = static_cast<uint64_t>(n);
    auto report = ptoc::RunAndCheck(make(compiler::SymExpr(n)), kernel, options);
    ASSERT_TRUE(report.ok()) << "bs " << n << ": " << report.status();
    EXPECT_TRUE(report->pass()) << "bs " << n << "\n" << report->Summary();
  }
}

void CompileAndRunSizes(const GraphOf& make, const std::vector<int64_t>& sizes) {
  auto kernel = CompileOverBs(make);
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
