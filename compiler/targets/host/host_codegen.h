// PTO program -> C++ source for host targets.
//
// The source includes "pto_tile.h" and "kernel_abi.h" (embedded headers),
// defines one static function per PTO function, and exports only the ABI:
// pto_abi_version, pto_num_blocks, pto_block. Identifiers in the source are
// generated (pto_f0, t0, ...); no name from the graph appears in it.
#ifndef PTO_COMPILER_TARGETS_HOST_HOST_CODEGEN_H_
#define PTO_COMPILER_TARGETS_HOST_HOST_CODEGEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"

namespace pto::compiler {

absl::StatusOr<std::string> GenerateHostCpp(const PtoProgram& program);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_HOST_CODEGEN_H_
