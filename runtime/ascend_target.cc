#include "runtime/ascend_target.h"

namespace pto::runtime {

bool IsAscendCpuSimTarget(const std::string& target) {
  return target == kAscendA2A3CpuSimTarget;
}

bool IsAscendDeviceTarget(const std::string& target) {
  return target == kAscendA2A3Target;
}

std::string AscendDeviceRefusal(const std::string& target) {
  return "target '" + target +
         "' is an Ascend NPU device object and this runtime has no NPU launcher "
         "(runtime/ascend_target.h AscendDeviceLauncher); compile for '" + target +
         "-cpusim' to run the same PTO-ISA kernel on the CPU simulation";
}

}  // namespace pto::runtime
