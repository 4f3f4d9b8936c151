#include "compiler/targets/ascend/ascend_unmapped.h"

namespace pto::compiler {

const char* AscendUnmappedReason(PtoOpcode op) {
  switch (op) {
    case PtoOpcode::kTImg2Col:
      // PTO-ISA's TIMG2COL exists, but the CPU simulation this target is
      // checked on has no implementation of it.
      return "(a conv's matmul reading its feature map) is not mapped: the PTO-ISA CPU "
             "simulation does not implement TIMG2COL; a pypto.conv traced for this target "
             "(codegen_options[\"target\"] or PYPTO_TARGET) is a plain matmul over im2col "
             "views instead";
    case PtoOpcode::kTPhilox:
      // Its words are 32-bit integer products that the target's f32 tiles
      // do not hold.
      return "(philox: pypto.uniform and pypto.normal's Philox4x32-10 words) is a host "
             "instruction with no PTO-ISA form; random numbers run on host targets only";
    case PtoOpcode::kTPhiloxNormal:
      return "(philox_normal: pypto.normal's Box-Muller of Philox4x32-10 words) is a host "
             "instruction with no PTO-ISA form; random numbers run on host targets only";
    default:
      return nullptr;
  }
}

}  // namespace pto::compiler
