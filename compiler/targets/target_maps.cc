#include "compiler/targets/target_maps.h"

#include "absl/strings/str_cat.h"
#include "compiler/pto/opcode.h"
#include "compiler/targets/ascend/ascend_unmapped.h"
#include "compiler/targets/target.h"
#include "compiler/util/strings.h"
#include "runtime/ascend_target.h"

namespace pto::compiler {

absl::StatusOr<bool> TargetMaps(const std::string& target, const std::string& instruction) {
  static constexpr PtoOpcode kAll[] = {
#define PTO_OPCODE_VALUE(e, name, fn, srcs, scalars) PtoOpcode::e,
      PTO_OPCODES(PTO_OPCODE_VALUE)
#undef PTO_OPCODE_VALUE
  };
  const PtoOpcode* op = nullptr;
  for (const PtoOpcode& candidate : kAll) {
    if (instruction == PtoOpcodeName(candidate)) op = &candidate;
  }
  if (op == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown PTO instruction ", Quote(instruction),
                     " (pto/opcode.h names them: TLOAD, TADD, TIMG2COL, ...)"));
  }
  absl::StatusOr<std::string> resolved = ResolveTargetName(target);
  if (!resolved.ok()) return resolved.status();
  if (runtime::IsAscendCpuSimTarget(*resolved) || runtime::IsAscendDeviceTarget(*resolved)) {
    return AscendUnmappedReason(*op) == nullptr;
  }
  return true;
}

}  // namespace pto::compiler
