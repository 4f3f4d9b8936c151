// Test support for the kernel tests: compile a graph (built with
// compiler/testing/graph_builder.h), load it into the runtime, run it on
// random inputs and compare every output with the reference evaluator of
// client/ptoc.
//
//   CompileRunAndCheck(b.graph(), /*seeds=*/2);       // a graph of static shapes
//   CompileAndRunSizes(SoftmaxLoop, {1, 7, 64});       // compiled once over "bs"
//
// Failures are gtest failures that name the graph and the seed, or the size.
#ifndef PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_
#define PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/ptoc/check.h"
#include "compiler/ir/sym_expr.h"
#include "pto/v1/graph.pb.h"
#include "pto/v1/kernel.pb.h"
#include "runtime/kernel.h"

namespace pto::testing {

// `graph` compiled for `target` and loaded; nullptr (after a test failure
// naming the graph and the status) when either fails. With the environment
// variable PTO_KERNEL_TEST_TARGET set (e.g. to ascend-a2a3), a kernel for
// "host" is compiled for that target instead, and one it cannot compile
// (UNIMPLEMENTED: an instruction it does not map) skips the test naming the
// instruction (nullptr; CompileRunAndCheck and CompileAndRunSizes then
// return). The *_ascend targets in tests/kernels/BUILD run tests so.
std::unique_ptr<runtime::Kernel> CompileAndLoad(const pto::v1::Graph& graph,
                                                const std::string& target = "host");

// Runs `kernel` once on random inputs for `graph` (drawn as `options` says)
// and expects every output to match the reference, at most half of each
// output's elements undetermined by the bound (unchecked); a failure names
// `label`.
// Returns the report, or nullopt (after a test failure) when the run could
// not be compared at all.
std::optional<ptoc::CheckReport> RunAndExpectMatch(const pto::v1::Graph& graph,
                                                   const runtime::Kernel& kernel,
                                                   const ptoc::CheckOptions& options,
                                                   const std::string& label);

// Compares one run's FP32 results with the reference by its error bound
// (client/ptoc/check.h): `before` holds every parameter's contents before
// the run (the inputs), `after` after it; each OUT/INOUT parameter of
// `after` is compared. A failure names `label` and the parameter.
void ExpectFp32MatchesReference(const pto::v1::Graph& graph,
                                const std::vector<std::vector<float>>& before,
                                const std::vector<std::vector<float>>& after,
                                const std::string& label);

// Inputs at the edges of each op's range: magnitudes log-uniform from 1e-6
// to 100, either sign (exp's and erf/erfc's tails, softmax rows with
// x - max down to -200, tiny and large values side by side).
ptoc::CheckOptions EdgeInputs();

// ---- Graphs of static shapes: one compile, several seeds.

// How CompileRunAndCheck runs a kernel and what it checks.
struct RunChecks {
  int seeds = 1;                // runs with seeds 1..seeds
  ptoc::CheckOptions inputs;    // their range, tolerance, ...; seed replaced
  std::string target = "host";
  int outputs = -1;             // >= 0: how many outputs each run compares,
                                // none of them empty
  bool edges = false;           // then one more run on EdgeInputs()
};

// Compiles `graph` for checks.target, loads it, and runs it checks.seeds
// times, each compared with the reference.
void CompileRunAndCheck(const pto::v1::Graph& graph, const RunChecks& checks);

// The usual form: inputs in [-4, 4] (wider than ptoc's [-2, 2] so that exp
// overflows and log sees negatives sometimes), within `tolerance` (null:
// the reference's error bound, and then one more run on EdgeInputs()).
void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance = nullptr,
                        const std::string& target = "host");

// ---- Graphs over symbols: one compile, several sizes.

// `graph` with every static dim whose size is a key of `symbols` made that
// symbol: a graph built at sentinel sizes (primes no real dim has, such as
// 999983) becomes the graph over those symbols.
pto::v1::Graph WithSymbols(pto::v1::Graph graph,
                           const std::map<int64_t, std::string>& symbols);


// A graph builder over the batch size: the symbol "bs" (kBs) for the
// compiled graph, a constant for the reference at that size.
using GraphOf = std::function<pto::v1::Graph(const compiler::SymExpr& bs)>;

inline const compiler::SymExpr kBs = compiler::SymExpr::Symbol("bs");

// make(kBs) compiled for the host and loaded (CompileAndLoad).
std::unique_ptr<runtime::Kernel> CompileOverBs(const GraphOf& make);

// Runs `kernel` at each size (seed = size) and checks it against the
// reference on make(size).
void RunSizes(const GraphOf& make, const runtime::Kernel& kernel,
              const std::vector<int64_t>& sizes);

// CompileOverBs, then RunSizes.
void CompileAndRunSizes(const GraphOf& make, const std::vector<int64_t>& sizes);

// ---- The tasks of a loop.

// The iteration of task t when every iteration has `per` tasks.
inline int IterationOf(int t, int per) { return t / per; }

// In `g`, expanded for n iterations with the same number of tasks each,
// every iteration after the first has a task that waits for a task of the
// iteration before it (a carried value chains them).
void ExpectIterationsChain(const pto::v1::ExecuteGraph& g, int n);

}  // namespace pto::testing

#endif  // PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_
