#include "tests/kernels/compile_run_check.h"

#include "client/ptoc/check.h"
#include "compiler/compile.h"
#include "gtest/gtest.h"
#include "runtime/kernel.h"

namespace pto::testing {

void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance, const std::string& target) {
  auto compiled = compiler::Compile(graph, target, {});
  ASSERT_TRUE(compiled.ok()) << graph.name() << ": " << compiled.status();
  auto kernel = runtime::Kernel::Load(compiled->binary);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  for (int seed = 1; seed <= seeds; ++seed) {
    ptoc::CheckOptions options;
    options.seed = seed;
    // Wider than [-2, 2] so exp overflows and log sees negatives sometimes.
    options.low = -4;
    options.high = 4;
    options.tolerance = tolerance;
    auto report = ptoc::RunAndCheck(graph, **kernel, options);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_TRUE(report->pass()) << graph.name() << " seed " << seed << "\n"
                                << report->Summary();
  }
}

}  // namespace pto::testing
