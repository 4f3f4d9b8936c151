// Tests of the Ascend CPU-simulation build find the PTO-ISA headers here:
// $PTO_ISA_ROOT when set, else ../shared/third_party/pto-isa beside the
// repository the test's data file `data_file` (a runfiles path, e.g.
// "examples/graphs/add_exp.pbtxt") resolves into; found there, it sets
// PTO_ISA_ROOT for the compiler (ascend_backend.h PtoIsaInclude).
//
//   if (std::string why = UsePtoIsaForTests("..."); !why.empty()) GTEST_SKIP() << why;
#ifndef PTO_COMPILER_TARGETS_ASCEND_TESTING_PTO_ISA_FOR_TESTS_H_
#define PTO_COMPILER_TARGETS_ASCEND_TESTING_PTO_ISA_FOR_TESTS_H_

#include <string>

namespace pto::compiler::testing {

// Empty when the headers are found, else why not and what to install.
std::string UsePtoIsaForTests(const std::string& data_file);

}  // namespace pto::compiler::testing

#endif  // PTO_COMPILER_TARGETS_ASCEND_TESTING_PTO_ISA_FOR_TESTS_H_
