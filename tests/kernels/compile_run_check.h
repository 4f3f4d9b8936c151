// Test support for the kernel tests: compile a graph, run it and compare it
// with the reference evaluator. Build the graphs with
// compiler/testing/graph_builder.h.
#ifndef PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_
#define PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_

#include <string>

#include "client/ptoc/check.h"
#include "pto/v1/graph.pb.h"

namespace pto::testing {

// Compiles `graph` for `target` (default: this machine's host target),
// loads it, and runs it `seeds` times on random inputs in [-4, 4], each
// compared with the reference evaluator (gtest failures name the graph and
// seed) within `tolerance` (null: the default, ptoc::DefaultTolerance).
void CompileRunAndCheck(const pto::v1::Graph& graph, int seeds,
                        const ptoc::Tolerance* tolerance = nullptr,
                        const std::string& target = "host");

}  // namespace pto::testing

#endif  // PTO_TESTS_KERNELS_COMPILE_RUN_CHECK_H_
