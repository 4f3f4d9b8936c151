// How host codegen runs one PTO function on the CPU: how each instruction
// addresses GM (Access), which loads and stores skip their UB copy
// (DirectPlan), whether the function runs in chunks or one row at a time,
// and which instruction runs become one fused pto_tile.h row call (softmax's
// TSubExpSumRow and TSoftmaxRow, layer norm's row arithmetic, FP16 casts
// folded into the row's load and store). Each decision keeps the bits the
// plain one-instruction-at-a-time form gives. host_codegen.cc emits C++ from
// these decisions, through the emitter of the function's kind (host_emit.h).
#ifndef PTO_COMPILER_TARGETS_HOST_HOST_FUNCTION_PLAN_H_
#define PTO_COMPILER_TARGETS_HOST_HOST_FUNCTION_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/pto/pto_program.h"

namespace pto::compiler::host_plan {

// Extents and GM strides padded to four dims (leading 1s / 0 strides).
struct Access {
  std::vector<int64_t> extent4;   // E0..E3
  std::vector<int64_t> strides4;  // s0..s2 (s3 = 1, or 0 when bcast3)
  // The same as C++ expressions: a dynamic inner dim's stride is an arg.
  std::vector<std::string> strides4_text;
  bool bcast3 = false;            // the innermost dim is broadcast
  std::string offset;             // element offset expression from args
};

// `buf` as a load through a reshape addresses it: with the view shape.
PtoBuffer Viewed(const PtoBuffer& buf, const PtoInstr& in);

// The element type of the values tile `tile` holds where instruction i
// reads it: that of the last instruction before i that wrote it (UB storage
// is f32 for FP32, FP16 and BF16 alike), or `unwritten` if none did.
pto::v1::DataType ValueType(const PtoFunction& fn, int i, int tile,
                            pto::v1::DataType unwritten);

// How a function with tile extents `tile` addresses `buf` through `index`
// (one entry per buffer dim; empty: aligned to the tile's last dims, numpy
// broadcasting). Dims the buffer broadcasts along (size 1, or no buffer
// dim) get stride 0 and no offset term; a divided index addresses one slot
// per tile. `reduced_dim` (>= 0) has extent 1 (a reduction's result).
Access MakeAccess(const PtoBuffer& buf, const std::vector<int64_t>& tile,
                  std::vector<GmIndex> index, int reduced_dim,
                  const std::vector<int>& stride_dynamic = {});

// GM-direct operands. A TLOAD of f32 data that lies densely in GM needs no
// UB copy: the instructions read the tile where it is. An instruction whose
// result only a TSTORE reads (before the tile is next written) writes
// straight into GM when that store is f32 and dense (the TSTORE goes): each
// part of a concat stores from its producer. The last instruction's f16/bf16
// result only stored skips its own rounding (the store rounds the same
// way). Each copy saved is a pass over the tile's memory.
//
// A TLOAD of an f32 [C] operand broadcast down the tile's rows (gamma in a
// layer norm) is read in place too when every instruction reading it is a
// binary arithmetic one: their Rows form takes it as a column operand.
// Likewise an [R, 1] operand broadcast along the rows (a per-row scale) in
// an elementwise function run a whole tile at a time: it is loaded as R
// values, one per row, which the Rows forms repeat along each row (kRow),
// instead of R x C copies.
struct DirectPlan {
  std::vector<bool> load_in_place;  // per instruction: a TLOAD not copied
  std::vector<bool> load_columns;   // per instruction: ... as a column operand
  std::vector<bool> load_rows;      // per instruction: a TLOAD of one value per row
  std::vector<int> writes_store;    // per instruction: the TSTORE it replaces, or -1
  std::vector<int> unrounded;       // per instruction: 1 = emit without rounding
  std::vector<bool> elided;         // per instruction: a TSTORE not emitted
};

// The plan of a function of n instructions whose every operand goes
// through UB.
DirectPlan NoDirectOperands(int n);

// Run one row at a time (per_row), an access needs only contiguous rows.
DirectPlan PlanDirect(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, bool per_row);

// pto_tile.h's kRowChunk: the chunk of a row with a run-time length
// (host_emit.h EmitRuntimeRowFunction).
constexpr int64_t kRowChunkElements = 64;

// One pass per chunk. A function that only loads and stores dense tiles (of
// any dtype) and computes full-tile elementwise instructions runs them
// all on one chunk of kChunkElements at a time instead of one instruction
// over the whole tile at a time: f16 loads widen, the chain computes and the
// result narrows while the chunk is in registers, instead of a
// widening pass per operand, a pass per instruction and a narrowing pass over
// the whole UB tile. Every element goes through the same instructions, so
// results are the same bits. Casts are elementwise too (host codegen folds
// those between f32 and f16/bf16 into the chunk's load or store: FoldCasts);
// integer tensors compute in int64 tiles a chunk long (INT32 add 1024x1024:
// 192 KiB of whole int64 tiles, one pass each, ran at 0.36x torch).
// Only where there is a pass to save (a buffer that converts: f16/bf16,
// integer, BOOL, DOUBLE; or a chain of two or more instructions: one f32
// instruction already reads and writes GM in place), the tile is a whole number of chunks, and
// no buffer is both loaded and stored (a chunk's store could otherwise feed
// a later chunk's load).
// Returns the chunk's element count, or 0 where the function does not run in
// chunks.
int64_t ChunkElements(const PtoProgram& p, const PtoFunction& fn,
                      const std::function<bool(int)>& is_row, int64_t elems);

// One row at a time. A fused row group (softmax, layer norm: last-dim
// reductions into row tiles, then elementwise instructions reading them)
// runs all its instructions on one row of the tile before the next: the
// row's reductions, then its chain, while the row is in L1, instead of one
// pass over the whole tile per instruction. Full UB tiles shrink to one row
// and row tiles to one value; loads and stores address the row in GM, so a
// tile whose rows are not adjacent in GM (a 4x8x256 tile of a 32x32x1x256
// tensor) is read and written in place too. Each row goes through the same
// instructions in the same order (a row's reduction is the same ReduceRow),
// so results are the same bits. Only float UB tiles (f32, or f16/bf16 values
// held as f32), last-dim sum/max/min/prod
// reductions, no arange (it reads the tile offset), casts only between full
// float tiles (f16/bf16 -> f32 and f32 -> f16/bf16: pypto's FP16 softmax
// and rms_norm cast in, compute in f32 and cast out; a cast is elementwise,
// so a row of it is the tile's cast of that row), and no buffer both loaded
// and stored (a row's store could feed a later row's load).
//
// An elementwise function (no row tile) runs one row at a time too when its
// loads and stores are all f32 with contiguous rows and one of them is not
// dense (its rows lie apart in GM: a concat's part, a slice of a wider
// tensor, not a broadcast operand): per row that region is read or written
// in place instead of copied through a UB tile, if its rows are at least
// kMinPerRowElements long: a shorter row (a column view [R, 1] of a wider
// tensor) would cost each instruction's call per few values, so such a
// function runs a whole tile at a time through strided loads.
constexpr int64_t kMinPerRowElements = 16;
bool PerRow(const PtoProgram& p, const PtoFunction& fn,
            const std::function<bool(int)>& is_row, int rank, int64_t rows);

// Softmax's middle on one row (a per-row function, or a tile one row long):
// d = x - m (m a row tile), e = exp(d) (TEXP, or TEXPSOFTMAX), s = sum(e)
// along the row, all f32, with d read by nothing else. They become one
// TSubExpSumRow: one pass over the row instead of three, the same bits
// (pto_tile.h; kMaxOfX, softmax's exp, for a TEXPSOFTMAX). Returns whether
// the instructions at i, i+1, i+2 are such a triple.
bool FusesSubExpSum(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row,
                    const std::vector<bool>& columns, const DirectPlan& plan);

// A run of row arithmetic (a per-row function, or a tile one row long):
// consecutive f32 add/sub/mul/div/max/min instructions with a full
// destination (their sources full, row or column operands), optionally
// followed by a last-dim sum of the run's last result (rows of 32 or more
// values: ReduceRow's 16 lanes). Host codegen emits the run as one loop over
// the row computing each value through the instructions' own scalar forms
// (pto_tile's NAME##Fn::Apply, in order, each rounded to f32 as before) and
// adding it into the sum's lanes in the same order, so the bits are the
// same; a destination is written only if something reads it after the run
// (or it is the function's GM result). Fewer passes over the row: layer
// norm's x - mean, square, sum and its scale, gamma, beta.
struct RowRun {
  int length = 0;     // arithmetic instructions from i
  int sum = -1;       // the TREDSUM ending the run, or -1
};

// The run of row arithmetic that starts at instruction i, in a function
// whose rows hold `cols` values (length 0: none starts there).
RowRun FindRowRun(const PtoFunction& fn, int i, int64_t cols,
                  const std::function<bool(int)>& is_row, const std::vector<bool>& columns,
                  const DirectPlan& plan);

// Whether tile t's value after instruction `after` is read before it is
// written again.
bool ReadLater(const PtoFunction& fn, int after, int t);

// Whether the triple FusesSubExpSum found at i takes softmax's exp: its
// exp is a TEXPSOFTMAX (the lowering proved x - m <= 0 or NaN:
// lower/softmax_exp.h), so pto_tile's TSubExpSumRow<C, true> and
// TSubExpSumRowN<true>, whose bits TSoftmaxRow and TExpSoftmax give: static,
// dynamic, fused and whole-tile forms agree.
bool SoftmaxExpAt(const PtoFunction& fn, int i);

// Casts folded into a per-row function's loads and stores. A TCVT to f32
// of an f16/bf16 load's tile, read by nothing else, is the load itself (an
// f16/bf16 load already widens exactly into an f32 array): the load writes
// the cast's tile (load_into) and the cast goes. A TCVT from f32 to f16/bf16
// whose result only TSTOREs of that type read is their rounding (the store
// rounds to nearest even the same way, and rounding twice is rounding
// once): the stores read the cast's source and the cast goes. Fewer passes
// over the row (FP16 softmax: load, TSoftmaxRow, store), or over the chunk
// in chunked functions.
struct CastFolds {
  std::vector<int> load_into;  // per instruction: a TLOAD's tile instead of its own, or -1
  std::vector<bool> folded;    // per instruction: a TCVT not emitted
};

CastFolds FoldCasts(const PtoProgram& p, const PtoFunction& fn, const DirectPlan& plan,
                    const std::function<bool(int)>& is_row);

// pypto's FP32 softmax on one row (a per-row function, or a tile one row
// long): m = max(x) along the row, FusesSubExpSum's x - m, exp (a
// TEXPSOFTMAX: TSoftmaxRow's exp is softmax's) and sum,
// r = 1 / s and o = e * r (written straight into GM, or into its UB tile:
// the FP16/BF16 softmax's row, cast and stored after it), with m, e, s and
// r read by nothing else. They become one TSoftmaxRow: the same bits
// (pto_tile.h), the row kept in registers where it fits. Returns whether
// the instructions at i .. i+5 are such a run.
bool FusesSoftmaxRow(const PtoFunction& fn, int i, const std::function<bool(int)>& is_row,
                     const std::vector<bool>& columns, const DirectPlan& plan);

// "i0 * s0 + ..": the GM offset of the row (i0, i1, i2) of a per-row access
// (" + " first; empty when every row is at the same place).
std::string RowOffset(const Access& a);

// What a per-row function prefetches during a row's first pass over data
// already in L1 (softmax's fused exp pass, or the first run of row
// arithmetic ending in a sum: layer norm's x - mean), one cache line per 16
// values: the next row of each f32 input read in place (its first pass then
// finds it in cache), and, for writing, this row of each f32 result written
// straight into GM, so that the stores at the row's end find their lines
// owned instead of each waiting for a read-for-ownership.
struct RowPrefetch {
  std::vector<std::string> reads;   // const float* expressions
  std::vector<std::string> writes;  // float* expressions
};

RowPrefetch RowPrefetches(const PtoProgram& p, const PtoFunction& fn, const DirectPlan& plan);

}  // namespace pto::compiler::host_plan

#endif  // PTO_COMPILER_TARGETS_HOST_HOST_FUNCTION_PLAN_H_
