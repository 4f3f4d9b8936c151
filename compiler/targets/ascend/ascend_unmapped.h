// The instructions the Ascend target maps in no form, and why: the one
// predicate its code generators refuse them by (ascend_codegen.cc,
// ascend_cube_codegen.cc) and TargetMaps (targets/target_maps.h) answers
// from, so pypto asks it instead of knowing it.
//
//   TIMG2COL   the CPU simulation the target is checked on has none
//   TPHILOX, TPHILOXNORMAL   this compiler's own instructions, with no
//              PTO-ISA form
//
// A mapped instruction may still be refused in some forms (a dtype, a row
// tile, ...), each such refusal naming why.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_UNMAPPED_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_UNMAPPED_H_

#include "compiler/pto/opcode.h"

namespace pto::compiler {

// Why the Ascend target maps `op` in no form (a phrase to follow the
// instruction's name in an UNIMPLEMENTED message), or nullptr when it maps it.
const char* AscendUnmappedReason(PtoOpcode op);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_UNMAPPED_H_
