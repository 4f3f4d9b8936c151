// Golden files: a test's text output compared with a file checked in beside
// it. To regenerate after an intended change, point PTO_UPDATE_GOLDENS at the
// folder and run the test (it writes instead of comparing):
//
//   PTO_UPDATE_GOLDENS=$PWD/compiler/testdata bazel test //compiler:golden_test --test_env=PTO_UPDATE_GOLDENS
#ifndef PTO_COMPILER_TESTING_GOLDEN_H_
#define PTO_COMPILER_TESTING_GOLDEN_H_

#include <string>

namespace pto::compiler::testing {

// Expects `actual` to equal the file `dir`/`name` (dir relative to the
// workspace root, as tests run), or writes it to $PTO_UPDATE_GOLDENS/`name`.
void CheckGolden(const std::string& dir, const std::string& name, const std::string& actual);

}  // namespace pto::compiler::testing

#endif  // PTO_COMPILER_TESTING_GOLDEN_H_
