// BF16 matmul operands on the Ascend target's CPU simulation. The
// simulation's TMATMUL takes f16 and f32 operands only (and its bfloat16_t
// may be _Float16, ascend_bf16.h), so there each K step's BF16 blocks are
// widened exactly to f32 and the f32 x f32 -> f32 TMATMUL multiplies them:
// products of two BF16 values are exact in f32, so the result is the
// host's within the matmul tolerance. A block's BF16 words are loaded as
// int16_t into UB, widened as ascend_bf16.h's words form widens (`TCVT` to
// f32 and to int32, `TMULS 65536`: the f32 bits) and stored as int32 into a
// GM workspace, which the step's L1 tile then loads as f32: A2/A3 has no
// UB -> L1 path. The workspace is a local array, so this form is built only
// for the simulation; a device build takes bfloat16_t L1/L0A/L0B tiles and
// the ISA's bf16 x bf16 -> f32 TMATMUL (ascend_cube_codegen.h).
//
// An f16 or bf16 result: a device build's TSTORE from the L0C tile converts
// the f32 sums in the fixpipe; the simulation's TSTORE moves an Acc tile's
// f32 as it is, so there the sums go to a GM workspace, into UB, and are
// rounded there (HalfResultSimStore).
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_MATMUL_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_MATMUL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pto::compiler::ascend {

// One BF16 operand's step block as GM stores it: [rows x cols] (A, or B
// transposed: [m x kc] or [n x kc]; transposed A or B: [kc x m] or
// [kc x n]), its rows `ld` elements apart.
struct Bf16CubeOperand {
  std::string name;          // "a" or "b": names its tiles and workspace
  int buffer = -1;           // its GM buffer (`b<buffer>`, __gm__ bfloat16_t*)
  std::string offset;        // the task's first element in that buffer
  std::string step;          // elements one K step moves the block (in `k`)
  std::string rows, cols;    // the step's extents (C++ expressions)
  int64_t pad_rows = 0, pad_cols = 0;  // padded to the cube's fractal
  int64_t ld = 0;
};

// The operand's declarations before the K loop: its UB staging tiles, its
// workspace (`ws_<name>`, int32) and `wsf_<name>`, the workspace's f32
// pointer from which the step's L1 tile loads with rows `pad_cols` apart.
// The staging's UB bytes and the workspace's size are checked:
// UNIMPLEMENTED naming `function`, TMATMUL, the operand, its block and the
// bytes where they overflow or exceed the UB.
absl::StatusOr<std::string> Bf16CubeDeclarations(const Bf16CubeOperand& op,
                                                 int function);

// The step's statements, from PIPE_MTE2 to PIPE_MTE2: the block's words
// loaded, widened and stored as f32 bits in the workspace.
std::string Bf16CubeWiden(const Bf16CubeOperand& op);

// The simulation's store of the f32 L0C tile `l0c` ([m x n] valid of
// [mp x np]) as f16 (`bf16` false) or bf16 into `gc`, the result's
// GlobalTensor (rows `ldc` apart, at `offset` in buffer `buffer`), after
// PIPE_M -> PIPE_FIX: `TSTORE` into the workspace `ws_c`, `TLOAD` into an
// f32 UB tile, `TCVT` (CAST_RINT, nearest even) into an f16 (bfloat16_t)
// tile, `TSTORE`. The f32 and f16 tiles take 6 bytes an element of the
// padded tile, within the UB wherever the f32 one fits L0C. BF16 where the
// simulation's bfloat16_t is not a BF16 type (`!PTO_BF16_NATIVE`, ascend_bf16.h):
// each workspace value rounded by PtoBf16Round, the host's rounding, and its
// top 16 bits stored as the result's word (scalar code: that build is the
// simulation's only).
std::string HalfResultSimStore(bool bf16, int64_t m, int64_t n, int64_t mp, int64_t np,
                               int64_t ldc, int buffer, const std::string& offset);

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_MATMUL_H_
