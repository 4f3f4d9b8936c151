// BF16 on the Ascend target: BF16 values live in f32 tiles (as FP16 ones
// do), so what BF16 needs is its GM moves and the rounding of each BF16
// result. Each is emitted twice, chosen by `#if PTO_BF16_NATIVE` in the
// generated source (Bf16Preamble defines it):
//   - native (a device build, `!defined(__CPU_SIM)`, or a CPU simulation
//     whose bfloat16_t is std::bfloat16_t, CPU_SIM_BFLOAT_ENABLED: g++ >= 14
//     with C++23): a bfloat16_t staging tile, TLOAD/TSTORE of bfloat16_t
//     GlobalTensors and TCVT between it and the f32 tile (CAST_RINT to
//     BF16, CAST_NONE back), as the ISA documents;
//   - words (the CPU simulation on g++ 12, whose bfloat16_t is _Float16):
//     BF16 GM data moved as int16_t words, and each word's f32 bits built
//     or read in int32 tiles: widening is `v * 65536` of the word's signed
//     value v, narrowing the host's round to nearest even on the f32 bits w
//     (`hi = w >> 16` arithmetic, `hi + ((w & 0xFFFF) + (hi & 1) + 0x7FFF
//     >> 16)`; a NaN `hi | 0x40`, quiet, its sign and payload kept), exact
//     and bit for bit the host's FloatToBf16. PTO-ISA's TRESHAPE keeps float
//     and integer element types apart and the simulation ignores TASSIGN
//     (each tile owns its storage), so f32 bits pass to and from int32
//     tiles through a GM workspace instead (TSTORE one type, TLOAD the other,
//     MTE3 -> MTE2): a local array in the simulation, which is the only
//     build of this path.
#ifndef PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_H_
#define PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_H_

#include <string>

#include "compiler/targets/ascend/ascend_int_math.h"

namespace pto::compiler::ascend {

// The pipes the BF16 moves cross.
enum class Bf16Pipe { kMte2, kV, kMte3 };

// A tile's shape: full, a row tile ([rows, 1], ColMajor) or a column tile
// ([1, cols]).
enum class Bf16Tile { kFull, kRow, kCol };

// What the BF16 code emits through: the block function being generated.
class Bf16Code : public IntVectorCode {
 public:
  // set_flag/wait_flag from the pipe of the last statement to `next`.
  virtual void SyncTo(Bf16Pipe next) = 0;
  // The pipe of the last statement, and setting it back (each `#if` branch
  // starts from the same pipe).
  virtual Bf16Pipe PipeNow() const = 0;
  virtual void SetPipeNow(Bf16Pipe p) = 0;
  // A bfloat16_t staging tile (native) and an int16_t one (words) of the
  // shape.
  virtual std::string Bf16Stage(Bf16Tile shape) = 0;
  virtual std::string Int16Stage(Bf16Tile shape) = 0;
  // An f32 scratch tile of the row or column tiles' shape.
  virtual std::string ScratchF32(Bf16Tile shape) = 0;
  // GlobalTensors over the workspace of one full tile: f32 and int32 views
  // of the same bytes (words path only).
  virtual std::string WorkspaceF32() = 0;
  virtual std::string WorkspaceI32() = 0;
  // Appends a preprocessor line (not indented).
  virtual void Directive(const std::string& line) = 0;
  // Says that the words path calls `bf16_round(tile)` on full tiles, the
  // lambda EmitBf16RoundFunction's statements make (one copy of the
  // composition per function keeps the simulation's build short).
  virtual void UseBf16RoundFunction() = 0;
};

// The lines after the PTO-ISA include that define PTO_BF16_NATIVE (1 where
// bfloat16_t is a real BF16 type) and PtoBf16Round, a scalar's rounding to
// BF16 (the host's, nearest even, NaN quiet).
std::string Bf16Preamble();

// The f32 tile `t` of the shape (full or row) = the BF16 values of GM (`g`:
// the bfloat16_t GlobalTensor, `words`: the int16_t one over the same
// elements; a row tile's words widened in a full tile, TROWEXPAND, and taken
// back by TROWMAX, exact on their equal values).
void EmitBf16Load(Bf16Code& code, const std::string& t, Bf16Tile shape, const std::string& g,
                  const std::string& words);

// GM = the f32 tile `t` of the shape rounded to BF16 (a row or column
// tile's words computed in a full tile, TROWEXPAND or TCOLEXPAND, and taken
// back by TROWMAX or TCOLMAX, exact on their equal integer values).
void EmitBf16Store(Bf16Code& code, const std::string& t, Bf16Tile shape, const std::string& g,
                   const std::string& words);

// The full f32 tile `t` rounded to BF16 in place (words path: a call of
// bf16_round).
void EmitBf16Round(Bf16Code& code, const std::string& t);

// The words path's rounding of the full f32 tile `x` in place, from and to
// PIPE_V: bf16_round's statements.
void EmitBf16RoundFunction(Bf16Code& code, const std::string& x);

}  // namespace pto::compiler::ascend

#endif  // PTO_COMPILER_TARGETS_ASCEND_ASCEND_BF16_H_
