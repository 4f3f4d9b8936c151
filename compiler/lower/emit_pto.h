// Block Graph -> PTO program: each block function's group body, specialised
// to the function's tile extents, with GM tensors replaced by their buffers.
#ifndef PTO_COMPILER_LOWER_EMIT_PTO_H_
#define PTO_COMPILER_LOWER_EMIT_PTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/block_graph.h"
#include "compiler/pto/pto_program.h"

namespace pto::compiler {

absl::StatusOr<PtoProgram> EmitPto(const BlockGraph& blocks,
                                   const std::string& target);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_LOWER_EMIT_PTO_H_
