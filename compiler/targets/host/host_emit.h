// The pieces of host codegen (host_codegen.cc) that emit one vector
// function. host_codegen.cc plans the function (PlanVectorFunction: the
// decisions are host_function_plan.h's) and hands it to the emitter of its
// kind, one per file:
//
//   whole tile  host_emit_whole_tile.cc    each instruction over the whole
//                                          tile (also run-time extents and
//                                          the index ops)
//   chunked     host_emit_chunked.cc       a loop over chunks of the tile
//                                          (host_plan::ChunkElements)
//   per row     host_emit_per_row.cc       loops over the tile's rows
//                                          (host_plan::PerRow)
//   run-time    host_emit_runtime_rows.cc  a fused row group over a symbolic
//   rows                                   last dim (RuntimeRows)
//
// The first three share InstructionEmitter, which writes the function's
// instructions in order (host_emit_instructions.cc, and the one-row
// fusions in host_emit_fused_rows.cc). Cube functions are cube_codegen.h's.
#ifndef PTO_COMPILER_TARGETS_HOST_HOST_EMIT_H_
#define PTO_COMPILER_TARGETS_HOST_HOST_EMIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/pto/pto_program.h"
#include "compiler/targets/host/host_function_plan.h"

namespace pto::compiler::host_emit {

// The C++ element type of a GM buffer of `dtype` (pto_tile.h's Elem<T>).
const char* GmType(pto::v1::DataType dtype);

// The C++ type of a UB tile of storage type `storage`.
const char* UbType(pto::v1::DataType storage);

// Scalar operand j of `in` (on tiles of storage type `storage` holding
// values of type `values`, in a function whose tile has rank `rank`): its
// immediate, or for a scalar over symbols (x * n: PtoInstr::scalar_dynamic)
// its int64 dynamic arg converted to the type the immediate would have.
// With FP16/BF16 values that arg is also rounded to their type (through
// f32, nearest even), as pypto rounds a Python number and torch an int
// meeting such a tensor (FP16 x * n at n = 2049 is x * 2048); the
// instruction then computes in f32 as with an immediate.
std::string ScalarOperand(const PtoInstr& in, size_t j, pto::v1::DataType storage,
                          pto::v1::DataType values, int rank);

// The integer arithmetic of pto_tile.h (int64 tiles) that takes the tensor's
// type to wrap its result to (INT32: 32 bits).
bool WrapsInt32(PtoOpcode op);

// "// @f<index>" and the opening of `pto_f<index>`.
std::string FunctionHeader(int index);

// How a vector function runs on the CPU.
enum class FunctionKind {
  kWholeTile,  // each instruction over the whole tile
  kChunked,    // every instruction on one chunk, chunk after chunk
  kPerRow,     // every instruction on one row, row after row
};

// A vector function with the decisions its code follows.
struct VectorFunction {
  const PtoProgram* p = nullptr;
  int index = 0;
  const PtoFunction* fn = nullptr;
  FunctionKind kind = FunctionKind::kWholeTile;
  int rank = 0;
  int64_t elems = 1;          // the tile's values
  int64_t cols = 1;           // its last extent: a row's values
  int64_t rows = 1;           // elems / cols
  std::vector<int64_t> tile4;  // the tile's extents padded to four dims
  host_plan::DirectPlan plan;  // GM-direct operands
  int64_t chunk = 0;          // kChunked: the values of one chunk
  int64_t n = 0;              // the values of a full tile as declared
  int64_t row_n = 0;          // the values of a row tile as declared
  // Instructions run on one row at a time (per row, or a row group's tile
  // one row long): the one-row fusions apply.
  bool one_row = false;

  // Whether UB tile t is a row tile (one value per row).
  bool IsRow(int t) const;
};

// Function `index` of `p` (a vector function, not RuntimeRows) planned.
absl::StatusOr<VectorFunction> PlanVectorFunction(const PtoProgram& p, int index);

// The line declaring g<i>, the GM address of load i read in place.
std::string InPlaceLoadPointer(const VectorFunction& f, int i);

// Those lines for every load read in place, in order (a frame's opening,
// before its loops).
std::string InPlaceLoadPointers(const VectorFunction& f);

// The arrays of the UB tiles, "alignas(64) <type> t<t>[<values(t)>];" each.
std::string TileArrays(const VectorFunction& f, const std::string& indent,
                       const std::function<int64_t(int)>& values);

// Writes a vector function's instructions in order, as its kind runs them,
// after the frame (the function's opening, its loops, its tile arrays)
// that the kind's emitter writes.
class InstructionEmitter {
 public:
  // `indent`: the instructions' indentation in the frame. Appends to *out.
  InstructionEmitter(const VectorFunction& f, std::string indent, std::string* out);

  // Every instruction of the function.
  absl::Status EmitBody();

 private:
  // Each returns the index of the last instruction it covered (a fused
  // run covers several).
  int InPlaceLoad(int i);
  int LoadOrStore(int i);
  int SoftmaxRow(int i);
  int SubExpSum(int i);
  int RowRunLoop(int i, const host_plan::RowRun& run);
  // The index ops (MGATHER, MSCATTER) and every other instruction.
  absl::Status Indexed(int i);
  absl::Status Call(int i);

  bool IsRow(int t) const { return f_.IsRow(t); }
  // The GM offset of this row of an access (per row only).
  std::string RowAt(const host_plan::Access& a) const;
  // ", <x's next row>" for x read in place per row, to prefetch; else "".
  std::string NextRow(int before, int x_tile) const;

  const VectorFunction& f_;
  const PtoProgram& p_;
  const PtoFunction& fn_;
  const std::string indent_;
  std::string* out_;
  // The C++ name of each UB tile's current value: its array, or a pointer
  // into GM (g<i>: a load read in place; o<i>: a result written there).
  std::vector<std::string> name_;
  std::vector<bool> columns_;     // value read in place as [C]
  std::vector<bool> row_values_;  // one value per row (DirectPlan::load_rows)
  host_plan::CastFolds folds_;    // chunked and per row: casts folded
  // Per row: prefetched once, in the row's first pass that can carry it.
  host_plan::RowPrefetch prefetch_;
  bool prefetch_pending_ = false;
};

// The function `pto_f<f.index>` of each kind.
absl::StatusOr<std::string> EmitWholeTileFunction(const VectorFunction& f);
absl::StatusOr<std::string> EmitChunkedFunction(const VectorFunction& f);
absl::StatusOr<std::string> EmitPerRowFunction(const VectorFunction& f);

// Row code with a run-time length (a fused row group over a symbolic last
// dim, expand_to_tiles.h ExpandOptions::symbolic_rows): whether function
// `fn` is one, and its code.
bool RuntimeRows(const PtoFunction& fn);
absl::StatusOr<std::string> EmitRuntimeRowFunction(const PtoProgram& p, int index);

}  // namespace pto::compiler::host_emit

#endif  // PTO_COMPILER_TARGETS_HOST_HOST_EMIT_H_
