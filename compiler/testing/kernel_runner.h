// Test helper: loads a KernelBinary's native payload with dlopen and runs its
// tasks one by one in order (a serial stand-in for the runtime).
#ifndef PTO_COMPILER_TESTING_KERNEL_RUNNER_H_
#define PTO_COMPILER_TESTING_KERNEL_RUNNER_H_

#include <vector>

#include "absl/status/status.h"
#include "pto/v1/kernel.pb.h"

namespace pto::compiler::testing {

// `params` holds one pointer per kernel parameter; workspaces are allocated
// here.
absl::Status RunSerially(const pto::v1::KernelBinary& binary,
                         const std::vector<void*>& params);

}  // namespace pto::compiler::testing

#endif  // PTO_COMPILER_TESTING_KERNEL_RUNNER_H_
