// Test support for the loop kernel tests (loop_test, loop_matmul_test):
// kernels compiled once over the symbol "bs" and run at several sizes
// against the reference evaluator, and a check on their expanded tasks.
#ifndef PTO_TESTS_KERNELS_LOOP_SUPPORT_H_
#define PTO_TESTS_KERNELS_LOOP_SUPPORT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "compiler/ir/sym_expr.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/kernel.h"

namespace pto::testing {

// A graph builder over the batch size: the symbol "bs" (kBs) for the
// compiled graph, a constant for the reference at that size.
using GraphOf = std::function<pto::v1::Graph(const compiler::SymExpr& bs)>;

inline const compiler::SymExpr kBs = compiler::SymExpr::Symbol("bs");

// make(kBs) compiled for the host and loaded; nullptr (after a test
// failure naming the status) when either fails.
std::unique_ptr<runtime::Kernel> CompileOverBs(const GraphOf& make);

// Runs `kernel` at each size (seed = size) and checks it against the
// reference on make(size).
void RunSizes(const GraphOf& make, const runtime::Kernel& kernel,
              const std::vector<int64_t>& sizes);

// CompileOverBs, then RunSizes.
void CompileAndRunSizes(const GraphOf& make, const std::vector<int64_t>& sizes);

// The iteration of task t when every iteration has `per` tasks.
inline int IterationOf(int t, int per) { return t / per; }

// In `g`, expanded for n iterations with the same number of tasks each,
// every iteration after the first has a task that waits for a task of the
// iteration before it (a carried value chains them).
void ExpectIterationsChain(const pto::v1::ExecuteGraph& g, int n);

}  // namespace pto::testing

#endif  // PTO_TESTS_KERNELS_LOOP_SUPPORT_H_
