// The Ascend target's cube functions (matmul): C[m x n] += A[m x K] B[K x n]
// through L1, L0A, L0B and L0C in PTO-ISA. Per L0 step of K: TLOAD A's and
// B's [m x kc] and [kc x n] blocks from GM into L1 (Mat tiles), TMOV them
// into L0A (TileLeft) and L0B (TileRight), TMATMUL (the first step) or
// TMATMUL_ACC into the L0C accumulator (TileAcc, f32); then TSTORE the
// accumulator to GM. set_flag/wait_flag order MTE2 -> MTE1 -> M, M back to
// MTE2 before the next step's loads, and M -> FIX before the store.
//
// L1 holds one L0 step (the program's L1 blocks of k_l1 are not kept:
// PTO-ISA's TEXTRACT takes a tile's tail from an index, not a slice, so a
// step is loaded from GM directly). Tile rows and columns are padded to
// the cube's 16-element fractal.
//
// A transposed operand (A stored [K x m], B stored [n x K]) is loaded through
// a DN GlobalTensor into a ColMajor Mat tile.
//
// BF16 operands: a device build has bfloat16_t L1/L0A/L0B tiles and the
// ISA's bf16 x bf16 -> f32 TMATMUL; the CPU simulation, whose TMATMUL takes
// f16 and f32 operands only, widens each step's blocks to f32 first
// (ascend_bf16_matmul.h). Both forms are in the source, chosen by
// `#if !defined(__CPU_SIM)`.
//
// An f16 or bf16 result: the device's TSTORE from L0C converts in the
// fixpipe; the simulation rounds in UB (ascend_bf16_matmul.h), under the
// same `#if`.
//
// UNIMPLEMENTED naming TMATMUL: a run-time K or tile extents or strides,
// operands other than f32/f16/bf16 (both the same) or a result other than
// f32/f16/bf16, a batched tile.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_CUBE_CODEGEN_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_CUBE_CODEGEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"

namespace pto::compiler {

// The `__global__ AICORE void pto_f<index>(...)` entry of cube function
// `index` (its parameters as ascend_codegen.h describes).
absl::StatusOr<std::string> EmitAscendCubeFunction(const PtoProgram& p, int index);

}  // namespace pto::compiler

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_CUBE_CODEGEN_H_
