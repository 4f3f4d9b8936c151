// Host C++ for cube (matmul) functions: the K loops of a PtoFunction with
// core CUBE as calls to pto_cube.h (TLOAD GM->L1, TMOV L1->L0A/L0B,
// TMATMUL/TMATMUL_ACC, TSTORE L0C->GM), with L0 tiles on the stack, L1 tiles
// of converted operands on the stack (on the heap past 256 KiB), and f32
// operands read in place. Tiles of at most 16 rows with B not transposed
// stream B's rows (f32 and bf16 from GM) without packing it. A bf16 task
// of more rows also carries, ahead of that path, a branch taken where the
// CPU reports AVX512-BF16 (pto_cube::CubeHasBf16Dot) that runs the whole
// task on VDPBF16PS (CubeMatmulBf16); on the AMX targets, bf16 tiles of
// more than 4 rows with a static K and leading dimensions run on AMX tiles
// (amx_codegen.h) instead.
#ifndef PTO_COMPILER_TARGETS_HOST_CUBE_CODEGEN_H_
#define PTO_COMPILER_TARGETS_HOST_CUBE_CODEGEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"

namespace pto::compiler {

// The function `pto_f<index>` for p.functions[index] (core CUBE).
absl::StatusOr<std::string> EmitCubeFunction(const PtoProgram& p, int index);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_HOST_CUBE_CODEGEN_H_
