// Whether a target maps a PTO instruction, for a front end that records
// another form where it does not (pypto.conv without TIMG2COL): answered
// from the target's own list, the one its code generators refuse by
// (ascend/ascend_unmapped.h for the Ascend targets; host targets map every
// instruction).
//
//   TargetMaps("ascend-a2a3", "TIMG2COL")   // false
#ifndef PTO_COMPILER_TARGETS_TARGET_MAPS_H_
#define PTO_COMPILER_TARGETS_TARGET_MAPS_H_

#include <string>

#include "absl/status/statusor.h"

namespace pto::compiler {

// Whether the target `target` names (ResolveTargetName) maps the PTO
// instruction named `instruction` ("TIMG2COL": pto/opcode.h's names) in
// some form; false for one its code generator refuses in every form.
// INVALID_ARGUMENT for an unknown instruction; ResolveTargetName's errors.
absl::StatusOr<bool> TargetMaps(const std::string& target, const std::string& instruction);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_TARGET_MAPS_H_
