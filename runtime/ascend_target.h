// Names of Ascend targets and what this runtime does with their kernels.
//
//   ascend-a2a3          PTO-ISA code built by CANN's bisheng for an Atlas
//                        A2/A3 NPU (a device object). This runtime has no
//                        device launcher: VerifyBinary refuses such a binary
//                        with an error that says so (AscendDeviceRefusal).
//   ascend-a2a3-cpusim   the same PTO-ISA source built against the PTO-ISA
//                        library's CPU simulation into a shared object with
//                        the host kernel ABI (kernel_abi.h): the executor runs
//                        it as it runs a host kernel, on any machine.
//
// The seam where a device launch goes is AscendDeviceLauncher below: one
// interface, with no implementation in this build (a machine with an NPU
// provides one over ACL's aclrtLaunchKernel or PyPTO's scheduler).
#ifndef PTO_RUNTIME_ASCEND_TARGET_H_
#define PTO_RUNTIME_ASCEND_TARGET_H_

#include <cstdint>
#include <string>

namespace pto::runtime {

inline constexpr char kAscendA2A3Target[] = "ascend-a2a3";
inline constexpr char kAscendA2A3CpuSimTarget[] = "ascend-a2a3-cpusim";

// Whether `target` is an Ascend CPU-simulation target (runnable here).
bool IsAscendCpuSimTarget(const std::string& target);

// Whether `target` names an Ascend device (NPU) target.
bool IsAscendDeviceTarget(const std::string& target);

// Why a device object for `target` does not run here (no NPU launcher in
// this runtime), naming the CPU-simulation target that does.
std::string AscendDeviceRefusal(const std::string& target);

// Launches one block of a device object on an NPU: `function` of the
// loaded object over `block_dim` AI cores, `args` its packed kernel
// arguments (GM pointers and int64 task args) in device memory. An
// implementation owns the ACL context and stream; Launch returns 0 on
// success or the ACL error code.
class AscendDeviceLauncher {
 public:
  virtual ~AscendDeviceLauncher() = default;
  virtual int Launch(const std::string& function, uint32_t block_dim, void* args,
                     uint64_t args_bytes) = 0;
};

}  // namespace pto::runtime

#endif  // PTO_RUNTIME_ASCEND_TARGET_H_
